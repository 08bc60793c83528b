import { newUuidV7 } from '../../src/events/ids';
import { methodTable } from '../../src/rpc/methods';
import { call, command, serverFixture, tokenFor, WsClient } from '../rpc/support';

/**
 * The role × method matrix (SPEC §16, issue 19), written out by hand from the SPEC — NOT derived from the
 * server's `access` declarations or its role functions. Every registered RPC method must have a row:
 * adding a method without deciding who may call it fails this test.
 *
 *   viewer        read and subscribe
 *   member        file, confirm, dismiss, compute (members and agents)
 *   human-member  contract decisions, visual approvals, publish approvals: a human, member or above
 *   admin         tokens, members, repos, review level, rules
 *   owner         create workspaces
 */
type Need = 'viewer' | 'member' | 'human-member' | 'admin' | 'owner';

const MATRIX: Record<string, Need> = {
  createWorkspace: 'owner',
  'review_studio.createWorkspace': 'owner',
  requestReview: 'member',
  'review_studio.requestReview': 'member',
  setReviewLevel: 'admin',
  'review_studio.setReviewLevel': 'admin',
  observeHead: 'member',
  'review_studio.observeHead': 'member',
  addReviewNode: 'member',
  'review_studio.addReviewNode': 'member',
  confirmNode: 'member',
  'review_studio.confirmNode': 'member',
  dismissNode: 'member',
  'review_studio.dismissNode': 'member',
  resolveNode: 'member',
  'review_studio.resolveNode': 'member',
  recordAxis: 'member',
  'review_studio.recordAxis': 'member',
  recordCiSignal: 'member',
  'review_studio.recordCiSignal': 'member',
  finalizeReview: 'member',
  'review_studio.finalizeReview': 'member',
  activateRules: 'admin',
  'review_studio.activateRules': 'admin',
  issueToken: 'admin',
  'review_studio.issueToken': 'admin',
  revokeToken: 'admin',
  'review_studio.revokeToken': 'admin',
  addMember: 'admin',
  'review_studio.addMember': 'admin',
  changeMemberRole: 'admin',
  'review_studio.changeMemberRole': 'admin',
  removeMember: 'admin',
  'review_studio.removeMember': 'admin',
  registerRepo: 'admin',
  'review_studio.registerRepo': 'admin',
  indexCode: 'member',
  'review_studio.indexCode': 'member',
  computeReview: 'member',
  'review_studio.computeReview': 'member',
  'review_studio.compute': 'member',
  setCohortSummary: 'member',
  'review_studio.setCohortSummary': 'member',
  addReviewDiagram: 'member',
  'review_studio.addReviewDiagram': 'member',
  // An agent's publish becomes a request a human approves (SPEC §14): the method itself is member.
  publish: 'member',
  'review_studio.publish': 'member',
  requestPublish: 'member',
  'review_studio.requestPublish': 'member',
  approvePublish: 'human-member',
  'review_studio.approvePublish': 'human-member',
  markCohortReviewed: 'member',
  'review_studio.markCohortReviewed': 'member',
  setContractDecision: 'human-member',
  'review_studio.setContractDecision': 'human-member',
  approveVisual: 'human-member',
  'review_studio.approveVisual': 'human-member',
  // SPEC §14: the verdict as a GitHub commit status is opt-in per repo by an admin.
  setVerdictStatusCheck: 'admin',
  'review_studio.setVerdictStatusCheck': 'admin',
  'review_studio.verdict': 'viewer',
  watchVerdict: 'viewer',
  'review_studio.nodeStatus': 'viewer',
  watchNodeStatus: 'viewer',
  'review_studio.reReviewDelta': 'viewer',
  watchReReviewDelta: 'viewer',
  'review_studio.reviewStatus': 'viewer',
  watchReviewStatus: 'viewer',
  'review_studio.reportingGroups': 'viewer',
  watchReportingGroups: 'viewer',
  'review_studio.ciSignals': 'viewer',
  watchCiSignals: 'viewer',
  'review_studio.audit': 'viewer',
  watchAudit: 'viewer',
  'review_studio.cohortProgress': 'viewer',
  watchCohortProgress: 'viewer',
  'review_studio.reviewMetrics': 'viewer',
  watchReviewMetrics: 'viewer',
  'review_studio.cohortContext': 'viewer',
  watchCohortContext: 'viewer',
  'review_studio.cohorts': 'viewer',
  watchCohorts: 'viewer',
  'review_studio.apiContract': 'viewer',
  watchApiContract: 'viewer',
  'review_studio.visual': 'viewer',
  watchVisual: 'viewer',
  'review_studio.dependencyDiffs': 'viewer',
  watchDependencyDiffs: 'viewer',
  'review_studio.blastRadius': 'viewer',
  watchBlastRadius: 'viewer',
  'review_studio.cohortImpact': 'viewer',
  watchCohortImpact: 'viewer',
  'review_studio.publishPreview': 'viewer',
  watchPublishPreview: 'viewer',
  'review_studio.replay': 'viewer',
  // Whether the log behind the page verifies (a read, like the audit itself).
  'review_studio.auditChain': 'viewer',
  // The code under review (issue 16): a read, like the cohorts it follows.
  'review_studio.reviewDiff': 'viewer',
  'review_studio.reviewFileLines': 'viewer',
  watchProgress: 'viewer',
};

