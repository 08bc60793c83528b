import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '../../src/events/store/sqlite';
import { auditCursor, auditQuery } from '../../src/projections/audit';
import { foldQuery } from '../../src/projections/run-query';
import { auditFromRows, auditSql, AUDIT_IX } from '../../src/readmodels/audit';
import { readModelHost } from '../../src/readmodels/registry';
import { tableName } from '../../src/readmodels/storage';
import { appendLog, generateLog } from './generate';
import { readModelConformance, Workspace } from './conformance';

const open = (dir: string): Workspace => {
  const store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'rm', synchronous: 'NORMAL' });
  return { id: 'rm', dir, store, cache: new Map(), close: () => store.close() };
};

readModelConformance('sqlite', {
  fresh: async () => open(fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-'))),
  childArgs: (ws) => ['sqlite', ws.dir],
  reopen: async (ws) => open(ws.dir),
});

test('the read-model file beside the log is private (0600, like the log), whatever the umask', async () => {
  const ws = open(fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-mode-')));
  const old = process.umask(0o022);
  try {
    const host = readModelHost(ws)!;
    await host.settle();
    await host.close();
    for (const f of fs.readdirSync(ws.dir).filter((n) => n.startsWith('readmodels.db'))) expect([f, fs.statSync(path.join(ws.dir, f)).mode & 0o777]).toEqual([f, 0o600]);
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
