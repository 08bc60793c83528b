// npm run bench:store [-- --events 100000 --streams 1000 --rounds 5 --store sqlite|postgres] [-- --chain]
// --chain [--sync FULL|NORMAL] [--baseline [REF]]: instead of raw better-sqlite3, compare our store with the hash chain ON against the same
// store with it OFF (SqliteStoreOptions.chain = false), same alternating rounds: the chain's cost.
// --baseline [REF]: the other side is the SQLite store of commit REF (default `pre-chain`: the parent of the
// commit that added the chain, i.e. the store whose rates issue #20 measured against) instead of chain off.
// Our store API against two raw better-sqlite3 references, same machine, same run, FULL and NORMAL:
// "raw" (minimal: a rowid table, no secondary index) and "raw, our schema" (the same rows into our table
// with its two unique indexes: what a hand-written store with the same guarantees — idempotent event
// ids, unique stream revisions — has to write). Both ratios are printed, and the targets judged on both.
// Each operation runs in rounds A B A B … (ours, ours with the chain off, raw; at least 5), each run timed
// in wall time and in CPU time of the whole process (bench/support/abab.ts): min/median/max per side, the
// ratios against raw, the load average at start and end, and one JSON line last.
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore, SynchronousMode } from '../src/stores/sqlite/sqlite-event-store';
import type { NewEvent } from '../src/events/envelope';
import { newUuidV7 } from '../src/events/ids';
import { argValue, median, round, table } from './support/report';
import { alternate, costRatios, cpuMs, fmtSpread, loadAverage, procStatCpuMs, type Side, type SideStats } from './support/abab';

const PAYLOAD = { fingerprint: 'f'.repeat(40), nodeId: 'node-0000000000', reason: 'r'.repeat(180), confidence: 'low' };
const META = { principal: 'agent:bench', workspaceId: 'bench', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } as const;
const makeEvent = (): NewEvent => ({ eventId: newUuidV7(), type: 'SuppressionFactRecorded', schemaVersion: 1, data: PAYLOAD, metadata: { ...META } });
const rawPayload = () => JSON.stringify({ id: newUuidV7(), ...PAYLOAD });

type Timed = () => Promise<number>; // returns events processed

/**
 * Chain on vs the other side in rounds A B A B … (bench/support/abab.ts), timing wall and whole-process
 * CPU: on a loaded machine wall rates swing with the neighbours, while CPU µs per event barely moves —
 * the CPU ratio says what the code costs.
 */
async function compareCpu(rounds: number, a: Timed, b: Timed) {
  const [o, r] = await alternate(rounds, [
    { name: 'on', run: a },
    { name: 'off', run: b },
  ]);
  return {
    ours: o.wallRate.median,
    raw: r.wallRate.median,
    oursCpu: o.cpuUs.median,
    rawCpu: r.cpuUs.median,
    // Median of each round pair's own ratio (the two ran back to back): a neighbour's burst lands on
    // one pair instead of shifting one side's median. As a rate ratio: off's wall µs/event over on's.
    paired: round(median(o.rounds.map((x, i) => x.events / x.wallMs / (r.rounds[i].events / r.rounds[i].wallMs))), 2),
    spreads: { onRate: o.wallRate, offRate: r.wallRate, onCpuUs: o.cpuUs, offCpuUs: r.cpuUs },
  };
}

function rawDb(file: string, sync: SynchronousMode) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync}`);
  db.exec('CREATE TABLE IF NOT EXISTS ev (id INTEGER PRIMARY KEY, stream TEXT NOT NULL, rev INTEGER NOT NULL, payload TEXT NOT NULL)');
  return db;
}

/**
 * The second reference (issue #39: "raw writing equivalent rows"): raw better-sqlite3 writing our rows
 * (same columns, JSON texts, a 32-byte hash) into a table with our schema — the two unique indexes the
 * store's guarantees need (event ids for idempotency, stream + revision for expected-revision checks).
 * What the store costs beyond this is its own code (and the chain's hash); what this costs beyond
 * `raw` is the schema.
 */
function schemaDb(file: string, sync: SynchronousMode) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync}`);
  db.pragma('wal_autocheckpoint = 4000');
  db.exec(`CREATE TABLE IF NOT EXISTS events (global_position INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, stream_id TEXT NOT NULL, stream_revision INTEGER NOT NULL,
    type TEXT NOT NULL, schema_version INTEGER NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, hash BLOB, UNIQUE (stream_id, stream_revision))`);
  const ins = db.prepare('INSERT INTO events (event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const hash = Buffer.alloc(32, 7);
  const row = (stream: string, rev: number) => {
    const e = makeEvent();
    ins.run(e.eventId, stream, rev, e.type, e.schemaVersion, JSON.stringify(e.data), JSON.stringify(e.metadata), hash);
  };
  return { db, row };
}