/** Literal ranks, so the expectation does not lean on src/events/roles.ts. */
const RANK = { guest: 0, viewer: 1, member: 2, admin: 3, owner: 4 } as const;
type Role = keyof typeof RANK;
interface Identity {
  name: string;
  principal: string;
  role: Role;
  human: boolean;
}
const IDENTITIES: Identity[] = [
  ...(['owner', 'admin', 'member', 'viewer', 'guest'] as Role[]).map((role) => ({ name: `human ${role}`, principal: `user:matrix-${role}`, role, human: true })),
  // Agents hold at most member (owner and admin are refused below).
  ...(['member', 'viewer', 'guest'] as Role[]).map((role) => ({ name: `agent ${role}`, principal: `agent:matrix-${role}`, role, human: false })),
];

function expected(need: Need, who: Identity): boolean {
  if (need === 'human-member') return who.human && RANK[who.role] >= RANK.member;
  return RANK[who.role] >= RANK[need];
}

describe('the role × method matrix (every registered RPC method × every role, human and agent)', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    fx = await serverFixture();
    for (const who of IDENTITIES) {
      // The first-start owner token provisions every identity (the human owner is a co-owner).
      tokens.set(who.name, await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, who.principal, who.role));
    }
  });
  afterAll(async () => {
    await fx.close();
  });

  it('every registered method has a row, and every row is a registered method', () => {
    const registered = [...methodTable().keys()].sort();
    expect(registered.filter((m) => !(m in MATRIX))).toEqual([]);
    expect(Object.keys(MATRIX).filter((m) => !registered.includes(m))).toEqual([]);
  });

  it('agents can never be given admin or owner', async () => {
    for (const role of ['admin', 'owner']) {
      const r = await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addMember', { principal: `agent:matrix-${role}`, role });
      expect([role, r.error?.data?.code]).toEqual([role, 'forbidden']);
    }
  });

  it.each(IDENTITIES.map((who) => [who.name, who] as const))('%s: allowed exactly where the matrix says', async (_name, who) => {
    const token = tokens.get(who.name)!;
    const ws = await WsClient.open(fx.server.url, token);
    const outcomes: string[] = [];
    const wanted: string[] = [];
    try {
      for (const [name, spec] of methodTable()) {
        const need = MATRIX[name];
        if (need === undefined) continue; // reported by the first test
        // Only the envelope: an authorized caller then fails validation (or reads), so the matrix has no side effects.
        const params = { workspace_id: fx.workspaceId, ...(spec.kind === 'command' ? { idempotencyKey: newUuidV7() } : {}) };
        const reply = spec.kind === 'watch' || spec.kind === 'progress' ? await ws.call(name, params) : await call(fx.server.url, token, name, params);
        const code = reply.error?.data?.code;
        expect([name, code]).not.toEqual([name, 'unauthorized']);
        outcomes.push(`${name}: ${code === 'forbidden' ? 'refused' : 'allowed'}`);
        wanted.push(`${name}: ${expected(need, who) ? 'allowed' : 'refused'}`);
      }
    } finally {
      await ws.close();
    }
    expect(outcomes).toEqual(wanted);
  });
});
