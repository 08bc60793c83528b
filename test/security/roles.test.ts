import { COMMANDS } from '../../src/commands/registry';
import { roleAtLeast, ROLES, type Role } from '../../src/events/roles';
import { methodTable } from '../../src/rpc/methods';
import { BASE, call, command, HEAD_A, serverFixture, tokenFor, WsClient } from '../rpc/support';

/**
 * The role table of docs/rpc.md (SPEC §16), one test per row, over real sockets. "Allowed" means the
 * call got past authorization (it may still fail validation); "refused" means error.data.code forbidden.
 */
describe('roles are enforced on every method (SPEC §16 role table)', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  const tokens = {} as Record<Role | 'agent', string>;
  const target = { repoId: 'roles-repo', prNumber: 5 };
  const refused = (r: { error?: { data?: { code: string } } }) => r.error?.data?.code === 'forbidden';

  beforeAll(async () => {
    fx = await serverFixture();
    for (const role of ROLES) tokens[role] = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, `user:${role}-person`, role);
    tokens.agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:roles-bot', 'member');
    expect((await command(fx.server.url, tokens.member, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
  });
  afterAll(async () => {
    await fx.close();
  });

  it('row "read and subscribe": viewer and above; guest refused', async () => {
    for (const role of ROLES) {
      const read = await call(fx.server.url, tokens[role], 'review_studio.verdict', { workspace_id: fx.workspaceId, ...target });
      const ws = await WsClient.open(fx.server.url, tokens[role]);
      const sub = await ws.call('watchNodeStatus', { workspace_id: fx.workspaceId, ...target });
      await ws.close();
      const allowed = roleAtLeast(role, 'viewer');
      expect([role, refused(read), refused(sub)]).toEqual([role, !allowed, !allowed]);
      if (allowed) expect(read.result.value.exists).toBe(true);
    }
  });

  it('row "file, confirm, dismiss" (members and agents): member and above; viewer and guest refused', async () => {
    for (const role of [...ROLES, 'agent' as const]) {
      const r = await command(fx.server.url, tokens[role], fx.workspaceId, 'addReviewNode', { ...target, node: { kind: 'bug', priority: 'P2', triage: { category: 'correctness', severity: 'low', effort: 'small' }, confidence: 0.5, title: `by ${role}`, body: 'b', brief: 'engineer' } });
      const allowed = role === 'agent' || roleAtLeast(role, 'member');
      expect([role, refused(r)]).toEqual([role, !allowed]);
      if (allowed) expect(r.error).toBeUndefined();
      const confirm = await command(fx.server.url, tokens[role], fx.workspaceId, 'confirmNode', { ...target, nodeId: 'n1' });
      expect([role, refused(confirm)]).toEqual([role, !allowed]);
    }
  });

  it('row "human-only acts" (visual approval, publish approval, contract decisions): human member and above; agents refused', async () => {
    const humanOnly = COMMANDS.filter((c) => c.access.humanOnly).map((c) => c.name);
    expect(humanOnly.length).toBeGreaterThan(0);
    for (const name of humanOnly) {
      const byAgent = await command(fx.server.url, tokens.agent, fx.workspaceId, name, { ...target });
      expect([name, byAgent.error?.data?.code, byAgent.error?.message]).toEqual([name, 'forbidden', expect.stringContaining('human')]);
      for (const role of ROLES) {
        const r = await command(fx.server.url, tokens[role], fx.workspaceId, name, { ...target });
        expect([name, role, refused(r)]).toEqual([name, role, !roleAtLeast(role, 'member')]);
      }
    }
  });

  it('an agent cannot approve a visual change; a human member gets past the role gate', async () => {
    const byAgent = await command(fx.server.url, tokens.agent, fx.workspaceId, 'review_studio.approveVisual', { ...target });
    expect(byAgent.error).toEqual(expect.objectContaining({ code: -32003, data: { code: 'forbidden' }, message: expect.stringContaining('human') }));
    const byHuman = await command(fx.server.url, tokens.member, fx.workspaceId, 'review_studio.approveVisual', { ...target });
    expect(byHuman.error?.data?.code).not.toBe('forbidden');
  });

  it('row "tokens and members": admin and owner; member, viewer, guest and agents refused', async () => {
    for (const role of [...ROLES, 'agent' as const]) {
      // Tokens are minted only for members: the owner provisions the principal first.
      expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addMember', { principal: `agent:issued-by-${role}`, role: 'viewer' })).error).toBeUndefined();
      const issue = await command(fx.server.url, tokens[role], fx.workspaceId, 'issueToken', { principal: `agent:issued-by-${role}`, role: 'viewer' });
      const member = await command(fx.server.url, tokens[role], fx.workspaceId, 'addMember', { principal: `user:added-by-${role}`, role: 'viewer' });
      const allowed = role !== 'agent' && roleAtLeast(role, 'admin');
      expect([role, refused(issue), refused(member)]).toEqual([role, !allowed, !allowed]);
      if (allowed) expect(issue.result.result.token).toMatch(/^rl_/);
    }
    // Nobody grants above their own role.
    const escalate = await command(fx.server.url, tokens.admin, fx.workspaceId, 'issueToken', { principal: 'user:member-person', role: 'owner' });
    expect(escalate.error!.data!.code).toBe('forbidden');
  });

  it('row "create workspaces": owner only', async () => {
    for (const role of ROLES) {
      const r = await command(fx.server.url, tokens[role], fx.workspaceId, 'createWorkspace', { workspaceId: `ws-of-${role}` });
      expect([role, refused(r)]).toEqual([role, role !== 'owner']);
    }
  });

  it('every method of the catalogue enforces its declared access for every role', async () => {
    const ws = await WsClient.open(fx.server.url, tokens.guest);
    for (const spec of methodTable().values()) {
      // A guest is below every method's minimum role: each must refuse it before doing anything.
      const r = spec.kind === 'watch' ? await ws.call(spec.name, { workspace_id: fx.workspaceId }) : await call(fx.server.url, tokens.guest, spec.name, { workspace_id: fx.workspaceId });
      expect([spec.name, spec.access.minRole === 'guest' || refused(r)]).toEqual([spec.name, true]);
    }
    await ws.close();
  });

  it('a revoked token and a demoted member lose their access at once', async () => {
    const t = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:short-lived', 'member');
    const tokenId = t.split('_')[2];
    expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'revokeToken', { tokenId })).error).toBeUndefined();
    expect((await call(fx.server.url, t, 'review_studio.verdict', { workspace_id: fx.workspaceId, ...target })).error!.data!.code).toBe('unauthorized');

    const m = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:demoted', 'member');
    expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'changeMemberRole', { principal: 'user:demoted', role: 'viewer' })).error).toBeUndefined();
    expect(refused(await command(fx.server.url, m, fx.workspaceId, 'confirmNode', { ...target, nodeId: 'n1' }))).toBe(true);
  });
});
