import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { collect } from '../../src/events/store/port';
import { verifyStore } from '../../src/audit/checkpointer';

export interface CrashRunResult {
  acknowledged: number;
  stored: number;
  killedAfterMs: number;
  problems: string[];
}

const root = path.join(__dirname, '..', '..');

/**
 * One crash run: a child appends and reports acknowledgements; we SIGKILL it at a random moment, reopen
 * the store and check: every acknowledged event is there, nothing is partial, positions are contiguous,
 * stream revisions are contiguous, and the hash chain verifies.
 */
export async function crashRun(random: () => number = Math.random): Promise<CrashRunResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-crash-'));
  const file = path.join(dir, 'workspace.db');
  const child = spawn(process.execPath, ['-r', path.join(root, 'tools/ts-register.js'), path.join(__dirname, 'crash-child.ts'), file, 'FULL'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const acked = new Set<string>();
  let buf = '';
  let firstAck = 0;
  const killAfter = 150 + Math.floor(random() * 850);
  const started = new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        // A line is an acknowledgement only once complete: a torn last line was never acknowledged.
        if (line.startsWith('ack ')) for (const id of line.slice(4).split(' ')) acked.add(id);
        if (!firstAck) {
          firstAck = Date.now();
          resolve();
        }
      }
    });
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await started;
  await new Promise((r) => setTimeout(r, killAfter));
  child.kill('SIGKILL');
  await exited;

  const problems: string[] = [];
  const store = new SqliteEventStore({ file, workspaceId: 'crash' });
  const all = await collect(store.readAll());
  // The hash chain survives the kill too: no half-advanced head, every row linked to the one before.
  const chain = await verifyStore(store);
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });

  const stored = new Set(all.map((e) => e.eventId));
  const missing = [...acked].filter((id) => !stored.has(id));
  if (missing.length) problems.push(`${missing.length} acknowledged events missing, e.g. ${missing[0]}`);
  all.forEach((e, i) => {
    if (e.globalPosition !== i + 1) problems.push(`position gap at ${i + 1}: found ${e.globalPosition}`);
    const d = e.data as { reason?: string };
    if (typeof d?.reason !== 'string' || d.reason.length < 200) problems.push(`partial event ${e.eventId}`);
  });
  if (!chain.ok) problems.push(`hash chain: ${chain.problems[0].kind} at ${chain.problems[0].position}: ${chain.problems[0].message}`);
  if (chain.events !== all.length) problems.push(`hash chain read ${chain.events} rows, readAll ${all.length}`);
  const revs = new Map<string, number>();
  for (const e of all) {
    const expected = (revs.get(e.streamId) ?? -1) + 1;
    if (e.streamRevision !== expected) problems.push(`stream ${e.streamId} revision ${e.streamRevision} after ${expected - 1}`);
    revs.set(e.streamId, e.streamRevision);
  }
  return { acknowledged: acked.size, stored: all.length, killedAfterMs: killAfter, problems: problems.slice(0, 10) };
}
