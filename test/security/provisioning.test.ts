import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { workspaceFold } from '../../src/workspaces/workspace-state';
import { loadServerKey } from '../../src/workspaces/server-key';
import { deriveToken } from '../../src/commands/issue-token';
import { BASE, call, command, HEAD_A, nodePayload, serverFixture, tokenFor } from '../rpc/support';

/**
 * Principals are provisioned, never asserted (SPEC §16, issue 19): tokens only for existing members, never
 * above the issuer's role or the membership, never by an agent for a human, never for an owner by anyone
 * below owner; agents never hold admin or owner; the role lives with the membership. Real server, real
 * sockets, the first-start owner token.
 */
describe('identities are provisioned, never asserted', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  let admin: string;
  const target = { repoId: 'prov-repo', prNumber: 3 };
  const codeOf = (r: { error?: { data?: { code: string } } }) => r.error?.data?.code;
  const tokenIdOf = (t: string) => t.split('_')[2];

  beforeAll(async () => {
    fx = await serverFixture();
    admin = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:ada-admin', 'admin');
    expect(codeOf(await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A }))).toBeUndefined();
  });
  afterAll(async () => {
    await fx.close();
  });

  const run = (token: string, method: string, payload: Record<string, unknown>) => command(fx.server.url, token, fx.workspaceId, method, payload);

  it('issueToken mints only for an existing member: an admin cannot invent a second identity', async () => {
    const invented = await run(admin, 'issueToken', { principal: 'user:sock-puppet', role: 'member' });
    expect([codeOf(invented), invented.error?.message]).toEqual(['not_a_member', expect.stringContaining('user:sock-puppet is not a member')]);
    expect(invented.result).toBeUndefined();
  });

  it('an admin never mints a token for the owner principal, whatever role it asks for', async () => {
    for (const role of ['owner', 'admin', 'member', 'viewer']) {
      const r = await run(admin, 'issueToken', { principal: 'user:local-operator', role });
      expect([role, codeOf(r)]).toEqual([role, 'forbidden']);
    }
    // The owner itself may.
    const own = await run(fx.ownerToken, 'issueToken', { principal: 'user:local-operator', role: 'viewer' });
    expect(own.result.result.token).toMatch(/^rl_/);
  });

  it('never above the issuer role nor above the membership', async () => {
    await run(fx.ownerToken, 'addMember', { principal: 'user:vic-viewer', role: 'viewer' });
    expect(codeOf(await run(admin, 'issueToken', { principal: 'user:vic-viewer', role: 'member' }))).toBe('forbidden');
    expect((await run(admin, 'issueToken', { principal: 'user:vic-viewer', role: 'viewer' })).result.result.token).toMatch(/^rl_/);
    expect(codeOf(await run(admin, 'addMember', { principal: 'user:would-be-owner', role: 'owner' }))).toBe('forbidden');
  });

  it('agents never hold admin or owner: addMember, changeMemberRole and issueToken all refuse', async () => {
    for (const role of ['admin', 'owner']) {
      expect([role, codeOf(await run(fx.ownerToken, 'addMember', { principal: `agent:boss-${role}`, role }))]).toEqual([role, 'forbidden']);
    }
    expect(codeOf(await run(fx.ownerToken, 'addMember', { principal: 'agent:worker', role: 'member' }))).toBeUndefined();
    expect(codeOf(await run(fx.ownerToken, 'changeMemberRole', { principal: 'agent:worker', role: 'admin' }))).toBe('forbidden');
    expect(codeOf(await run(fx.ownerToken, 'issueToken', { principal: 'agent:worker', role: 'admin' }))).toBe('forbidden');
  });

  it('an agent never mints a human token — not even one holding admin in a log written before these rules', async () => {
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:minter', 'member');
    await run(fx.ownerToken, 'addMember', { principal: 'user:hugh-human', role: 'member' });
    const minted = await run(agent, 'issueToken', { principal: 'user:hugh-human', role: 'member' });
    expect(codeOf(minted)).toBe('forbidden');
    expect(minted.result).toBeUndefined();
    // A log from before these rules: an agent made admin, holding an admin token (appended as the old server did).
    const ws = await fx.server.ledger.workspace(fx.workspaceId);
    const { state, revision } = await fx.server.ledger.executor.load(workspaceFold, ws, 'workspace');
    expect(state.members['agent:legacy-admin']).toBeUndefined();
    const legacy = deriveToken(loadServerKey(fx.dataDir), fx.workspaceId, newUuidV7());
    const meta = { principal: 'user:local-operator', workspaceId: fx.workspaceId, correlationId: 'legacy', causationId: null, occurredAt: new Date().toISOString() };
    await ws.store.append('workspace', revision, [
      { eventId: newUuidV7(), type: 'MemberAdded', schemaVersion: 1, data: { principal: 'agent:legacy-admin', role: 'admin' }, metadata: meta },
      { eventId: newUuidV7(), type: 'ApiTokenIssued', schemaVersion: 1, data: { tokenId: legacy.tokenId, tokenHash: legacy.tokenHash, principal: 'agent:legacy-admin', role: 'admin' }, metadata: meta },
    ]);
    const byLegacy = await run(legacy.token, 'issueToken', { principal: 'user:hugh-human', role: 'member' });
    expect([codeOf(byLegacy), byLegacy.error?.message]).toEqual(['forbidden', expect.stringContaining('caller has member')]);
    expect(codeOf(await run(legacy.token, 'addMember', { principal: 'user:hugh-2', role: 'viewer' }))).toBe('forbidden');
  });

  it('removeMember ends every token of the principal at once: a removed admin cannot mint or act (the warm token cache included)', async () => {
    const doomed = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:doomed-admin', 'admin');
    await run(fx.ownerToken, 'addMember', { principal: 'user:doomed-friend', role: 'member' });
    // Warm the verified-token cache on the hot path.
    expect((await call(fx.server.url, doomed, 'review_studio.verdict', { workspace_id: fx.workspaceId, ...target })).result.value.exists).toBe(true);
    expect(codeOf(await run(fx.ownerToken, 'removeMember', { principal: 'user:doomed-admin' }))).toBeUndefined();
    const mint = await run(doomed, 'issueToken', { principal: 'user:doomed-friend', role: 'member' });
    expect([codeOf(mint), mint.error?.message]).toEqual(['unauthorized', expect.stringContaining('no longer a member')]);
    expect(codeOf(await run(doomed, 'addReviewNode', { ...target, node: nodePayload('by a removed admin') }))).toBe('unauthorized');
    expect(codeOf(await call(fx.server.url, doomed, 'review_studio.verdict', { workspace_id: fx.workspaceId, ...target }))).toBe('unauthorized');
  });

  it('a demotion takes effect on every token at once: a demoted admin cannot mint', async () => {
    const t1 = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:dee-demoted', 'admin');
    const t2 = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:dee-demoted', 'admin');
    await run(fx.ownerToken, 'addMember', { principal: 'user:dee-friend', role: 'viewer' });
    expect((await run(t1, 'issueToken', { principal: 'user:dee-friend', role: 'viewer' })).result.result.token).toMatch(/^rl_/);
    expect(codeOf(await run(fx.ownerToken, 'changeMemberRole', { principal: 'user:dee-demoted', role: 'member' }))).toBeUndefined();
    for (const t of [t1, t2]) expect(codeOf(await run(t, 'issueToken', { principal: 'user:dee-friend', role: 'viewer' }))).toBe('forbidden');
    // Still a member: member acts keep working.
    expect(codeOf(await run(t2, 'addReviewNode', { ...target, node: nodePayload('by a demoted admin') }))).toBeUndefined();
  });

  it('a removal by another process (the CLI) is seen by the server on the next call', async () => {
    const t = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:cli-removed', 'member');
    expect((await call(fx.server.url, t, 'review_studio.verdict', { workspace_id: fx.workspaceId, ...target })).result.value.exists).toBe(true);
    const out = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(process.execPath, [path.resolve(__dirname, '../../bin/review-ledger.js'), '--data-dir', fx.dataDir, 'member', 'remove', '--workspace', fx.workspaceId, '--principal', 'user:cli-removed'], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' } }, (err, _o, stderr) =>
        resolve({ code: err ? 1 : 0, stderr }),
      ),
    );
    expect(out).toEqual({ code: 0, stderr: '' });
    expect(codeOf(await call(fx.server.url, t, 'review_studio.verdict', { workspace_id: fx.workspaceId, ...target }))).toBe('unauthorized');
  }, 60_000);

  it("the audit row of an act names the acting token's issuer chain, and the role it acted with", async () => {
    const carol = await (async () => {
      await run(fx.ownerToken, 'addMember', { principal: 'user:carol', role: 'member' });
      const r = await run(admin, 'issueToken', { principal: 'user:carol', role: 'member' });
      return r.result.result.token as string;
    })();
    const filed = await run(carol, 'addReviewNode', { ...target, node: nodePayload('chain of custody') });
    const peer = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:peer', 'member');
    const nodeId = filed.result.result.nodeId;
    // Carol cannot confirm her own finding; her reviewer confirms it, then carol resolves it.
    expect(codeOf(await run(peer, 'confirmNode', { ...target, nodeId }))).toBeUndefined();
    expect(codeOf(await run(carol, 'resolveNode', { ...target, nodeId, reason: 'fixed' }))).toBeUndefined();
    const audit = await call(fx.server.url, fx.ownerToken, 'review_studio.audit', { workspace_id: fx.workspaceId, actor: 'user:carol' });
    const row = audit.result.value.rows.find((r: { action: string }) => r.action === 'resolve');
    expect(row).toEqual(
      expect.objectContaining({
        actor: 'user:carol',
        role: 'member',
        via: 'rpc',
        tokenId: tokenIdOf(carol),
        // No identity provider: a human acting with a token an admin minted.
        authn: 'admin-provisioned',
        signIn: null,
        issuerChain: [
          { principal: 'user:ada-admin', tokenId: tokenIdOf(admin), via: 'rpc' },
          { principal: 'user:local-operator', tokenId: tokenIdOf(fx.ownerToken), via: 'rpc' },
          { principal: 'user:local-operator', tokenId: null, via: 'server' },
        ],
      }),
    );
  });

  it('an idempotent replay is bound to its caller: an admin replaying the owner key of issueToken never gets the token', async () => {
    await run(fx.ownerToken, 'addMember', { principal: 'user:olivia', role: 'member' });
    const key = newUuidV7();
    const payload = { workspace_id: fx.workspaceId, idempotencyKey: key, principal: 'user:olivia', role: 'member' };
    const original = await call(fx.server.url, fx.ownerToken, 'issueToken', payload);
    const token = original.result.result.token as string;
    const replayed = await call(fx.server.url, admin, 'issueToken', payload);
    expect(codeOf(replayed)).toBe('idempotency_key_reused');
    expect(JSON.stringify(replayed)).not.toContain(token);
    expect(JSON.stringify(replayed)).not.toContain(tokenIdOf(token));
    // The original caller still gets the byte-identical answer.
    expect(JSON.stringify((await call(fx.server.url, fx.ownerToken, 'issueToken', payload)).result)).toBe(JSON.stringify(original.result));
  });

  it('an idempotent replay is authorized first: after the member became an owner, the admin who minted for it cannot replay', async () => {
    await run(fx.ownerToken, 'addMember', { principal: 'user:rising', role: 'member' });
    const payload = { workspace_id: fx.workspaceId, idempotencyKey: newUuidV7(), principal: 'user:rising', role: 'member' };
    const first = await call(fx.server.url, admin, 'issueToken', payload);
    expect(first.result.result.token).toMatch(/^rl_/);
    expect(codeOf(await run(fx.ownerToken, 'changeMemberRole', { principal: 'user:rising', role: 'owner' }))).toBeUndefined();
    const again = await call(fx.server.url, admin, 'issueToken', payload);
    expect(codeOf(again)).toBe('forbidden');
    expect(JSON.stringify(again)).not.toContain(first.result.result.token);
  });
});
