import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

// In a child process of its own: under Jest the event loop is kept alive by the runner, so a process
// ending early (nothing referenced but an awaited writer thread) would go unseen.
const SCRIPT = `
const { SqliteEventStore } = require('./src/stores/sqlite/sqlite-event-store');
const { readModelHost } = require('./src/readmodels/stored/registry');
const { SlotMap } = require('./src/slots');
const { appendLog, generateLog } = require('./test/readmodels/generate');
(async () => {
  const dir = process.argv[1];
  const store = new SqliteEventStore({ file: dir + '/workspace.db', workspaceId: 'rm' });
  await appendLog(store, generateLog({ seed: 5, prs: 6, principals: 8, events: 400 }), 10);
  // Batches and chunks of 50 events: a build's last batch commits without a thread; the others on it.
  const host = readModelHost({ id: 'rm', dir, store, cache: new SlotMap() }, undefined, { batch: 50, bulkChunk: 50 });
  await host.settle();
  const slots = await host.rebuildAll(host.names);
  process.stdout.write('rebuilt ' + slots.map((s) => s.position).join(',') + '\\n');
  // One model again (as bench:scale does): the writer is idle, unreferenced, when the workspace closes.
  await host.rebuild('audit');
  await host.close();
  await store.close();
  process.stdout.write('closed\\n');
})().catch((e) => { console.error(e); process.exit(1); });
`;

test('a build commits its batches on the SQLite writer thread, and the process lives on after the workspace closed', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-rm-writer-'));
  try {
    const out = execFileSync(process.execPath, ['-r', './tools/ts-register.js', '-e', SCRIPT, dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^rebuilt (\d+),\1,\1$/);
    expect(lines[1]).toBe('closed');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 150_000);

// The history's chunks prepare ahead: each chunk's temporary table is filled on the file's other writer
// thread while the chunk before commits, and that thread commits it (storage.prepareAhead).
const AHEAD = `
const { SqliteEventStore } = require('./src/stores/sqlite/sqlite-event-store');
const { readModelHost } = require('./src/readmodels/stored/registry');
const { SlotMap } = require('./src/slots');
const { SqliteWriter } = require('./src/readmodels/stored/sqlite-writer');
const { appendLog, generateLog } = require('./test/readmodels/generate');
(async () => {
  const dir = process.argv[1];
  const store = new SqliteEventStore({ file: dir + '/workspace.db', workspaceId: 'rm' });
  await appendLog(store, generateLog({ seed: 7, prs: 8, principals: 8, events: 600 }), 10);
  // Folded event by event in JS (the path the set-based build is compared with), then rebuilt set-based in 50-event chunks.
  const folded = readModelHost({ id: 'rm', dir, store, cache: new SlotMap() }, undefined, { bulk: false });
  await folded.settle();
  const kept = await folded.dump('history');
  await folded.close();
  const host = readModelHost({ id: 'rm', dir, store, cache: new SlotMap() }, undefined, { bulkChunk: 50 });
  await host.settle();
  const writers = new Set();
  let ahead = 0;
  const prepare = SqliteWriter.prototype.prepare;
  SqliteWriter.prototype.prepare = function (...args) { ahead++; writers.add(this); return prepare.apply(this, args); };
  const commit = SqliteWriter.prototype.commit;
  SqliteWriter.prototype.commit = function (job) { if (job.name === 'history' && job.preparedAs !== undefined) writers.add(this); return commit.call(this, job); };
  await host.rebuild('history');
  const rebuilt = await host.dump('history');
  await host.close();
  await store.close();
  process.stdout.write(JSON.stringify({ same: rebuilt === kept, ahead, threads: writers.size }) + '\\n');
})().catch((e) => { console.error(e); process.exit(1); });
`;

test("a history build's chunks prepare ahead on the file's second writer thread, and the rows equal the model kept event by event", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-rm-ahead-'));
  try {
    const out = execFileSync(process.execPath, ['-r', './tools/ts-register.js', '-e', AHEAD, dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    const r = JSON.parse(out.trim()) as { same: boolean; ahead: number; threads: number };
    expect(r.same).toBe(true);
    expect(r.ahead).toBeGreaterThan(2);
    expect(r.threads).toBe(2);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 150_000);