/** One comparison's sides: ours (chain on, as shipped), optionally ours with the chain off, and raw. */
type SyncResult = Record<string, { sides: SideStats[] }>;

async function runSync(dir: string, sync: SynchronousMode, n: number, streams: number, rounds: number): Promise<SyncResult> {
  const chunk = Math.ceil(n / rounds);
  const res: SyncResult = {};
  const open = (tag: string, chain = true) => new SqliteEventStore({ file: path.join(dir, `ours-${chain ? '' : 'nochain-'}${sync}-${tag}.db`), workspaceId: 'bench', synchronous: sync, chain });
  // Sequential appends of `size` events each, exact expected revision (what an idempotent command does).
  const sequential = (store: SqliteEventStore, size: number): Side['run'] => {
    const rev = new Int32Array(streams).fill(-1);
    let i = 0;
    return async () => {
      for (let k = 0; k < chunk; k += size, i++) {
        const s = i % streams;
        await store.append(`s-${s}`, rev[s] < 0 ? 'no_stream' : rev[s], size === 1 ? [makeEvent()] : Array.from({ length: size }, makeEvent));
        rev[s] += size;
      }
      return chunk;
    };
  };

  // (a) one event per append, sequential
  {
    const store = open('a');
    const plain = open('a', false);
    const schema = schemaDb(path.join(dir, `schema-${sync}-a.db`), sync);
    const schemaRev = new Int32Array(streams);
    let h = 0;
    const db = rawDb(path.join(dir, `raw-${sync}-a.db`), sync);
    const ins = db.prepare('INSERT INTO ev (stream, rev, payload) VALUES (?, ?, ?)');
    let j = 0;
    res.a = {
      sides: await alternate(rounds, [
        { name: 'ours', run: sequential(store, 1) },
        { name: 'ours, chain off', run: sequential(plain, 1) },
        {
          name: 'raw, our schema',
          run: () => {
            for (let k = 0; k < chunk; k++, h++) schema.row(`s-${h % streams}`, schemaRev[h % streams]++);
            return chunk;
          },
        },
        {
          name: 'raw',
          run: () => {
            for (let k = 0; k < chunk; k++, j++) ins.run(`s-${j % streams}`, j, rawPayload()); // autocommit: one transaction each
            return chunk;
          },
        },
      ]),
    };
    // (c) read all in global order, payloads decoded — on the (a) logs (n events each)
    res.c = {
      sides: await alternate(rounds, [
        {
          name: 'ours',
          run: async () => {
            let count = 0;
            for await (const e of store.readAll()) count += (e.data as { reason: string }).reason.length > 0 ? 1 : 0;
            return count;
          },
        },
        {
          name: 'raw',
          run: () => {
            let count = 0;
            for (const row of db.prepare('SELECT payload FROM ev ORDER BY id').all() as Array<{ payload: string }>) count += JSON.parse(row.payload).reason.length > 0 ? 1 : 0;
            return count;
          },
        },
      ]),
    };
    await store.close();
    await plain.close();
    schema.db.close();
    db.close();
  }

  // (b) batches of 10 events per append
  {
    const store = open('b');
    const plain = open('b', false);
    const schema = schemaDb(path.join(dir, `schema-${sync}-b.db`), sync);
    const schemaRev = new Int32Array(streams);
    const schemaTx = schema.db.transaction((s: number) => {
      for (let k = 0; k < 10; k++) schema.row(`s-${s}`, schemaRev[s]++);
    });
    let h = 0;
    const db = rawDb(path.join(dir, `raw-${sync}-b.db`), sync);
    const ins = db.prepare('INSERT INTO ev (stream, rev, payload) VALUES (?, ?, ?)');
    const tx = db.transaction((base: number) => {
      for (let k = 0; k < 10; k++) ins.run(`s-${(base / 10) % streams}`, base + k, rawPayload());
    });
    let j = 0;
    res.b = {
      sides: await alternate(rounds, [
        { name: 'ours', run: sequential(store, 10) },
        { name: 'ours, chain off', run: sequential(plain, 10) },
        {
          name: 'raw, our schema',
          run: () => {
            for (let k = 0; k < chunk; k += 10, h++) schemaTx(h % streams);
            return chunk;
          },
        },
        {
          name: 'raw',
          run: () => {
            for (let k = 0; k < chunk; k += 10, j += 10) tx(j);
            return chunk;
          },
        },
      ]),
    };
    await store.close();
    await plain.close();
    schema.db.close();
    db.close();
  }

  // (d) group commit: 50 concurrent producers of single-event appends, each acknowledged after the
  // transaction holding it committed; the limit is raw one-transaction-per-event.
  {
    const store = open('d');
    const db = rawDb(path.join(dir, `raw-${sync}-d.db`), sync);
    const ins = db.prepare('INSERT INTO ev (stream, rev, payload) VALUES (?, ?, ?)');
    const producers = 50;
    const per = Math.ceil(chunk / producers);
    let j = 0;
    res.d = {
      sides: await alternate(rounds, [
        {
          name: 'ours',
          run: async () => {
            await Promise.all(
              Array.from({ length: producers }, async (_, p) => {
                for (let k = 0; k < per; k++) await store.append(`p-${p}-${k % 20}`, 'any', [makeEvent()]);
              }),
            );
            return per * producers;
          },
        },
        {
          name: 'raw',
          run: () => {
            for (let k = 0; k < chunk; k++, j++) ins.run(`s-${j % streams}`, j, rawPayload());
            return chunk;
          },
        },
      ]),
    };
    await store.close();
    db.close();
  }
  return res;
}

