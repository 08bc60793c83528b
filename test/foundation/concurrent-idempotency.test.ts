import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CommandDefinition, CommandExecutor, CommandOutcome } from '../../src/commands/kernel';
import { newUuidV7 } from '../../src/events/ids';
import { collect } from '../../src/events/store/port';
import { loadConfig } from '../../src/config';
import { Ledger } from '../../src/ledger';
import type { WorkspaceHandle } from '../../src/workspaces/registry';
import { postgresStoreFactory } from '../../src/workspaces/store-factories';
import type { WorkspaceState } from '../../src/workspaces/workspace-state';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';
import { setLevel, type Level } from '../support/test-commands';
import { SlotMap } from '../../src/slots';

const LEVELS: Level[] = ['light', 'balanced', 'thorough'];


/** A stream per payload: the losers' appends meet the winner's ids in another stream. */
const setLevelElsewhere: CommandDefinition<{ level: Level }, WorkspaceState> = { ...setLevel, name: 'testSetLevelElsewhere', stream: (i) => `levels-${i.level}` };

/** Decides nothing for `light` (a no-op whose key is spent) and one event otherwise. */
const maybeNoop: CommandDefinition<{ level: Level }, WorkspaceState> = {
  ...setLevel,
  name: 'testMaybeNoop',
  decide: (_s, cmd) => (cmd.level === 'light' ? [] : [{ type: 'ReviewLevelSet', data: { level: cmd.level } }]),
  result: (events) => ({ level: events.length ? (events[0].data as { level: string }).level : 'unchanged' }),
};

interface Process {
  executor: CommandExecutor;
  handle: WorkspaceHandle;
}

/**
 * Sends one key at once with three different payloads (one per process, round robin) and checks the
 * record: exactly one caller is told "recorded", every other one `idempotency_key_reused`, and what the
 * winner was told is what the log holds — its own payload, stored once.
 */
async function raceOneKey(def: CommandDefinition<{ level: Level }, WorkspaceState>, processes: Process[], read: () => Promise<Array<{ eventId: string; type: string; data: unknown }>>) {
  const key = newUuidV7();
  const settled = await Promise.allSettled(LEVELS.map((level, i) => processes[i % processes.length].executor.execute(def, processes[i % processes.length].handle, { ...OWNER, idempotencyKey: key }, { level })));
  const acked = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [{ level: LEVELS[i], out: s.value as CommandOutcome }] : []));
  const refused = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as { code?: string; message?: string }] : []));
  expect(refused.map((r) => r.code ?? r.message)).toEqual(Array(LEVELS.length - acked.length).fill('idempotency_key_reused'));
  expect(acked).toHaveLength(1);
  const [{ level, out }] = acked;
  expect(out.response.result).toEqual({ level: def === maybeNoop && level === 'light' ? 'unchanged' : level });
  const log = await read();
  const stored = log.filter((e) => out.response.eventIds.includes(e.eventId));
  expect(stored.map((e) => e.data)).toEqual(out.response.eventIds.map(() => ({ level })));
  // Nothing of the losers: the key's ids are the winner's only.
  expect(log.filter((e) => e.eventId === key)).toHaveLength(out.response.eventIds.length ? 1 : 0);
  return level;
}

describe('one idempotency key sent at once with different payloads: one answer, what it says is stored (SQLite)', () => {
  for (const def of [setLevel, setLevelElsewhere, maybeNoop]) {
    test(`${def.name}: one executor, 20 groups`, async () => {
      const f = await ledgerFixture({ workspaceId: 'acme' });
      const ws = await f.ledger.workspace('acme');
      const read = () => f.events();
      for (let g = 0; g < 20; g++) await raceOneKey(def, [{ executor: f.ledger.executor, handle: ws }], read);
      await f.cleanup();
    });

    test(`${def.name}: three "processes" (own executors and caches) on one store, 20 groups`, async () => {
      const f = await ledgerFixture({ workspaceId: 'acme' });
      const ws = await f.ledger.workspace('acme');
      const processes = Array.from({ length: 3 }, () => ({ executor: new CommandExecutor(), handle: { ...ws, cache: new SlotMap() } }));
      for (let g = 0; g < 20; g++) await raceOneKey(def, processes, () => f.events());
      await f.cleanup();
    });
  }

  test('two servers on one data dir (separate SQLite connections): a no-op key spent on one is refused on the other with another payload', async () => {
    const f = await ledgerFixture({ workspaceId: 'acme' });
    const other = new Ledger(loadConfig({ dataDir: f.dataDir }, {}));
    const processes = [
      { executor: f.ledger.executor, handle: await f.ledger.workspace('acme') },
      { executor: other.executor, handle: await other.workspace('acme') },
    ];
    for (let g = 0; g < 10; g++) await raceOneKey(maybeNoop, processes, () => f.events());
    await other.close();
    await f.cleanup();
  });
});

whenPostgres('one idempotency key sent at once with different payloads (PostgreSQL, two servers)', () => {
  const schema = uniqueSchema('rl_idem');
  const dirs: string[] = [];
  const ledgers: Ledger[] = [];
  let processes: Process[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-idem-pg-'));
      dirs.push(dataDir);
      ledgers.push(new Ledger(loadConfig({ dataDir, store: 'postgres', databaseUrl: DATABASE_URL }, {}), { storeFactory: postgresStoreFactory(DATABASE_URL, schema) }));
    }
    await ledgers[0].createWorkspace({ ...OWNER, idempotencyKey: newUuidV7() }, { workspaceId: 'acme' });
    processes = await Promise.all(ledgers.map(async (l) => ({ executor: l.executor, handle: await l.workspace('acme') })));
  }, 60_000);

  afterAll(async () => {
    for (const l of ledgers) await l.close().catch(() => undefined);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    await dropSchema(schema);
  });

  for (const def of [setLevel, setLevelElsewhere, maybeNoop]) {
    test(`${def.name}: 20 groups across two servers`, async () => {
      for (let g = 0; g < 20; g++) await raceOneKey(def, processes, () => collect(processes[0].handle.store.readAll()));
    });
  }
});
