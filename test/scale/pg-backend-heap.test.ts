import * as fs from 'node:fs';
import { PostgresBackend, PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { adminQuery, DATABASE_URL, dropSchema, levelSetEvent, uniqueSchema, whenPostgres } from './pg-support';

/**
 * A group commit must not make PostgreSQL grow and shrink its backend's heap every transaction (issue 35):
 * traced under load, each commit's backend called brk three times and took ~36 page faults, about a
 * quarter of PostgreSQL's CPU per command — its transaction needs ~144 KiB above glibc's 128 KiB trim
 * threshold. The store raises that threshold on each pooled connection (RAISE_TRIM_THRESHOLD). What this
 * checks is the backend's page faults per commit, counted by the kernel (/proc/<pid>/stat, minflt): the
 * database runs on this machine in CI (.ci/run starts it), where its backends' /proc entries are readable.
 */
whenPostgres('postgres: a commit leaves its backend heap alone', () => {
  const schema = uniqueSchema('rl_heap');
  afterAll(() => dropSchema(schema));

  /** Minor page faults of every backend with this application_name (field 10 of /proc/<pid>/stat). */
  const faultsOf = async (app: string): Promise<number> => {
    const rows = await adminQuery<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = '${app}'`);
    expect(rows.length).toBeGreaterThan(0);
    let sum = 0;
    for (const { pid } of rows) {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command (which may hold spaces) start after its closing parenthesis.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      sum += Number(fields[7]);
    }
    return sum;
  };

  /** Page faults per group commit of one store's backend over 100 of them (20 more first, warming it up). */
  const faultsPerCommit = async (raiseTrimThreshold: boolean): Promise<number> => {
    const app = `${schema}_${raiseTrimThreshold ? 'raised' : 'default'}`;
    const url = new URL(DATABASE_URL);
    url.searchParams.set('application_name', app);
    const backend = await PostgresBackend.open({ connectionString: url.toString(), schema, poolSize: 1, raiseTrimThreshold, synchronousCommit: false }); // as bench:cluster's NORMAL
    try {
      const id = `heap-${raiseTrimThreshold}`;
      const store = await PostgresEventStore.open({ backend, workspaceId: id });
      // One group commit as under load: eight guarded appends of two events each, their data ~1.5 KiB of
      // JSON with quotes (each escaped in the array literal PostgreSQL parses), like addReviewNode's.
      const data = { note: '"q": "x", '.repeat(150) };
      await store.append('workspace', 'no_stream', [levelSetEvent(id)]);
      let rev = -1;
      const commit = async () => {
        await Promise.all(Array.from({ length: 8 }, (_, k) => store.append(`s${k}`, rev < 0 ? 'no_stream' : rev, [levelSetEvent(id, data), levelSetEvent(id, data)], { guard: { streamId: 'workspace', revision: 0 } })));
        rev += 2;
      };
      for (let i = 0; i < 20; i++) await commit();
      const before = await faultsOf(app);
      const commits = 100;
      for (let i = 0; i < commits; i++) await commit();
      return ((await faultsOf(app)) - before) / commits;
    } finally {
      await backend.close();
    }
  };

  it('page faults per group commit: a few with the threshold raised, many more without', async () => {
    const without = await faultsPerCommit(false);
    const raised = await faultsPerCommit(true);
    // Without: the heap's pages come and go with each commit (measured here: 38 per commit).
    expect(without).toBeGreaterThan(20);
    // Raised: what is left is first touches of shared buffers as the table grows (measured: 5 per commit).
    expect(raised).toBeLessThan(without / 4);
  });
});
