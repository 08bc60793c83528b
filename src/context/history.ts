import { parseReviewStream } from '../commands/review-target';
import type { RecordedEvent } from '../events/envelope';
import type { ReviewNodeBody } from '../events/catalogue/review';

/** One review node anchored to a stable symbol id: what an earlier review said about that code, and how it ended. */
export interface HistoryEntry {
  streamId: string;
  prNumber: number;
  nodeId: string;
  round: number;
  headSha: string;
  symbolId: string;
  kind: string;
  priority: string;
  category: string;
  title: string;
  body: string;
  author: string;
  status: 'open' | 'consensus-ready' | 'resolved' | 'dismissed';
  closedBy?: string;
  closedReason?: string;
}

/**
 * The ledger's memory of one repo: review nodes of every PR stream of the repo, indexed by the symbol id
 * their anchor names. Only anchors with a symbol id count: a path-and-lines anchor from another head
 * says nothing reliable about which definition it meant, and a guess would be a name-match.
 */
export interface HistoryState {
  repoId: string;
  /** `${streamId}/${nodeId}` → entry. */
  entries: Record<string, HistoryEntry>;
  /** symbolId → entry keys, in filing order. */
  bySymbol: Record<string, string[]>;
  /** streamId → current round. */
  rounds: Record<string, number>;
}

export const HISTORY_EVENT_TYPES = new Set(['ReviewRequested', 'ReviewRoundStarted', 'ReviewNodeFiled', 'ReviewNodeConfirmed', 'ReviewNodeDismissed', 'ReviewNodeResolved']);

export const initialHistoryState = (repoId: string): HistoryState => ({ repoId, entries: {}, bySymbol: {}, rounds: {} });

export function isHistoryEvent(repoId: string, e: RecordedEvent): boolean {
  if (!HISTORY_EVENT_TYPES.has(e.type)) return false;
  return parseReviewStream(e.streamId)?.repoId === repoId;
}

export function evolveHistory(s: HistoryState, e: RecordedEvent): HistoryState {
  if (!isHistoryEvent(s.repoId, e)) return s;
  const d = e.data as Record<string, any>;
  switch (e.type) {
    case 'ReviewRequested':
      s.rounds[e.streamId] ??= 1;
      break;
    case 'ReviewRoundStarted':
      s.rounds[e.streamId] = d.round as number;
      break;
    case 'ReviewNodeFiled': {
      const node = d.node as ReviewNodeBody;
      const symbolId = node.anchor?.symbolId;
      if (!symbolId) break;
      const key = `${e.streamId}/${d.nodeId}`;
      s.entries[key] = {
        streamId: e.streamId,
        prNumber: parseReviewStream(e.streamId)!.prNumber,
        nodeId: d.nodeId,
        round: d.round,
        headSha: d.headSha,
        symbolId,
        kind: node.kind,
        priority: node.priority,
        category: node.triage.category,
        title: node.title,
        body: node.body,
        author: node.reviewer.principal,
        status: 'open',
      };
      (s.bySymbol[symbolId] ??= []).push(key);
      break;
    }
    case 'ReviewNodeConfirmed': {
      const entry = s.entries[`${e.streamId}/${d.nodeId}`];
      // Only a different principal's confirmation makes consensus (SPEC §5).
      if (entry && entry.status === 'open' && d.by !== entry.author) entry.status = 'consensus-ready';
      break;
    }
    case 'ReviewNodeDismissed':
    case 'ReviewNodeResolved': {
      const entry = s.entries[`${e.streamId}/${d.nodeId}`];
      if (entry) {
        entry.status = e.type === 'ReviewNodeDismissed' ? 'dismissed' : 'resolved';
        entry.closedBy = d.by;
        entry.closedReason = d.reason;
      }
      break;
    }
    default:
      break;
  }
  return s;
}

/**
 * Earlier nodes on `symbolId`: every node of another PR, and nodes of this PR from rounds before the
 * current one (the current round's own nodes are the reviewer's present work, not history).
 */
export function historyOf(s: HistoryState, symbolId: string, current: { streamId: string }): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  for (const key of s.bySymbol[symbolId] ?? []) {
    const entry = s.entries[key];
    if (entry.streamId === current.streamId && entry.round >= (s.rounds[current.streamId] ?? 1)) continue;
    out.push(entry);
  }
  return out;
}
