import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import type { RecordedEvent } from '../../src/events/envelope';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { parseToken } from '../../src/security/tokens';
import { call, command, postRpc, serverFixture, tokenFor } from './support';

const ROOT = path.resolve(__dirname, '../..');
const cli = (dataDir: string, ...args: string[]) => execFileSync(process.execPath, ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8' });

const collect = async (it: AsyncIterable<RecordedEvent>) => {
  const out: RecordedEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
};

const event = (type = 'Noted') => ({ eventId: newUuidV7(), type, schemaVersion: 1, data: { n: 1 }, metadata: { principal: 'user:t', workspaceId: 'w', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } as never });

describe('HTTP hot path caches keep their promises', () => {
  it('a token verified (and cached) by the server is refused on the next call after another PROCESS revokes it', async () => {
    const fx = await serverFixture();
    try {
      const token = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:cached', 'viewer');
      // Two calls: the second is answered from the verified-token cache.
      for (let i = 0; i < 2; i++) expect((await call(fx.server.url, token, 'review_studio.verdict', { workspace_id: fx.workspaceId, repoId: 'r', prNumber: 1 })).error?.data?.code).not.toBe('unauthorized');
      cli(fx.dataDir, 'token', 'revoke', parseToken(token)!.tokenId, '--workspace', fx.workspaceId);
      const after = await call(fx.server.url, token, 'review_studio.verdict', { workspace_id: fx.workspaceId, repoId: 'r', prNumber: 1 });
      expect(after.error?.data?.code).toBe('unauthorized');
      // The owner's own (cached) token still works: the cache was rebuilt, not poisoned.
      expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addMember', { principal: 'user:later', role: 'viewer' })).error).toBeUndefined();
    } finally {
      await fx.close();
    }
  }, 60_000);

  it('POST /rpc on the fast path keeps its limits and the framework still serves every other route', async () => {
    const fx = await serverFixture();
    try {
      const res = await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${fx.ownerToken}` }, body: 'x'.repeat(2 * 1024 * 1024) });
      expect(res.status).toBe(413);
      expect((await res.json()).error.data.code).toBe('payload_too_large');
      expect((await postRpc(fx.server.url, fx.ownerToken, '{not json')).body.error.code).toBe(-32700);
      const discover = await postRpc(`${fx.server.url}`, undefined, { jsonrpc: '2.0', id: 1, method: 'rpc.discover' });
      expect(discover.body.result.openrpc).toMatch(/^1\.3/);
      // A framework route (SSE) still answers through Nest: an unknown query is a 404 with a JSON body.
      const sse = await fetch(`${fx.server.url}/workspaces/${fx.workspaceId}/watch/noSuchQuery?access_token=${fx.ownerToken}`);
      expect(sse.status).toBe(404);
      expect((await sse.json()).error.data.code).toBe('unknown_query');
    } finally {
      await fx.close();
    }
  }, 60_000);

  it('the store serves the rows it just appended from memory exactly as the table holds them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-hot-'));
    const file = path.join(dir, 'workspace.db');
    const a = new SqliteEventStore({ file, workspaceId: 'w' });
    const reader = new SqliteEventStore({ file, workspaceId: 'w' });
    try {
      await a.append('s-1', 'no_stream', [event(), event()]);
      const batch = [event(), event(), event()];
      // Two appends in one group commit: one refused (wrong revision), the other lands.
      const [refused, landed] = await Promise.allSettled([a.append('s-1', 0, [event()]), a.append('s-1', 1, batch)]);
      expect(refused.status).toBe('rejected');
      expect(landed.status).toBe('fulfilled');
      const fromTable = async (from: number, maxCount?: number) => (await collect(reader.readStream('s-1', { fromRevision: from, maxCount }))).map((e) => JSON.stringify(e));
      const fromA = async (from: number, maxCount?: number) => (await collect(a.readStream('s-1', { fromRevision: from, maxCount }))).map((e) => JSON.stringify(e));
      await a.append('s-1', 4, batch.map(() => event()));
      for (const from of [0, 3, 5, 6, 7, 8]) expect([from, await fromA(from)]).toEqual([from, await fromTable(from)]);
      expect(await fromA(5, 2)).toEqual(await fromTable(5, 2));
      for (const e of batch) expect(JSON.stringify(await a.findEvent(e.eventId))).toBe(JSON.stringify(await reader.findEvent(e.eventId)));
      expect(await a.findEvent(newUuidV7())).toBeNull();
    } finally {
      await a.close();
      await reader.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the store answers "nothing past my last append" without a query, yet sees what another connection committed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-hot-'));
    const file = path.join(dir, 'workspace.db');
    const a = new SqliteEventStore({ file, workspaceId: 'w' });
    const b = new SqliteEventStore({ file, workspaceId: 'w' });
    try {
      const first = await a.append('s-1', 'no_stream', [event()]);
      expect(first.nextExpectedRevision).toBe(0);
      expect(await collect(a.readStream('s-1', { fromRevision: 1 }))).toEqual([]);
      await b.append('s-1', 0, [event(), event()]);
      const seen = await collect(a.readStream('s-1', { fromRevision: 1 }));
      expect(seen.map((e) => e.streamRevision)).toEqual([1, 2]);
      // And a's own next append checks against the revision b left, not its stale cache.
      await expect(a.append('s-1', 0, [event()])).rejects.toMatchObject({ code: 'wrong_expected_revision' });
      expect((await a.append('s-1', 2, [event()])).nextExpectedRevision).toBe(3);
      expect((await collect(a.readStream('s-1', { fromRevision: 3 }))).map((e) => e.streamRevision)).toEqual([3]);
      expect(await collect(b.readStream('s-1', { fromRevision: 4 }))).toEqual([]);
      expect((await collect(b.readStream('s-1', { fromRevision: 3 }))).map((e) => e.streamRevision)).toEqual([3]);
    } finally {
      await a.close();
      await b.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
