// npm run bench:pg-commit [-- --commits 400 --rounds 6 --database-url postgres://…]
// PostgreSQL's own cost of one group commit shaped like bench:cluster's (eight guarded appends of two events
// with ~1.5 KiB of quote-heavy JSON each, synchronous_commit off), with each connection's malloc trim threshold
// raised (the store's default, RAISE_TRIM_THRESHOLD) and without: the backend's CPU (utime + stime from
// /proc/<pid>/stat, so PostgreSQL must run on this machine) and its page faults per commit. The two stores
// have a backend each and run A B B A A B …, the same commits in the same schema.
import * as fs from 'node:fs';
import * as os from 'node:os';
import { Client } from 'pg';
import { PostgresBackend } from '../src/stores/postgres/backend';
import { PostgresEventStore } from '../src/stores/postgres/postgres-event-store';
import { levelSetEvent as event } from '../test/scale/pg-support';
import { loadAverage } from './support/abab';
import { argValue, median, round, table } from './support/report';

/** The kernel's clock ticks per second for /proc stat times (USER_HZ; 100 on Linux). */
const TICK_MS = 10;

/** A process's CPU (ms) and minor page faults so far, from /proc/<pid>/stat. */
function processCounters(pid: number): { cpuMs: number; faults: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which may hold spaces) start after its closing parenthesis: minflt is the 8th, utime and stime the 12th and 13th.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { cpuMs: (Number(f[11]) + Number(f[12])) * TICK_MS, faults: Number(f[7]) };
}

interface Side {
  name: string;
  pid: number;
  commit: () => Promise<void>;
  close: () => Promise<void>;
  cpuUs: number[];
  faults: number[];
}

async function openSide(url: string, admin: Client, schema: string, raiseTrimThreshold: boolean): Promise<Side> {
  const app = `${schema}_${raiseTrimThreshold ? 'raised' : 'default'}`;
  const u = new URL(url);
  u.searchParams.set('application_name', app);
  const backend = await PostgresBackend.open({ connectionString: u.toString(), schema, poolSize: 1, raiseTrimThreshold, synchronousCommit: false });
  const workspaceId = `pg-commit-${raiseTrimThreshold}`;
  const store = await PostgresEventStore.open({ backend, workspaceId });
  const data = { note: '"q": "x", '.repeat(150) };
  await store.append('workspace', 'no_stream', [event(workspaceId, {})]);
  let rev = -1;
  const commit = async () => {
    await Promise.all(Array.from({ length: 8 }, (_, k) => store.append(`s${k}`, rev < 0 ? 'no_stream' : rev, [event(workspaceId, data), event(workspaceId, data)], { guard: { streamId: 'workspace', revision: 0 } })));
    rev += 2;
  };
  // Warm: the function's plans, the tables' first pages.
  for (let i = 0; i < 50; i++) await commit();
  const rows = (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app])).rows;
  if (rows.length !== 1) throw new Error(`expected one backend named ${app}, found ${rows.length}`);
  return { name: raiseTrimThreshold ? 'trim threshold raised' : 'glibc default', pid: Number(rows[0].pid), commit, close: () => backend.close(), cpuUs: [], faults: [] };
}

export async function main(args: string[]): Promise<void> {
  const url = argValue(args, '--database-url') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const commits = Number(argValue(args, '--commits') ?? 400);
  const rounds = Math.max(5, Number(argValue(args, '--rounds') ?? 6));
  const schema = `rl_bench_pg_commit_${process.pid}`;
  const loadStart = loadAverage();
  const admin = new Client({ connectionString: url });
  await admin.connect();
  const sides: Side[] = [];
  try {
    sides.push(await openSide(url, admin, schema, false), await openSide(url, admin, schema, true));
    for (let r = 0; r < rounds; r++) {
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
        const before = processCounters(side.pid);
        for (let i = 0; i < commits; i++) await side.commit();
        const after = processCounters(side.pid);
        side.cpuUs.push(((after.cpuMs - before.cpuMs) * 1000) / commits);
        side.faults.push((after.faults - before.faults) / commits);
      }
    }
  } finally {
    for (const side of sides) await side.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  const loadEnd = loadAverage();
  const spread = (xs: number[], digits: number) => `${round(Math.min(...xs), digits)} / ${round(median(xs), digits)} / ${round(Math.max(...xs), digits)}`;
  process.stdout.write(
    `bench:pg-commit — one group commit (8 guarded appends × 2 events), PostgreSQL backend CPU per commit, ${rounds} rounds of ${commits} commits, alternating; ${os.cpus().length} cores\n${table(
      sides.map((s) => ({ side: s.name, 'backend CPU µs/commit min / median / max': spread(s.cpuUs, 0), 'page faults/commit min / median / max': spread(s.faults, 1) })),
    )}\nload average at start ${loadStart.join(' ')}, at end ${loadEnd.join(' ')}\n`,
  );
  const [plain, raised] = sides;
  process.stdout.write(
    `${JSON.stringify({
      bench: 'pg-commit',
      commits,
      rounds,
      loadStart,
      loadEnd,
      defaultCpuUsPerCommit: round(median(plain.cpuUs), 0),
      raisedCpuUsPerCommit: round(median(raised.cpuUs), 0),
      raisedOverDefaultCpu: round(median(raised.cpuUs) / median(plain.cpuUs), 3),
      defaultFaultsPerCommit: round(median(plain.faults), 1),
      raisedFaultsPerCommit: round(median(raised.faults), 1),
    })}\n`,
  );
}
