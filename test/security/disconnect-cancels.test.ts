import { newUuidV7 } from '../../src/events/ids';
import { GitRepo } from '../../src/git/repo';
import { RpcDispatcher } from '../../src/rpc/dispatcher';
import { GitFixture } from '../support/git-fixture';
import { serverFixture } from '../rpc/support';

/**
 * Issue 36: a viewer's batch of 100 `reviewDiff` calls cost ~110 s of server work that went on after the
 * client disconnected. The transports now abort a request's signal when its client goes away (HTTP
 * response closed unanswered, WebSocket closed): the reads and queries left in its batch are not run,
 * commands still are (their keys make a retry safe), and a running diff's git process is stopped.
 */
describe('work for a client that went away stops', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  beforeAll(async () => {
    fx = await serverFixture();
  });
  afterAll(() => fx.close());

  it('a batch whose client is gone: its reads are request_cancelled, its command still runs', async () => {
    const dispatcher = fx.server.app.get(RpcDispatcher);
    const reads = Array.from({ length: 5 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'review_studio.audit', params: { workspace_id: fx.workspaceId, limit: 1 } }));
    const write = { jsonrpc: '2.0', id: 'w', method: 'addMember', params: { workspace_id: fx.workspaceId, idempotencyKey: newUuidV7(), principal: 'user:late-writer', role: 'viewer' } };
    const { response } = await dispatcher.handle(JSON.stringify([...reads, write]), { bearer: fx.ownerToken, signal: AbortSignal.abort() });
    const answers = JSON.parse(response!) as Array<{ id: unknown; error?: { data: { code: string }; message: string }; result?: unknown }>;
    expect(answers.map((a) => [a.id, a.error?.data.code ?? 'ok'])).toEqual([[0, 'request_cancelled'], [1, 'request_cancelled'], [2, 'request_cancelled'], [3, 'request_cancelled'], [4, 'request_cancelled'], ['w', 'ok']]);
    expect(answers[0].error!.message).toBe('review_studio.audit: not run, the client closed its connection before it was answered');
  });

  it('the same batch with its client still there is answered in full', async () => {
    const dispatcher = fx.server.app.get(RpcDispatcher);
    const reads = Array.from({ length: 3 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'review_studio.audit', params: { workspace_id: fx.workspaceId, limit: 1 } }));
    const { response } = await dispatcher.handle(JSON.stringify(reads), { bearer: fx.ownerToken, signal: new AbortController().signal });
    expect((JSON.parse(response!) as Array<{ error?: unknown }>).map((a) => a.error)).toEqual([undefined, undefined, undefined]);
  });

  it("a git call of a request is stopped when its signal aborts (reviewDiff's patch read)", async () => {
    const g = new GitFixture('rl-cancel-');
    g.write('a.txt', 'a\n');
    g.commit('a');
    const repo = await GitRepo.open(g.dir);
    try {
      const gone = new AbortController();
      // `cat-file --batch` waits on its stdin for ever: only the abort ends it.
      const pending = repo.git(['cat-file', '--batch'], { signal: gone.signal });
      gone.abort();
      await expect(pending).rejects.toMatchObject({ code: 'request_cancelled', message: 'git cat-file: stopped, the client that asked for it went away' });
    } finally {
      repo.close();
      g.cleanup();
    }
  });
});
