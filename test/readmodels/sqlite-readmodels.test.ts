import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { auditCursor, auditQuery } from '../../src/readmodels/queries/audit';
import { foldQuery } from '../../src/readmodels/queries/run-query';
import { auditFromRows, auditSql, AUDIT_IX } from '../../src/readmodels/stored/audit-read-model';
import { READ_MODELS, readModelHost } from '../../src/readmodels/stored/registry';
import { ReadModelHost } from '../../src/readmodels/stored/host';
import { SqliteReadModelStorage, tableName } from '../../src/readmodels/stored/storage';
import { appendLog, generateLog } from './generate';
import { readModelConformance, Workspace } from './conformance';
import { withReadModels } from '../support/ledger-fixture';
import { SlotMap } from '../../src/slots';

const open = (dir: string): Workspace => {
  const store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'rm', synchronous: 'NORMAL' });
  return withReadModels({ id: 'rm', dir, store, cache: new SlotMap(), close: () => store.close() });
};

readModelConformance('sqlite', {
  fresh: async () => open(fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-'))),
  childArgs: (ws) => ['sqlite', ws.dir],
  reopen: async (ws) => open(ws.dir),
});

test('the read-model files beside the log (one per model, and the shared one) are private (0600, like the log), whatever the umask', async () => {
  const ws = open(fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-mode-')));
  const old = process.umask(0o022);
  try {
    const host = readModelHost(ws)!;
    await host.settle();
    await host.close();
    const files = fs.readdirSync(ws.dir).filter((n) => n.startsWith('readmodels.'));
    for (const name of ['readmodels.db', ...host.names.map((n) => `readmodels.${n}.db`)]) expect(files).toContain(name);
    for (const f of files) expect([f, fs.statSync(path.join(ws.dir, f)).mode & 0o777]).toEqual([f, 0o600]);
  } finally {
    process.umask(old);
    await ws.close();
  }
});

test('each audit filter reads its page through its index: no full scan, a sort only of index entries for a time range', async () => {
  const ws = open(fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-plan-')));
  try {
    await appendLog(ws.store, generateLog({ seed: 11, prs: 8, principals: 10, events: 400 }), 10);
    const host = readModelHost(ws)!;
    await host.settle();
    const slot = host.slot('audit')!;
    const head = await ws.store.headPosition();
    const ix = (n: number): string => `${tableName(slot, 'rows')}_ix${n}`;
    const cases: Array<[Record<string, unknown>, string, boolean]> = [
      // [filter, the index the page's positions come from, whether those entries are sorted]
      [{ actor: 'user:u1', limit: 100, order: 'desc' }, `USING COVERING INDEX ${ix(AUDIT_IX.actor)}`, false],
      [{ actor: 'user:u1', order: 'asc', limit: 50, cursor: auditCursor(auditQuery.input.parse({ actor: 'user:u1', order: 'asc' }), 10) }, `USING COVERING INDEX ${ix(AUDIT_IX.actor)}`, false],
      [{ action: 'confirm', limit: 100, order: 'desc' }, `USING COVERING INDEX ${ix(AUDIT_IX.action)}`, false],
      [{ action: 'confirm', since: '2025-01-01T00:03:00.000Z', limit: 100, order: 'desc' }, `USING COVERING INDEX ${ix(AUDIT_IX.actionTime)}`, true],
      [{ repoId: 'repo1', prNumber: 2, limit: 100 }, `USING COVERING INDEX ${ix(AUDIT_IX.repoPr)}`, false],
      [{ prNumber: 2, limit: 100 }, `USING COVERING INDEX ${ix(AUDIT_IX.pr)}`, false],
      [{ since: '2025-01-01T00:03:00.000Z', until: '2025-01-01T00:04:00.000Z', limit: 100 }, `USING COVERING INDEX ${ix(AUDIT_IX.time)}`, true],
    ];
    for (const [f, index, sorted] of cases) {
      const parsed = auditQuery.input.parse(f);
      const { sql, params } = auditSql(host.storage, slot, parsed, head);
      const plan = (await host.storage.query(`EXPLAIN QUERY PLAN ${sql}`, params)).map((r) => String(r.detail));
      expect({ f, plan }).toEqual({ f, plan: expect.arrayContaining([expect.stringContaining(index)]) });
      // The page's rows are then read by primary key, never by scanning the table.
      expect({ f, scans: plan.filter((d) => /^SCAN /.test(d)) }).toEqual({ f, scans: [] });
      expect({ f, sorted: plan.some((d) => d.includes('TEMP B-TREE')) }).toEqual({ f, sorted });
      expect(await auditFromRows(host.storage, slot, parsed, head)).toEqual((await foldQuery(auditQuery, ws, parsed)).value);
    }
    await host.close();
  } finally {
    await ws.close();
  }
});

test("a model's commit locks its own file only: the log and the other models' files take writes meanwhile", async () => {
  const ws = open(fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-locks-')));
  try {
    await appendLog(ws.store, generateLog({ seed: 3, prs: 4, principals: 6, events: 200 }), 10);
    const storage = new SqliteReadModelStorage('rm', ws.dir, path.join(ws.dir, 'workspace.db'));
    const slot = { name: 'audit', version: 99, generation: 1, position: 0, ready: false };
    const spec = { name: 't', columns: { position: 'int' as const }, key: ['position'] };
    await storage.slots('history');
    await storage.createSlot(slot, [spec]);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    // Can another connection take this file's write lock right now? (no waiting: busy at once)
    const writable = (file: string): number => {
      const other = new Database(path.join(ws.dir, file));
      other.pragma('busy_timeout = 0');
      try {
        other.exec('BEGIN IMMEDIATE; ROLLBACK');
        return 1;
      } catch {
        return 0;
      } finally {
        other.close();
      }
    };
    // Asked from inside the commit's transaction, by a function its statement calls (the storage's
    // connection is private: reached here only to register the probe).
    const db = (storage as unknown as { db: import('better-sqlite3').Database }).db;
    db.function('rm_test_writable', (file: unknown) => writable(String(file)));
    const probe = (file: string, i: number) => ({ sql: `INSERT INTO ${tableName(slot, 't')} (workspace_id, position) VALUES ('rm', ? * 10 + rm_test_writable(?))`, params: [i, file] });
    const files = ['workspace.db', 'readmodels.history.db', 'readmodels.db', 'readmodels.audit.db'];
    expect(await storage.commit(slot, [spec], new Map(), 0, 5, false, false, { prepare: [], apply: files.map(probe) })).toBe(true);
    // i * 10, plus 1 when the file was writable during the commit: only the slot's own file was locked.
    const rows = await storage.query(`SELECT position FROM ${tableName(slot, 't')} ORDER BY position`, []);
    expect(rows.map((r) => r.position)).toEqual([1, 11, 21, 30]);
    await storage.close();
  } finally {
    await ws.close();
  }
});

test("the models build independently: one whose batches are held back holds back no other's build and promotion", async () => {
  const ws = open(fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-independent-')));
  try {
    await appendLog(ws.store, generateLog({ seed: 5, prs: 10, principals: 8, events: 800 }), 50);
    const storage = new SqliteReadModelStorage('rm', ws.dir, path.join(ws.dir, 'workspace.db'));
    // The history build's batches do not commit until the audit is promoted — or 5 s have passed. When
    // every round of the host waited for every model's (as until session 31), the audit's build waited
    // behind the history's held-back batch and was promoted only after the timeout.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let timedOut = false;
    const timer = setTimeout(() => ((timedOut = true), release()), 5000);
    const commit = storage.commit.bind(storage);
    storage.commit = async (slot, ...rest) => {
      if (slot.name === 'history') await gate;
      return commit(slot, ...rest);
    };
    const promote = storage.promote.bind(storage);
    const promoted: string[] = [];
    storage.promote = async (winner, ...rest) => {
      await promote(winner, ...rest);
      promoted.push(winner.name);
      if (winner.name === 'audit') release();
    };
    const host = new ReadModelHost(ws.store, storage, READ_MODELS, { batch: 100, bulkChunk: 100 });
    try {
      await host.settle();
      clearTimeout(timer);
      expect({ timedOut, promoted: promoted.indexOf('audit') < promoted.indexOf('history') }).toEqual({ timedOut: false, promoted: true });
      // Held back, the history build is still whole: what a rebuild from 0 gives (its gate open now).
      const built = await host.dump('history');
      await host.rebuild('history');
      expect(await host.dump('history')).toBe(built);
    } finally {
      clearTimeout(timer);
      await host.close();
    }
  } finally {
    await ws.close();
  }
});
