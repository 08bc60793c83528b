import { newUuidV7 } from '../../src/events/ids';
import { call, command, serverFixture, tokenFor } from '../rpc/support';

/**
 * createWorkspace is the one command whose caller authenticates in another workspace, and its answer
 * carries the new workspace's owner token. Principal names are per workspace: the owner of workspace
 * "mal" can hold a token for a principal named like the creator of "bee" (here `user:local-operator`),
 * and replaying bee's creation key from "mal" handed out bee's owner token. A replay is answered only
 * to the token that created the workspace.
 */
describe("createWorkspace replays never hand another tenant a workspace's owner token", () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  beforeAll(async () => {
    fx = await serverFixture();
  });
  afterAll(() => fx.close());

  it('the same principal name from another workspace is refused; the creating token still gets its replay', async () => {
    const u = fx.server.url;
    const key = newUuidV7();
    const created = await call(u, fx.ownerToken, 'createWorkspace', { workspace_id: 'default', idempotencyKey: key, workspaceId: 'bee' });
    const beeOwner = created.result.result.token as string;
    // "mal" belongs to mallory, who adds a co-owner named like bee's creator and takes its token there.
    const mal = await call(u, fx.ownerToken, 'createWorkspace', { workspace_id: 'default', idempotencyKey: newUuidV7(), workspaceId: 'mal' });
    const mallory = await tokenFor(u, mal.result.result.token, 'mal', 'user:mallory', 'owner');
    const namesake = await command(u, mallory, 'mal', 'issueToken', { principal: 'user:local-operator', role: 'owner' });
    const fake = namesake.result.result.token as string;

    const replay = await call(u, fake, 'createWorkspace', { workspace_id: 'mal', idempotencyKey: key, workspaceId: 'bee' });
    expect(replay.error?.data?.code).toBe('idempotency_key_reused');
    expect(JSON.stringify(replay)).not.toContain(beeOwner);
    expect(replay.result).toBeUndefined();

    // The creator's own retry is still a replay with the same bytes.
    const again = await call(u, fx.ownerToken, 'createWorkspace', { workspace_id: 'default', idempotencyKey: key, workspaceId: 'bee' });
    expect(again.result.result.token).toBe(beeOwner);
    // A fresh key for an existing workspace is still workspace_exists.
    expect((await command(u, fake, 'mal', 'createWorkspace', { workspaceId: 'bee' })).error?.data?.code).toBe('workspace_exists');
  });
});