/** What both sides of a chain comparison are driven through: the append of the store port. */
type Appender = Pick<SqliteEventStore, 'append' | 'close'>;
type BaselineStore = new (o: { file: string; workspaceId: string; synchronous: SynchronousMode }) => Appender;

/**
 * Chain on vs chain off, same store code, alternating rounds: (a) single-event, (b) 10/append, (d) group
 * commit. With `baseline`, the other side is that older store class instead of chain off (see loadBaseline).
 */
async function runChain(dir: string, sync: SynchronousMode, n: number, streams: number, rounds: number, baseline?: BaselineStore) {
  const chunk = Math.ceil(n / rounds);
  const res: Record<string, Awaited<ReturnType<typeof compareCpu>>> = {};
  const open = (tag: string, chain: boolean): Appender => {
    const file = path.join(dir, `chain-${chain ? 'on' : baseline ? 'baseline' : 'off'}-${sync}-${tag}.db`);
    return !chain && baseline ? new baseline({ file, workspaceId: 'bench', synchronous: sync }) : new SqliteEventStore({ file, workspaceId: 'bench', synchronous: sync, chain });
  };
  const sequential = (store: Appender, size: number) => {
    const rev = new Int32Array(streams).fill(-1);
    let i = 0;
    return async () => {
      for (let k = 0; k < chunk; k += size, i++) {
        const s = i % streams;
        await store.append(`s-${s}`, rev[s] < 0 ? 'no_stream' : rev[s], Array.from({ length: size }, makeEvent));
        rev[s] += size;
      }
      return chunk;
    };
  };
  const grouped = (store: Appender) => {
    const producers = 50;
    const per = Math.ceil(chunk / producers);
    return async () => {
      await Promise.all(Array.from({ length: producers }, async (_, p) => {
        for (let k = 0; k < per; k++) await store.append(`p-${p}-${k % 20}`, 'any', [makeEvent()]);
      }));
      return per * producers;
    };
  };
  for (const [k, make] of [['a', (s: Appender) => sequential(s, 1)], ['b', (s: Appender) => sequential(s, 10)], ['d', grouped]] as const) {
    const on = open(k, true);
    const off = open(k, false);
    res[k] = await compareCpu(rounds, make(on), make(off));
    await on.close();
    await off.close();
  }
  return res;
}

