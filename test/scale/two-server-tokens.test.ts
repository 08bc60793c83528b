import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { loadOperatorConfig } from '../../src/operator-config';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { whenPostgres, ownDatabase } from './pg-support';

/**
 * Two servers on one PostgreSQL store with the documented shared token secret (docs/stores.md): a token
 * issued through one is good on the other at once, and a token revoked through one is refused by the
 * other at once. Before, a command on the second server right after the token was issued on the first
 * was refused `unauthorized` (2 of 30 here): its access check trusted a state the store's freshness
 * vouched for, and the issue had not been announced to it yet. A token the state does not hold is now
 * read for before it is refused.
 */
whenPostgres('tokens across two servers on one store', () => {
  const db = ownDatabase('tok2');
  const url = db.url;
  const dirs = [0, 1].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'rl-tok2-')));
  const servers: RunningServer[] = [];

  beforeAll(async () => {
    await db.create();
    const keyFile = path.join(dirs[0], 'shared-server.key');
    fs.writeFileSync(keyFile, crypto.randomBytes(32).toString('hex'), { mode: 0o600 });
    for (const dataDir of dirs) servers.push(await startServer({ dataDir, port: 0, store: 'postgres', databaseUrl: url, operator: loadOperatorConfig(dataDir, { serverKeyFile: keyFile }, {}) }));
  }, 120_000);
  afterAll(async () => {
    for (const s of servers) await s.close().catch(() => undefined);
    await db.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  async function rpc(s: RunningServer, token: string, method: string, params: Record<string, unknown>): Promise<{ result?: any; error?: { data?: { code: string } } }> {
    const res = await fetch(`${s.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { workspace_id: 'default', idempotencyKey: newUuidV7(), ...params } }),
    });
    return (await res.json()) as { result?: any; error?: { data?: { code: string } } };
  }
  const finding = (i: number) => ({ repoId: 'r', prNumber: 1, node: { kind: 'bug', priority: 'P3', triage: { category: 'correctness', severity: 'low', effort: 'small' }, confidence: 0.5, title: `finding ${i}` } });
  const outcome = (r: { result?: unknown; error?: { data?: { code: string } } }) => (r.result ? 'ok' : r.error?.data?.code);

  test('issued on one, a command on the other is accepted at once; revoked on one, refused by the other at once (50 times)', async () => {
    const [a, b] = servers;
    const owner = fs.readFileSync(path.join(dirs[0], 'owner-token'), 'utf8').trim();
    const seen: string[] = [];
    for (let i = 0; i < 50; i++) {
      const principal = `agent:token-${i}`;
      expect(outcome(await rpc(a, owner, 'addMember', { principal, role: 'member' }))).toBe('ok');
      const issued = await rpc(a, owner, 'issueToken', { principal, role: 'member' });
      const { token, tokenId } = issued.result.result as { token: string; tokenId: string };
      // A command whose payload is incomplete: authentication comes first, so `invalid_payload` says the token was good.
      const before = await rpc(b, token, 'addReviewNode', finding(i));
      expect(outcome(await rpc(a, owner, 'revokeToken', { tokenId }))).toBe('ok');
      const after = await rpc(b, token, 'addReviewNode', finding(i));
      seen.push(`${outcome(before)} ${outcome(after)}`);
    }
    expect([...new Set(seen)]).toEqual([`invalid_payload unauthorized`]);
  }, 300_000);
});
