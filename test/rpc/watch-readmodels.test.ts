import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { canonicalJson } from '../../src/events/canonical-json';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { auditQuery } from '../../src/readmodels/queries/audit';
import type { QueryDefinition } from '../../src/readmodels/queries/query';
import { foldQuery } from '../../src/readmodels/queries/run-query';
import { readModelHost } from '../../src/readmodels/stored/registry';
import { WatchHub, type WatchSink, type WatchUpdate } from '../../src/rpc/watch';
import type { WorkspaceHandle } from '../../src/workspaces/registry';
import { appendLog, generateLog } from '../readmodels/generate';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { withReadModels } from '../support/ledger-fixture';
import { SlotMap } from '../../src/slots';

type Opened = WorkspaceHandle & { close(): Promise<void> };

const openSqlite = async (): Promise<Opened> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-watch-rm-'));
  const store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'rm', synchronous: 'NORMAL' });
  return withReadModels({ id: 'rm', dir, store, cache: new SlotMap(), close: () => store.close() });
};

const openPostgres = (schema: string) => async (): Promise<Opened> => {
  const backend = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
  const store = await PostgresEventStore.open({ backend, workspaceId: 'rm' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-watch-rm-pg-'));
  return withReadModels({
    id: 'rm',
    dir,
    store,
    cache: new SlotMap(),
    close: async () => {
      await store.close();
      await backend.close();
      await dropSchema(schema);
    },
  });
};

/**
 * The audit query itself, except that folding it fails: a watch that answers (snapshot, updates,
 * resume) never folded the log — every answer came from the read model's rows.
 */
const unfoldableAudit: QueryDefinition = {
  ...auditQuery,
  fold: () => {
    throw new Error('folded the log');
  },
};

const sinkInto = (updates: WatchUpdate[]): WatchSink => ({
  send: (u) => updates.push(u),
  congested: () => false,
  onDrain: (cb) => cb(),
  fail: (err) => {
    throw err;
  },
});

async function until(cond: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function watchFromModel(name: string, open: () => Promise<Opened>): void {
  describe(`${name}: watch subscriptions of workspace-wide queries answer from their read model`, () => {
    jest.setTimeout(120_000);
    let ws: Opened;
    const appends = [...generateLog({ seed: 21, prs: 10, principals: 12, events: 900 })];

    beforeAll(async () => {
      ws = await open();
      await appendLog(ws.store, appends.slice(0, 600), 10);
      await readModelHost(ws)!.settle();
    });
    afterAll(async () => {
      await readModelHost(ws)?.close();
      await ws.close();
    });

    test('snapshot and every update equal the fold at their positions, with no fold of the log; a resume gets exactly the updates a live watcher got', async () => {
      const hub = new WatchHub();
      const input = auditQuery.input.parse({ order: 'desc', limit: 5 });
      const updates: WatchUpdate[] = [];
      const start = await hub.watch(ws, unfoldableAudit, input, undefined, sinkInto(updates));
      start.watcher.start();
      const at = start.snapshot!.position;
      expect(at).toBe(await ws.store.headPosition());
      expect(JSON.parse(start.snapshot!.valueJson)).toEqual((await foldQuery(auditQuery, ws, input, at)).value);

      // Appends land while it watches: each update is the answer exactly as of its position.
      for (let i = 600; i < appends.length; i += 30) await appendLog(ws.store, appends.slice(i, i + 30), 5);
      const head = await ws.store.headPosition();
      const final = canonicalJson((await foldQuery(auditQuery, ws, input, head)).value);
      await until(() => updates.length > 0 && updates[updates.length - 1].valueJson === final);
      expect(updates.length).toBeGreaterThan(1);
      let previous = at;
      for (const u of updates) {
        expect(u.position).toBeGreaterThan(previous);
        previous = u.position;
        expect({ position: u.position, value: JSON.parse(u.valueJson) }).toEqual({ position: u.position, value: (await foldQuery(auditQuery, ws, input, u.position)).value });
      }

      // Every change is its own update: none coalesced, live or on resume.
      expect(updates.every((u) => !u.coalesced)).toBe(true);
      // Resume from the snapshot's position: each missed change, in order, as the live watcher got it.
      const resumed: WatchUpdate[] = [];
      const again = await hub.watch(ws, unfoldableAudit, input, at, sinkInto(resumed));
      again.watcher.start();
      expect(again.snapshot).toBeUndefined();
      const strip = (us: WatchUpdate[]) => us.map((u) => ({ position: u.position, valueJson: u.valueJson, coalesced: u.coalesced }));
      expect(strip(resumed)).toEqual(strip(updates));
      // From a position in the middle: the suffix.
      const mid: WatchUpdate[] = [];
      const fromMid = await hub.watch(ws, unfoldableAudit, input, updates[0].position, sinkInto(mid));
      fromMid.watcher.start();
      expect(strip(mid)).toEqual(strip(updates.slice(1)));
      fromMid.watcher.close();
      start.watcher.close();
      again.watcher.close();
      hub.close();
    });

    test('pages in log order, filtered, and after a cursor are advanced from the new rows too: every update equals the fold at its position', async () => {
      const hub = new WatchHub();
      const actor = 'user:u1';
      const first = (await foldQuery(auditQuery, ws, auditQuery.input.parse({ order: 'asc', limit: 3 }))).value;
      const inputs = [
        // Room left on the page: new rows of this actor are appended at its end.
        auditQuery.input.parse({ actor, order: 'asc', limit: 1000 }),
        // A full page in log order: new rows land past it, only `next` may appear.
        auditQuery.input.parse({ order: 'asc', limit: 3 }),
        auditQuery.input.parse({ order: 'asc', limit: 3, cursor: first.next! }),
        auditQuery.input.parse({ action: 'confirm', limit: 7 }),
      ];
      const watches = [];
      for (const input of inputs) {
        const updates: WatchUpdate[] = [];
        const start = await hub.watch(ws, unfoldableAudit, input, undefined, sinkInto(updates));
        start.watcher.start();
        expect(JSON.parse(start.snapshot!.valueJson)).toEqual((await foldQuery(auditQuery, ws, input, start.snapshot!.position)).value);
        watches.push({ input, start, updates });
      }
      const more = [...generateLog({ seed: 22, prs: 10, principals: 12, events: 300 })].slice(40);
      for (let i = 0; i < more.length; i += 25) await appendLog(ws.store, more.slice(i, i + 25), 5);
      const head = await ws.store.headPosition();
      for (const w of watches) {
        const final = canonicalJson((await foldQuery(auditQuery, ws, w.input, head)).value);
        const current = () => (w.updates.length ? w.updates[w.updates.length - 1].valueJson : w.start.snapshot!.valueJson);
        await until(() => current() === final);
        for (const u of w.updates) expect({ input: w.input, position: u.position, value: JSON.parse(u.valueJson) }).toEqual({ input: w.input, position: u.position, value: (await foldQuery(auditQuery, ws, w.input, u.position)).value });
        w.start.watcher.close();
      }
      // The actor's page grew; the full page in log order stayed the same rows.
      expect(watches[0].updates.length).toBeGreaterThan(0);
      expect(JSON.parse(watches[1].updates[watches[1].updates.length - 1]?.valueJson ?? watches[1].start.snapshot!.valueJson).rows).toEqual(first.rows);
      hub.close();
    });
  });
}

watchFromModel('sqlite', openSqlite);
whenPostgres('postgres watch from read models', () => watchFromModel('postgres', openPostgres(uniqueSchema('rl_watch_rm'))));
