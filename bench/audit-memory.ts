// node -r ./tools/ts-register.js bench/audit-memory.ts --build DIR [--events 200000 --prs 10000]
// node -r ./tools/ts-register.js bench/audit-memory.ts --measure DIR [--src ROOT] [--input '{"limit":1000}']
// What one `audit` request costs the server in memory: a generated workspace log (SQLite) with its
// read models built (--build), then, in a fresh process per request (--measure), the answer read from
// the audit rows and serialized as the RPC dispatcher does (canonical JSON; under the response cap
// when ROOT's src/rpc/limits.ts has one). --src runs another checkout's code (a tree before the change)
// on the same data. Prints one JSON line: RSS before, peak RSS (maxRSS), rows, bytes, ms or the error.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { appendLog, generateLog } from '../test/readmodels/generate';
import { argValue } from './support/report';
import { SlotMap } from '../src/slots';

const WS = 'scale';
const mib = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function open(root: string, dir: string) {
  const { SqliteEventStore } = require(path.join(root, 'src/stores/sqlite/sqlite-event-store'));
  const store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: WS, synchronous: 'NORMAL' });
  return { id: WS, dir, store, cache: new SlotMap(), close: () => store.close() };
}

async function build(dir: string, events: number, prs: number): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  const root = path.resolve(__dirname, '..');
  const ws = await open(root, dir);
  await appendLog(ws.store, generateLog({ seed: 7, prs, principals: 200, events, workspaceId: WS }), 200);
  const { readModelHost } = require(path.join(root, 'src/readmodels/stored/registry'));
  const host = readModelHost(ws);
  await host.settle();
  await host.close();
  await ws.close();
  console.log(JSON.stringify({ built: dir, events: await countEvents(dir) }));
}

async function countEvents(dir: string): Promise<number> {
  const ws = await open(path.resolve(__dirname, '..'), dir);
  const head = await ws.store.headPosition();
  await ws.close();
  return head;
}

async function measure(dir: string, root: string, input: Record<string, unknown>): Promise<void> {
  const ws = await open(root, dir);
  const { auditQuery } = require(path.join(root, 'src/readmodels/queries/audit'));
  const { runQuery } = require(path.join(root, 'src/readmodels/queries/run-query'));
  const { readModelHost } = require(path.join(root, 'src/readmodels/stored/registry'));
  const { canonicalJson } = require(path.join(root, 'src/events/canonical-json'));
  const limits = require(path.join(root, 'src/rpc/limits'));
  const host = readModelHost(ws);
  await host.settle();
  // The first page once, so both runs have the model open and its pages warm.
  await runQuery(auditQuery, ws, auditQuery.input.parse({ limit: 1 }));
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  let out: Record<string, unknown>;
  try {
    const parsed = auditQuery.input.safeParse(input);
    if (!parsed.success) throw Object.assign(new Error(parsed.error.issues.map((i: { path: string[]; message: string }) => `${i.path.join('.')}: ${i.message}`).join('; ')), { code: 'invalid_payload' });
    const answer = await runQuery(auditQuery, ws, parsed.data);
    const json: string = limits.canonicalJsonWithin ? limits.canonicalJsonWithin(answer, limits.LIMITS.maxResponseBytes, 'review_studio.audit') : canonicalJson(answer);
    const rows = Array.isArray(answer.value) ? answer.value.length : answer.value.rows.length;
    out = { rows, bytes: Buffer.byteLength(json) };
  } catch (err) {
    out = { error: (err as { code?: string }).code ?? 'error', message: String((err as Error).message).slice(0, 160) };
  }
  const ms = Math.round(performance.now() - t0);
  console.log(JSON.stringify({ src: root, input, ...out, ms, rssBeforeMiB: mib(rssBefore), peakRssMiB: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10 }));
  await host.close();
  await ws.close();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const buildDir = argValue(args, '--build');
  if (buildDir) return build(path.resolve(buildDir), Number(argValue(args, '--events') ?? 200_000), Number(argValue(args, '--prs') ?? 10_000));
  const dir = argValue(args, '--measure');
  if (!dir) throw new Error('--build DIR or --measure DIR');
  await measure(path.resolve(dir), path.resolve(argValue(args, '--src') ?? path.join(__dirname, '..')), JSON.parse(argValue(args, '--input') ?? '{}'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
