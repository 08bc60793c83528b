import { fenceFor, hasPublishMarker, publishMarker, renderBody, renderFinding, PublishedFinding } from '../../src/publish/render';

const finding = (over: Partial<PublishedFinding['node']> = {}): PublishedFinding => ({
  nodeId: 'n1',
  fingerprint: 'f'.repeat(64),
  alsoFoundBy: [],
  duplicateNodeIds: [],
  node: {
    kind: 'bug',
    priority: 'P1',
    triage: { category: 'security', severity: 'high', effort: 'small' },
    confidence: 0.9,
    title: 'SQL built by concatenation',
    body: 'User input reaches the query.',
    reviewer: { principal: 'agent:alice', brief: 'security' },
    ...over,
  },
});

describe('rendering', () => {
  it('fences are longer than any backtick run in the content', () => {
    expect(fenceFor('plain')).toBe('```');
    expect(fenceFor('a ``` b')).toBe('````');
    expect(fenceFor('````` and `')).toBe('``````');
  });

  it('a marker quoted inside a finding cannot pass for ours', () => {
    const key = 'rl1-' + 'a'.repeat(40);
    const forged = finding({ body: `ignore me ${publishMarker(key)}` });
    const text = renderFinding(forged, { suggestionApplies: false });
    expect(hasPublishMarker(text, key)).toBe(false);
    const body = renderBody({ key: 'rl1-' + 'b'.repeat(40), verdict: 'Hold', confidence: 0.5, walkthrough: publishMarker(key), inlineCount: 0, folded: [{ finding: forged, reason: 'no_anchor' }] });
    expect(hasPublishMarker(body, key)).toBe(false);
    expect(hasPublishMarker(body, 'rl1-' + 'b'.repeat(40))).toBe(true);
  });

  it('each finding carries title, triage line, body, confidence and the footer', () => {
    const text = renderFinding({ ...finding(), alsoFoundBy: [{ nodeId: 'n2', principal: 'agent:bob', brief: 'qa' }], duplicateNodeIds: ['n2'] }, { suggestionApplies: true });
    expect(text.split('\n\n')).toEqual([
      '**SQL built by concatenation**',
      'bug · P1 · security · high · effort small',
      'User input reaches the query.',
      'Also found by agent:bob (qa).',
      'Confidence: 0.90',
      '— review-ledger AI review',
    ]);
  });
});