export async function main(args: string[]) {
  const n = Number(argValue(args, '--events') ?? 100_000);
  const streams = Number(argValue(args, '--streams') ?? 1000);
  const rounds = Math.max(5, Number(argValue(args, '--rounds') ?? 5)); // issue #39: at least 5 alternating rounds
  const storeKind = argValue(args, '--store') ?? 'sqlite';
  if (storeKind !== 'sqlite') {
    let mod: { main(args: string[]): Promise<void> };
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      mod = require(`./store-${storeKind}`);
    } catch {
      throw new Error(`--store ${storeKind}: no benchmark for that adapter in this build`);
    }
    return mod.main(args);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-store-'));
  if (args.includes('--chain')) return mainChain(dir, n, streams, rounds, argValue(args, '--sync'), baselineArg(args));
  const load0 = loadAverage();
  const stat0 = procStatCpuMs();
  const cpu0 = cpuMs();
  console.log(`bench:store — ${n.toLocaleString('en-US')} events of ~300 bytes over ${streams} streams, ${rounds} rounds A B A B… (ours, ours chain off, raw with our schema, raw), ${os.cpus().length} cores, Node ${process.version}, load average at start ${load0.join(' ')}`);
  const rows: Array<Record<string, string | number>> = [];
  const json: Record<string, unknown> = { bench: 'store', events: n, streams, rounds, loadStart: load0 };
  const label: Record<string, string> = { a: '(a) 1 event/append', b: '(b) 10 events/append', c: '(c) read all, decoded', d: '(d) group commit, 50 prod.' };
  // Targets of issue #39: CPU per event with the chain on, against raw better-sqlite3 with the same durability.
  const cpuTarget: Record<string, number> = { a: 1.1, b: 1.25 };
  const targets: Record<string, { cpuRatio: number; target: number; met: boolean }> = {};
  const targetsSchema: Record<string, { cpuRatio: number; target: number; met: boolean }> = {};
  try {
    for (const sync of ['FULL', 'NORMAL'] as SynchronousMode[]) {
      const res = await runSync(dir, sync, n, streams, rounds);
      for (const k of ['a', 'b', 'c', 'd']) {
        const sides = res[k].sides;
        const raw = sides[sides.length - 1];
        const schemaRaw = sides.find((x) => x.name === 'raw, our schema');
        for (const side of sides) {
          const vs = side === raw ? null : costRatios(side, raw);
          const vsSchema = schemaRaw && side !== raw && side !== schemaRaw ? costRatios(side, schemaRaw) : null;
          rows.push({
            sync,
            operation: label[k],
            side: side.name,
            'wall ev/s min/med/max': fmtSpread(side.wallRate),
            'cpu µs/ev min/med/max': fmtSpread(side.cpuUs),
            'ev/s vs raw': vs ? round(raw.wallUs.median / side.wallUs.median, 2) : '',
            'cpu × raw': vs ? vs.cpu : '',
            'cpu × raw, paired': vs ? vs.cpuPaired : '',
            'cpu × raw our schema': vsSchema ? vsSchema.cpu : '',
            'cpu × raw our schema, paired': vsSchema ? vsSchema.cpuPaired : '',
          });
          const key = `${sync}_${k}_${side.name.replace(/[^a-z]+/g, '_')}`;
          json[key] = {
            wallRate: side.wallRate,
            cpuUs: side.cpuUs,
            ...(vs ? { rateVsRaw: round(raw.wallUs.median / side.wallUs.median, 3), cpuVsRaw: vs.cpu, cpuVsRawPaired: vs.cpuPaired, wallVsRaw: vs.wall } : {}),
            ...(vsSchema ? { cpuVsRawSchema: vsSchema.cpu, cpuVsRawSchemaPaired: vsSchema.cpuPaired } : {}),
          };
          // The keys of the earlier output (ours/raw wall rate ratio, medians) for readers of old records.
          if (side.name === 'ours' && vs) json[`${sync}_${k}_ratio`] = round(raw.wallUs.median / side.wallUs.median, 2);
          if (side.name === 'ours' && cpuTarget[k] !== undefined && vs) targets[`${sync}_${k}`] = { cpuRatio: vs.cpu, target: cpuTarget[k], met: vs.cpu <= cpuTarget[k] };
          if (side.name === 'ours' && cpuTarget[k] !== undefined && vsSchema) targetsSchema[`${sync}_${k}`] = { cpuRatio: vsSchema.cpu, target: cpuTarget[k], met: vsSchema.cpu <= cpuTarget[k] };
        }
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const load1 = loadAverage();
  const stat1 = procStatCpuMs();
  console.log(table(rows));
  console.log('raw = better-sqlite3, minimal schema (no secondary index), same synchronous mode: one INSERT per transaction for (a) and (d), one transaction per 10 for (b), SELECT + JSON.parse for (c)');
  console.log('"raw, our schema" = the second reference: raw better-sqlite3 writing our rows into our table (both unique indexes, a 32-byte hash column), one INSERT per transaction for (a), ten for (b) — what a hand-written store with the same guarantees (idempotent event ids, unique stream revisions) must write');
  console.log('cpu = CPU time of the whole process (all threads, exited ones included: getrusage) per event; "cpu × raw" = median ours µs/ev over median raw µs/ev, "paired" = median of the per-round ratios; "cpu × raw our schema" the same against "raw, our schema"');
  const verdicts = (t: typeof targets) => Object.entries(t).map(([k, v]) => `${k} ${v.cpuRatio}× ${v.met ? 'met' : 'MISSED'}`).join(', ');
  console.log(`targets (issue #39): (a) ours cpu ≤ 1.1× raw, (b) ≤ 1.25× raw, chain on —`);
  console.log(`  against minimal raw:            ${verdicts(targets)}`);
  console.log(`  against raw writing our schema: ${verdicts(targetsSchema)}`);
  console.log(`load average at start ${load0.join(' ')}, at end ${load1.join(' ')}`);
  json.targets = targets;
  json.targetsMet = Object.values(targets).every((t) => t.met);
  json.targetsSameSchema = targetsSchema;
  json.targetsSameSchemaMet = Object.values(targetsSchema).every((t) => t.met);
  json.loadEnd = load1;
  json.processCpuMs = round(cpuMs() - cpu0, 0);
  if (stat0 !== null && stat1 !== null) json.procStatCpuMs = stat1 - stat0;
  console.log(JSON.stringify(json));
}

/**
 * The SQLite store of an older commit, checked out into a temporary worktree beside this one (its
 * node_modules linked to ours, so both load the same better-sqlite3): what `--baseline` compares the
 * chained store with. `pre-chain` names the parent of the commit that added src/events/chain.ts — the
 * store as it was when issue #20 asked for "≥ 0.9× today's rates".
 */
function loadBaseline(ref: string): { store: BaselineStore; commit: string; cleanup: () => void } {
  const root = path.resolve(__dirname, '..');
  const git = (...a: string[]) => execFileSync('git', ['-C', root, ...a], { encoding: 'utf8' }).trim();
  const rev = ref === 'pre-chain' ? `${git('log', '--diff-filter=A', '--format=%H', '--', 'src/events/chain.ts').split('\n').pop()}^` : ref;
  const commit = git('rev-parse', '--verify', `${rev}^{commit}`);
  const wt = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-baseline-'));
  git('worktree', 'add', '--detach', wt, commit);
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(wt, 'node_modules'));
  const cleanup = () => {
    try {
      git('worktree', 'remove', '--force', wt);
    } catch {
      fs.rmSync(wt, { recursive: true, force: true });
    }
  };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    // The adapter moved from src/events/store/sqlite.ts to src/stores/sqlite/sqlite-event-store.ts (2026-12-04): a baseline may have either.
    const moved = fs.existsSync(path.join(wt, 'src/stores/sqlite/sqlite-event-store.ts'));
    const mod = require(path.join(wt, moved ? 'src/stores/sqlite/sqlite-event-store' : 'src/events/store/sqlite')) as { SqliteEventStore: BaselineStore };
    return { store: mod.SqliteEventStore, commit, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}

/** `--baseline` alone means `pre-chain`; `--baseline REF` or `--baseline=REF` names a commit. */
function baselineArg(args: string[]): string | undefined {
  if (!args.some((a) => a === '--baseline' || a.startsWith('--baseline='))) return undefined;
  const v = argValue(args, '--baseline');
  return v === undefined || v.startsWith('--') ? 'pre-chain' : v;
}

async function mainChain(dir: string, n: number, streams: number, rounds: number, only?: string, baselineRef?: string) {
  // --sync NORMAL: one mode only (FULL single-event appends are fsync-bound: 100k of them take ~10 min here).
  const modes = (only ? [only.toUpperCase()] : ['FULL', 'NORMAL']) as SynchronousMode[];
  const baseline = baselineRef ? loadBaseline(baselineRef) : undefined;
  const other = baseline ? `the store of ${baseline.commit.slice(0, 10)} (${baselineRef})` : 'off';
  const load0 = loadAverage();
  console.log(`bench:store --chain — hash chain on vs ${other}, ${n.toLocaleString('en-US')} events of ~300 bytes over ${streams} streams, ${rounds} rounds A B A B…, ${os.cpus().length} cores, Node ${process.version}, load average at start ${load0.join(' ')}`);
  const rows: Array<Record<string, string | number>> = [];
  const json: Record<string, unknown> = { bench: baseline ? 'store-chain-baseline' : 'store-chain', events: n, streams, rounds, sync: modes.join('+'), ...(baseline ? { baseline: baseline.commit, baselineRef } : {}) };
  const label: Record<string, string> = { a: '(a) 1 event/append, sequential', b: '(b) 10 events/append', d: '(d) group commit, 50 producers' };
  const ratios: Record<string, number> = {};
  const cpuRatios: Record<string, number> = {};
  const pairedRatios: Record<string, number> = {};
  try {
    for (const sync of modes) {
      const res = await runChain(dir, sync, n, streams, rounds, baseline?.store);
      for (const k of ['a', 'b', 'd']) {
        const { ours: on, raw: off, oursCpu: onCpu, rawCpu: offCpu, paired } = res[k];
        // CPU ratio as a rate ratio: off µs/event over on µs/event (1 = the chain costs no CPU).
        rows.push({ sync, operation: label[k], 'chain on ev/s': on, 'chain off ev/s': off, 'on/off': round(on / off, 2), 'paired on/off': paired, 'on cpu µs/ev': onCpu, 'off cpu µs/ev': offCpu, 'cpu on/off': round(offCpu / onCpu, 2) });
        json[`${sync}_${k}_on`] = on;
        json[`${sync}_${k}_off`] = off;
        json[`${sync}_${k}_ratio`] = round(on / off, 2);
        json[`${sync}_${k}_paired_ratio`] = paired;
        json[`${sync}_${k}_on_cpu_us`] = onCpu;
        json[`${sync}_${k}_off_cpu_us`] = offCpu;
        json[`${sync}_${k}_cpu_ratio`] = round(offCpu / onCpu, 2);
        json[`${sync}_${k}_spreads`] = res[k].spreads;
        if (k !== 'b') {
          ratios[`${sync}_${k}`] = round(on / off, 2);
          cpuRatios[`${sync}_${k}`] = round(offCpu / onCpu, 2);
          pairedRatios[`${sync}_${k}`] = paired;
        }
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    baseline?.cleanup();
  }
  console.log(table(rows));
  if (baseline) console.log(`"chain off" columns: the baseline store ${baseline.commit} (no chain), not this build with the chain off`);
  console.log(`target: chain on ≥ 0.9× chain off for (a) and (d), at FULL and NORMAL (wall rates: on/off = median on over median off; paired = median of the back-to-back round pairs' ratios, same target, less moved by a neighbour's burst); cpu on/off = CPU µs per event off / on, the same ratio free of neighbours' load; load average at start ${load0.join(' ')}, at end ${loadAverage().join(' ')}`);
  json.ratios = ratios;
  json.cpuRatios = cpuRatios;
  json.pairedRatios = pairedRatios;
  json.load = round(os.loadavg()[0], 2);
  json.loadStart = load0;
  json.loadEnd = loadAverage();
  json.targetMet = Object.values(ratios).every((r) => r >= 0.9);
  json.cpuTargetMet = Object.values(cpuRatios).every((r) => r >= 0.9);
  console.log(JSON.stringify(json));
}
