// npm run bench:event-feed [-- --events 20000 --rounds 5]
// Server start-up until the EventBus feed has caught up with a workspace of N events: replaying the
// whole log (no stored consumer positions: what every start cost before positions were stored) against
// resuming after the stored positions (a restart). Alternated in one run so neighbours' load hits both.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../src/config';
import { EVENT_FEED_SERVICE, type LedgerEventFeed } from '../src/cqrs/event-feed';
import type { NewEvent } from '../src/events/envelope';
import { deriveEventId, newUuidV7 } from '../src/events/ids';
import { LOCAL_OPERATOR, Ledger } from '../src/ledger';
import { startServer } from '../src/server/bootstrap';
import { argValue, median, round } from './support/report';

import { cpuMs, loadAverage } from './support/abab';
const WS = 'bench';
const REPO = 'bench-repo';
const spread = (xs: number[]) => ({ min: round(Math.min(...xs), 0), median: round(median(xs), 0), max: round(Math.max(...xs), 0) });
const sha = (n: number) => n.toString(16).padStart(40, '0');

/** N valid events over 200 PR streams: a review request each, then observed heads and CI signals. */
async function generate(ledger: Ledger, total: number): Promise<void> {
  const ws = await ledger.workspace(WS);
  const key = newUuidV7();
  const meta = { principal: 'agent:bench', role: 'member', workspaceId: WS, correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } as never;
  const prs = 200;
  const counts = new Array<number>(prs).fill(0);
  let n = await ws.store.headPosition();
  while (n < total) {
    const wave: Promise<unknown>[] = [];
    for (let pr = 1; pr <= prs && n < total; pr++) {
      const events: NewEvent[] = [];
      for (let b = 0; b < 10 && n < total; b++, n++) {
        const i = counts[pr - 1]++;
        const data =
          i === 0
            ? { type: 'ReviewRequested', data: { repoId: REPO, prNumber: pr, baseSha: sha(1), headSha: sha(2), level: 'balanced', roster: ['engineer'], rulesVersion: 'v1', requestedBy: 'user:bench', role: 'member' } }
            : i % 2 === 0
              ? { type: 'HeadObserved', data: { headSha: sha(1000 + i), source: 'bench' } }
              : { type: 'CiSignalRecorded', data: { name: `check-${i % 5}`, status: 'completed', conclusion: 'success', headSha: sha(2), by: 'system:ci' } };
        events.push({ eventId: deriveEventId(key, n + 1), type: data.type, schemaVersion: 1, data: data.data, metadata: meta });
      }
      wave.push(ws.store.append(`pr-${REPO}-${pr}`, 'any', events));
    }
    await Promise.all(wave);
  }
}

/** One server start: ms until the feed has published every event of the log (and stopped again). */
async function startUntilCaughtUp(dataDir: string): Promise<{ ms: number; cpuMs: number }> {
  const ledger = new Ledger(loadConfig({ dataDir }, {}));
  const c = cpuMs();
  const t = performance.now();
  const server = await startServer({ port: 0, host: '127.0.0.1' }, ledger);
  const feed = ledger.services.get(EVENT_FEED_SERVICE) as LedgerEventFeed;
  await feed.settled(600_000);
  const ms = performance.now() - t;
  const cpu = cpuMs() - c;
  await server.close();
  await ledger.close();
  return { ms, cpuMs: cpu };
}

export async function main(args: string[]): Promise<void> {
  const total = Number(argValue(args, '--events') ?? 20_000);
  const rounds = Number(argValue(args, '--rounds') ?? 5);
  const loadAtStart = loadAverage();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-feed-'));
  try {
    const seed = new Ledger(loadConfig({ dataDir }, {}));
    await seed.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: WS });
    await generate(seed, total);
    const head = await (await seed.workspace(WS)).store.headPosition();
    await seed.close();
    const positions = path.join(dataDir, WS, 'consumers.db');
    const replay: number[] = [];
    const resume: number[] = [];
    const replayCpu: number[] = [];
    const resumeCpu: number[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const f of [positions, `${positions}-wal`, `${positions}-shm`]) fs.rmSync(f, { force: true });
      const a = await startUntilCaughtUp(dataDir);
      const b = await startUntilCaughtUp(dataDir);
      replay.push(a.ms);
      replayCpu.push(a.cpuMs);
      resume.push(b.ms);
      resumeCpu.push(b.cpuMs);
    }
    const out = {
      bench: 'event-feed',
      events: head,
      rounds,
      replayWholeLogMs: { ...spread(replay), all: replay.map((x) => round(x, 0)) },
      resumeFromStoredPositionsMs: { ...spread(resume), all: resume.map((x) => round(x, 0)) },
      // CPU of the whole process (every thread) from the start call until the feed caught up.
      replayCpuMs: spread(replayCpu),
      resumeCpuMs: spread(resumeCpu),
      ratio: round(median(replay) / median(resume), 1),
      load: { start: loadAtStart, end: loadAverage() },
    };
    // One JSON line, like every benchmark: the last line is the result.
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
