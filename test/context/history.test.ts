import type { RecordedEvent } from '../../src/events/envelope';
import { evolveHistory, historyOf, initialHistoryState } from '../../src/context/history-fold';

const H1 = 'a'.repeat(40);
const H2 = 'b'.repeat(40);
let position = 0;
const event = (streamId: string, type: string, data: unknown): RecordedEvent =>
  ({ eventId: `e${++position}`, streamId, streamRevision: 0, globalPosition: position, type, schemaVersion: 1, data, metadata: {} }) as unknown as RecordedEvent;

const node = (anchor: Record<string, unknown>, title = 't') => ({
  kind: 'bug', priority: 'P2', triage: { category: 'correctness', severity: 'medium', effort: 'small' }, anchor, confidence: 0.5, title, body: '', reviewer: { principal: 'agent:a', brief: 'engineer' },
});
const filed = (stream: string, nodeId: string, headSha: string, anchor: Record<string, unknown>, round = 1) => event(stream, 'ReviewNodeFiled', { nodeId, round, headSha, fingerprint: 'f'.repeat(64), role: 'member', node: node(anchor, nodeId) });
const computed = (stream: string, headSha: string) =>
  event(stream, 'ReviewComputed', {
    headSha,
    cohorts: [
      {
        fragments: [
          { path: 'src/a.ts', side: 'head', startLine: 3, endLine: 9, symbolId: 'src/a.ts#Box' },
          { path: 'src/a.ts', side: 'head', startLine: 5, endLine: 7, symbolId: 'src/a.ts#Box.open' },
          { path: 'src/a.ts', side: 'base', startLine: 20, endLine: 25, symbolId: 'src/a.ts#removed' },
          { path: 'src/a.ts', side: 'head', startLine: 1, endLine: 1 },
        ],
      },
    ],
  });

const fold = (events: RecordedEvent[]) => events.reduce((s, e) => evolveHistory(s, e), initialHistoryState('shop'));

describe('review history by symbol (pure fold)', () => {
  it('maps a line anchor to the innermost recorded fragment at the node head, whichever comes first', () => {
    const nodeFirst = fold([event('pr-shop-1', 'ReviewRequested', {}), filed('pr-shop-1', 'n1', H1, { path: 'src/a.ts', startLine: 6, endLine: 6 }), computed('pr-shop-1', H1)]);
    const computeFirst = fold([event('pr-shop-1', 'ReviewRequested', {}), computed('pr-shop-1', H1), filed('pr-shop-1', 'n1', H1, { path: 'src/a.ts', startLine: 6, endLine: 6 })]);
    for (const s of [nodeFirst, computeFirst]) {
      expect(s.bySymbol).toEqual({ 'src/a.ts#Box.open': ['pr-shop-1/n1'] });
      expect(s.entries['pr-shop-1/n1']).toMatchObject({ symbolId: 'src/a.ts#Box.open', anchoredBy: 'fragment', status: 'open' });
    }
  });

  it('maps LEFT anchors to base-side fragments and leaves lines outside any definition, or at an uncomputed head, unattached', () => {
    const s = fold([
      computed('pr-shop-1', H1),
      filed('pr-shop-1', 'n1', H1, { path: 'src/a.ts', startLine: 21, endLine: 22, side: 'LEFT' }),
      filed('pr-shop-1', 'n2', H1, { path: 'src/a.ts', startLine: 21, endLine: 22 }),
      filed('pr-shop-1', 'n3', H1, { path: 'src/a.ts', startLine: 2, endLine: 4 }),
      filed('pr-shop-1', 'n4', H2, { path: 'src/a.ts', startLine: 6, endLine: 6 }),
    ]);
    expect(s.bySymbol).toEqual({ 'src/a.ts#removed': ['pr-shop-1/n1'] });
  });

  it('keeps other repos out, follows outcomes, and counts only earlier rounds of the same PR as history', () => {
    const s = fold([
      filed('pr-other-1', 'n1', H1, { path: 'src/a.ts', startLine: 1, endLine: 1, symbolId: 'src/a.ts#Box' }),
      filed('pr-shop-1', 'n1', H1, { path: 'src/a.ts', startLine: 1, endLine: 1, symbolId: 'src/a.ts#Box' }),
      event('pr-shop-1', 'ReviewNodeConfirmed', { nodeId: 'n1', by: 'agent:a' }),
      filed('pr-shop-2', 'n1', H1, { path: 'src/a.ts', startLine: 1, endLine: 1, symbolId: 'src/a.ts#Box' }),
      event('pr-shop-2', 'ReviewNodeConfirmed', { nodeId: 'n1', by: 'agent:b' }),
      event('pr-shop-1', 'ReviewNodeDismissed', { nodeId: 'n1', by: 'user:h', reason: 'by design' }),
      event('pr-shop-2', 'ReviewRoundStarted', { round: 2 }),
      filed('pr-shop-2', 'n2', H2, { path: 'src/a.ts', startLine: 1, endLine: 1, symbolId: 'src/a.ts#Box' }, 2),
    ]);
    expect(Object.keys(s.entries).sort()).toEqual(['pr-shop-1/n1', 'pr-shop-2/n1', 'pr-shop-2/n2']);
    expect(s.entries['pr-shop-1/n1']).toMatchObject({ status: 'dismissed', closedBy: 'user:h', closedReason: 'by design' });
    // A self-confirmation never makes consensus; another principal's does.
    expect(s.entries['pr-shop-2/n1'].status).toBe('consensus-ready');
    expect(historyOf(s, 'src/a.ts#Box', { streamId: 'pr-shop-2' }).map((h) => `${h.streamId}/${h.nodeId}`)).toEqual(['pr-shop-1/n1', 'pr-shop-2/n1']);
    expect(historyOf(s, 'src/a.ts#Box', { streamId: 'pr-shop-3' })).toHaveLength(3);
  });
});
