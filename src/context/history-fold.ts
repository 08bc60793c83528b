import { parseReviewStream } from '../events/streams';
import type { RecordedEvent } from '../events/envelope';
import type { ReviewNodeBody } from '../events/catalogue/review';
import { catalogued } from '../events/catalogue/event-types';

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
  /** `symbol-id`: the reviewer named it; `fragment`: the anchored lines lie in a changed definition the computation at that head recorded. */
  anchoredBy: 'symbol-id' | 'fragment';
}

interface RecordedFragment {
  path: string;
  side: 'head' | 'base';
  startLine: number;
  endLine: number;
  symbolId: string;
}

interface PendingAnchor {
  key: string;
  path: string;
  side: 'head' | 'base';
  startLine: number;
  endLine: number;
}

/**
 * The ledger's memory of one repo: review nodes of every PR stream of the repo, indexed by the symbol id
 * of their anchor — the one the reviewer gave, or else the changed definition whose recorded fragment (of
 * the computation at the node's own head) contains the anchored lines. An anchor that maps to neither is
 * left out: a path-and-lines anchor from another head, matched by name or position, would be a guess.
 */
export interface HistoryState {
  repoId: string;
  /** `${streamId}/${nodeId}` → entry. */
  entries: Record<string, HistoryEntry>;
  /** symbolId → entry keys, in filing order. */
  bySymbol: Record<string, string[]>;
  /** streamId → current round. */
  rounds: Record<string, number>;
  /** `${streamId}@${headSha}` → definition fragments the computation at that head recorded. */
  fragments: Record<string, RecordedFragment[]>;
  /** `${streamId}@${headSha}` → nodes anchored by lines, filed before that head was computed. */
  pending: Record<string, PendingAnchor[]>;
}

export const HISTORY_EVENT_TYPES = new Set(['ReviewComputed', 'ReviewRequested', 'ReviewRoundStarted', 'ReviewNodeFiled', 'ReviewNodeConfirmed', 'ReviewNodeDismissed', 'ReviewNodeResolved']);

export const initialHistoryState = (repoId: string): HistoryState => ({ repoId, entries: {}, bySymbol: {}, rounds: {}, fragments: {}, pending: {} });

export function isHistoryEvent(repoId: string, e: RecordedEvent): boolean {
  if (!HISTORY_EVENT_TYPES.has(e.type)) return false;
  return parseReviewStream(e.streamId)?.repoId === repoId;
}

export function evolveHistory(s: HistoryState, raw: RecordedEvent): HistoryState {
  const e = catalogued(raw);
  if (!isHistoryEvent(s.repoId, e)) return s;
  switch (e.type) {
    case 'ReviewRequested':
      s.rounds[e.streamId] ??= 1;
      break;
    case 'ReviewRoundStarted':
      s.rounds[e.streamId] = e.data.round as number;
      break;
    case 'ReviewComputed': {
      const at = `${e.streamId}@${e.data.headSha}`;
      const recorded: RecordedFragment[] = [];
      for (const c of e.data.cohorts as Array<{ fragments: Array<{ path: string; side: 'head' | 'base'; startLine: number; endLine: number; symbolId?: string }> }>) {
        for (const f of c.fragments) if (f.symbolId) recorded.push({ path: f.path, side: f.side, startLine: f.startLine, endLine: f.endLine, symbolId: f.symbolId });
      }
      s.fragments[at] = recorded;
      for (const p of s.pending[at] ?? []) {
        const symbolId = fragmentSymbol(recorded, p);
        if (symbolId) index(s, p.key, symbolId);
      }
      delete s.pending[at];
      break;
    }
    case 'ReviewNodeFiled': {
      const node = e.data.node as ReviewNodeBody;
      const anchor = node.anchor;
      if (!anchor) break;
      const key = `${e.streamId}/${e.data.nodeId}`;
      const at = `${e.streamId}@${e.data.headSha}`;
      const lines: PendingAnchor = { key, path: anchor.path, side: anchor.side === 'LEFT' ? 'base' : 'head', startLine: anchor.startLine, endLine: anchor.endLine };
      const symbolId = anchor.symbolId ?? (s.fragments[at] ? fragmentSymbol(s.fragments[at], lines) : undefined);
      s.entries[key] = {
        streamId: e.streamId,
        prNumber: parseReviewStream(e.streamId)!.prNumber,
        nodeId: e.data.nodeId,
        round: e.data.round,
        headSha: e.data.headSha,
        symbolId: symbolId ?? '',
        kind: node.kind,
        priority: node.priority,
        category: node.triage.category,
        title: node.title,
        body: node.body,
        author: node.reviewer.principal,
        status: 'open',
        anchoredBy: anchor.symbolId ? 'symbol-id' : 'fragment',
      };
      if (symbolId) index(s, key, symbolId);
      else if (!s.fragments[at]) (s.pending[at] ??= []).push(lines);
      break;
    }
    case 'ReviewNodeConfirmed': {
      const entry = s.entries[`${e.streamId}/${e.data.nodeId}`];
      // Only a different principal's confirmation makes consensus (SPEC §5).
      if (entry && entry.status === 'open' && e.data.by !== entry.author) entry.status = 'consensus-ready';
      break;
    }
    case 'ReviewNodeDismissed':
    case 'ReviewNodeResolved': {
      const entry = s.entries[`${e.streamId}/${e.data.nodeId}`];
      if (entry) {
        entry.status = e.type === 'ReviewNodeDismissed' ? 'dismissed' : 'resolved';
        entry.closedBy = e.data.by;
        entry.closedReason = e.data.reason;
      }
      break;
    }
    default:
      break;
  }
  return s;
}

/** The innermost recorded definition fragment containing the anchored lines, on the anchor's side. */
function fragmentSymbol(fragments: readonly RecordedFragment[], a: Omit<PendingAnchor, 'key'>): string | undefined {
  let best: RecordedFragment | undefined;
  for (const f of fragments) {
    if (f.path !== a.path || f.side !== a.side || f.startLine > a.startLine || f.endLine < a.endLine) continue;
    if (!best || f.endLine - f.startLine < best.endLine - best.startLine) best = f;
  }
  return best?.symbolId;
}

function index(s: HistoryState, key: string, symbolId: string): void {
  s.entries[key].symbolId = symbolId;
  (s.bySymbol[symbolId] ??= []).push(key);
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
