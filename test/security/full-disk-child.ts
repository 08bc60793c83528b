// Run by data-at-rest.test.ts inside bubblewrap, with `dataDir` on a small tmpfs: fills the disk for
// real, then reports what a command and /health answer, and again once space is freed. One JSON line.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startServer } from '../../src/server/bootstrap';
import { newUuidV7 } from '../../src/events/ids';

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  const server = await startServer({ dataDir, port: 0 });
  const owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  const rpc = async (n: number) => {
    const res = await fetch(`${server.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: n, method: 'addMember', params: { workspace_id: 'default', idempotencyKey: newUuidV7(), principal: `user:m${n}`, role: 'viewer' } }),
    });
    return { status: res.status, body: (await res.json()) as { result?: unknown; error?: { data?: { code?: string } } } };
  };
  const health = async () => (await (await fetch(`${server.url}/health`)).json()) as { status: string };
  const before = { command: (await rpc(1)).body.error?.data?.code ?? 'ok', health: (await health()).status };
  // Fill the filesystem: a filler file until ENOSPC.
  const filler = path.join(dataDir, 'filler');
  const fd = fs.openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  try {
    for (;;) fs.writeSync(fd, chunk.subarray(0, 512));
  } catch {
    /* full to the last block */
  }
  fs.closeSync(fd);
  const codes: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await rpc(100 + i);
    codes.push(r.body.error?.data?.code ?? 'ok');
  }
  const whenFull = { commands: codes, health: (await health()).status };
  fs.rmSync(filler);
  const after = { command: (await rpc(200)).body.error?.data?.code ?? 'ok', health: (await health()).status };
  await server.close();
  process.stdout.write(`${JSON.stringify({ before, whenFull, after })}\n`);
}

main().catch((err) => {
  process.stdout.write(`${JSON.stringify({ crashed: String(err?.stack ?? err) })}\n`);
  process.exit(1);
});
