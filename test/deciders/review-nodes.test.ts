import { confirmNode } from '../../src/commands/confirm-node';
import { resolveNode } from '../../src/commands/resolve-node';
import { ctxOf, deciderSpec } from './spec';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const target = { repoId: 'widgets', prNumber: 7 };
const requested = { type: 'ReviewRequested', data: { ...target, baseSha: A, headSha: B, level: 'balanced', roster: ['engineer', 'qa'], rulesVersion: 'v1', requestedBy: 'user:ann', role: 'owner' } };
const filedBy = (principal: string, nodeId = 'n1') => ({
  type: 'ReviewNodeFiled',
  data: {
    nodeId,
    round: 1,
    headSha: B,
    fingerprint: 'f'.repeat(64),
    role: 'member',
    node: { kind: 'bug', priority: 'P1', triage: { category: 'correctness', severity: 'high', effort: 'small' }, confidence: 0.8, title: 'Off-by-one in total()', body: 'adds one per item', reviewer: { principal, brief: 'engineer' } },
  },
});

describe('confirmNode, given / when / then without a store', () => {
  const spec = deciderSpec(confirmNode);

  it('a peer confirms a node: one ReviewNodeConfirmed by that peer with its role', () => {
    spec
      .given([requested, filedBy('agent:eng')])
      .when({ ...target, nodeId: 'n1' }, ctxOf('agent:qa'))
      .then([{ type: 'ReviewNodeConfirmed', data: { nodeId: 'n1', by: 'agent:qa', role: 'member', note: undefined } }]);
  });

  it('the author cannot confirm its own node', () => {
    spec.given([requested, filedBy('agent:eng')]).when({ ...target, nodeId: 'n1' }, ctxOf('agent:eng')).thenRefused('self_confirmation_refused');
  });

  it('confirming twice changes nothing', () => {
    spec
      .given([requested, filedBy('agent:eng'), { type: 'ReviewNodeConfirmed', data: { nodeId: 'n1', by: 'agent:qa', role: 'member' } }])
      .when({ ...target, nodeId: 'n1' }, ctxOf('agent:qa'))
      .thenNothing();
  });

  it('a node of no review is refused: the review must exist first', () => {
    spec.given([]).when({ ...target, nodeId: 'n1' }, ctxOf('agent:qa')).thenRefused('review_not_found');
  });

  it('a node the review does not hold is refused', () => {
    spec.given([requested]).when({ ...target, nodeId: 'n9' }, ctxOf('agent:qa')).thenRefused('node_not_found');
  });

  it('a resolved node stays closed: it cannot be confirmed', () => {
    spec
      .given([requested, filedBy('agent:eng'), { type: 'ReviewNodeResolved', data: { nodeId: 'n1', by: 'user:ann', role: 'owner', reason: 'fixed in 1a2b' } }])
      .when({ ...target, nodeId: 'n1' }, ctxOf('agent:qa'))
      .thenRefused('node_closed');
  });
});

describe('resolveNode, given / when / then without a store', () => {
  it('a live node cannot be resolved twice: the first close wins', () => {
    deciderSpec(resolveNode)
      .given([requested, filedBy('agent:eng'), { type: 'ReviewNodeResolved', data: { nodeId: 'n1', by: 'user:ann', role: 'owner', reason: 'fixed' } }])
      .when({ ...target, nodeId: 'n1', reason: 'fixed again' }, ctxOf('user:bob', 'admin'))
      .thenRefused('node_closed');
  });
});
