import { newUuidV7 } from '../../src/events/ids';
import { startServer } from '../../src/server/bootstrap';
import { ALICE, OWNER, publishFixture } from './support';

async function rpc(url: string, token: string, method: string, params: Record<string, unknown>) {
  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await res.json()) as { result?: any; error?: any };
}

describe('RPC review_studio.publish over HTTP (generated from COMMANDS)', () => {
  it('an agent token gets a request, only a human token can approve it, and a second publish is refused with the review id', async () => {
    const f = await publishFixture();
    const server = await startServer({ port: 0 }, f.ledger);
    try {
      const issue = async (principal: string, role: string) => {
        await f.ledger.run('addMember', 'acme', { ...OWNER, idempotencyKey: newUuidV7() }, { principal, role });
        return (await f.ledger.issueToken('acme', { ...OWNER, idempotencyKey: newUuidV7() }, { principal, role })).token;
      };
      const carol = await issue('user:carol', 'member');
      const alice = await issue(ALICE.principal, 'member');
      await f.file(ALICE, { title: 'five is a string now', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
      await f.finalize();

      const asked = await rpc(server.url, alice, 'review_studio.publish', { workspace_id: 'acme', idempotencyKey: newUuidV7(), repoId: 'web-app', prNumber: 7 });
      expect(asked.result.result).toMatchObject({ status: 'awaiting_approval', requestId: 'p1' });
      expect(f.github.log).toHaveLength(0);
      const refused = await rpc(server.url, alice, 'review_studio.approvePublish', { workspace_id: 'acme', idempotencyKey: newUuidV7(), repoId: 'web-app', prNumber: 7, requestId: 'p1' });
      expect(refused.error.data.code).toBe('forbidden');

      const approved = await rpc(server.url, carol, 'review_studio.approvePublish', { workspace_id: 'acme', idempotencyKey: newUuidV7(), repoId: 'web-app', prNumber: 7, requestId: 'p1' });
      expect(approved.result.result).toMatchObject({ status: 'published', inline: 1, event: 'APPROVE' });
      const twice = await rpc(server.url, carol, 'review_studio.publish', { workspace_id: 'acme', idempotencyKey: newUuidV7(), repoId: 'web-app', prNumber: 7 });
      expect(twice.error.data.code).toBe('already_published');
      expect(f.github.pulls.get(7)!.reviews).toHaveLength(1);
    } finally {
      await server.close();
      await f.close();
    }
  });
});
