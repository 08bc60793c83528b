import type { StreamFold } from '../events/kernel-types';
import type { ApiContractComputation, VisualComputation } from '../axes/types';
import type { RecordedEvent } from '../events/envelope';
import type { LadderStatus, ReviewerBrief, ReviewNodeBody, TokenAxes, Verdict } from '../events/catalogue/review';
import type { ReviewLevel } from '../events/catalogue/workspace';
import type { Role } from '../events/roles';
import type { WorkspaceHandle } from '../workspaces/registry';
import { loadStream, type LoadOptions } from '../workspaces/load-stream';
import { countsAsConsensus } from './consensus';
import { catalogued, type EventOfType } from '../events/catalogue/event-types';

/** `superseded`: an outdated node whose re-review (a re-filed node with its fingerprint) replaced it (SPEC §5). */
export type NodeStatus = 'open' | 'consensus-ready' | 'resolved' | 'dismissed' | 'superseded';

export interface Confirmation {
  by: string;
  role: Role;
  at: number;
}

/** What the verdict needs of a node's body; a lean fold (verdict projection, rebuilds) keeps only this. */
export type NodeCore = Pick<ReviewNodeBody, 'priority' | 'confidence'>;

export interface NodeRecord<B extends NodeCore = ReviewNodeBody> {
  nodeId: string;
  /** The round it was filed in (its head is the round's head). */
  round: number;
  fingerprint: string;
  author: string;
  authorRole: Role;
  node: B;
  /** Global position of the filing: the "earliest" of SPEC §5 duplicates and the as-of cut. */
  filedAt: number;
  status: NodeStatus;
  /** Every confirmation recorded, including any that do not count (a forged self-confirmation stays visible). */
  confirmations: Confirmation[];
  closed?: { by: string; role: Role; reason: string; at: number };
  /** The node of an earlier round this re-filed report joined (SPEC §5 carry-over). */
  joins?: string;
  /** Confirmations recorded before its anchored code changed (outdated): kept for the record, they no longer count. */
  outdatedConfirmations?: Confirmation[];
}

/** One node's fate when a round started: carried unchanged, outdated (code changed) or gone (code deleted). */
export interface CarryRecord {
  fate: 'carried' | 'outdated' | 'gone';
  reason?: string;
}

export interface RoundRecord {
  round: number;
  headSha: string;
  baseSha: string;
  startedAt: number;
  /** Started by a compute at a head no round had reviewed, rather than by a request. */
  implicit?: boolean;
  nodeIds: string[];
  /**
   * SPEC §5 carry-over from the previous round (absent when none was recorded, e.g. logs older than it):
   * nodeId → its fate, for every node of round `fromRound`.
   */
  carry?: {
    fromRound: number;
    fromHead: string;
    entries: Record<string, CarryRecord>;
    /** fingerprint → the first carried or outdated node with it: a re-filed report finds what it joins in O(1). */
    byFingerprint: Record<string, string>;
  };
}

export interface Finalization {
  round: number;
  headSha: string;
  verdict: Verdict;
  confidence: number;
  rulesVersion: string;
  tokenAxes: TokenAxes;
  consensusNodeIds: string[];
  by: string;
  at: number;
}

export interface RecordedAxis {
  status: string;
  reason?: string;
  headSha: string;
  by: string;
  at: number;
}

/**
 * One review (the PR stream) folded: everything the deciders and the review projections need. Plain
 * JSON data only (no Map/Set), so a snapshot is `canonicalJson(state)` and folding on from a parsed
 * snapshot gives byte-identical answers.
 */
export interface PrState<B extends NodeCore = ReviewNodeBody> {
  exists: boolean;
  repoId?: string;
  prNumber?: number;
  level: ReviewLevel;
  roster: ReviewerBrief[];
  requestedBy?: string;
  status: LadderStatus;
  rounds: RoundRecord[];
  observedHead: string | null;
  /** The source time of the observation that set observedHead, when the source gave one. */
  observedHeadAt: string | null;
  nodes: Record<string, NodeRecord<B>>;
  nodeCount: number;
  /** Latest computation per head sha (only what the axes need). */
  computes: Record<string, { baseSha: string; apiContract: ApiContractComputation; visual: VisualComputation; at: number }>;
  contractDecisions: Record<string, { decision: 'approved' | 'rejected'; by: string; at: number }>;
  /** approvalKey → approval (SPEC §12: an approval approves an image). */
  visualApprovals: Record<string, { snapshotId: string; by: string; at: number }>;
  /** `${headSha}/${axis}` → latest recorded result. */
  recordedAxes: Record<string, RecordedAxis>;
  /** `${headSha}/${check name}` → latest signal. */
  ciSignals: Record<string, { name: string; status: string; conclusion?: string; url?: string; headSha: string; at: number }>;
  finalization: Finalization | null;
  publishRequests: Record<string, { selection: string; by: string; needsApproval: boolean; approvedBy?: string; at: number }>;
  lastPosition: number;
}

/**
 * A record keyed by ids (node ids, fingerprints, …). Null-prototype objects start in V8's dictionary mode:
 * a plain `{}` would build a new hidden class for every key added, which measurably dominated rebuilds.
 */
export function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

export function initialPrState<B extends NodeCore = ReviewNodeBody>(): PrState<B> {
  return {
    exists: false,
    level: 'balanced',
    roster: [],
    status: 'requested',
    rounds: [],
    observedHead: null,
    observedHeadAt: null,
    nodes: dict(),
    nodeCount: 0,
    computes: dict(),
    contractDecisions: dict(),
    visualApprovals: dict(),
    recordedAxes: dict(),
    ciSignals: dict(),
    finalization: null,
    publishRequests: dict(),
    lastPosition: 0,
  };
}

export const currentRound = (s: PrState<NodeCore>): RoundRecord | undefined => s.rounds[s.rounds.length - 1];

export const isLive = (n: NodeRecord<NodeCore>): boolean => n.status === 'open' || n.status === 'consensus-ready';

/** A newer head has been observed than the one the current round reviews (SPEC §10). */
export function isStale(s: PrState<NodeCore>): boolean {
  const round = currentRound(s);
  return !!round && s.observedHead !== null && s.observedHead !== round.headSha;
}

/** Shared by every unconfirmed node (most of them): one array less per node in a rebuild. Never pushed to. */
// Frozen: a push onto the shared array would throw instead of confirming every node at once.
const NO_CONFIRMATIONS = Object.freeze([]) as unknown as Confirmation[];

/**
 * Mutates and returns `s`: the hot path of every rebuild, so no copies. `lean` keeps only the node
 * fields the verdict reads: a 1M-event rebuild holds ~300 MB instead of ~480 MB (measured; the speed is
 * about the same, bench:projections reports both).
 */
export function evolvePr<B extends NodeCore = ReviewNodeBody>(s: PrState<B>, e: RecordedEvent, lean = false): PrState<B> {
  // The stores hand out the catalogue's interned type (catalogue/index.ts internedType): this switch compares pointers.
  const ev = catalogued(e);
  s.lastPosition = e.globalPosition;
  switch (ev.type) {
    case 'ReviewRequested': {
      const d = ev.data;
      s.exists = true;
      s.repoId = d.repoId;
      s.prNumber = d.prNumber;
      s.level = d.level;
      s.roster = d.roster;
      s.requestedBy = d.requestedBy;
      s.status = 'requested';
      s.rounds.push({ round: 1, headSha: d.headSha, baseSha: d.baseSha, startedAt: e.globalPosition, nodeIds: [] });
      break;
    }
    case 'ReviewRoundStarted':
      s.rounds.push({ round: s.rounds.length + 1, headSha: ev.data.headSha, baseSha: ev.data.baseSha, startedAt: e.globalPosition, nodeIds: [] });
      break;
    case 'ReviewStatusChanged':
      s.status = ev.data.to;
      break;
    case 'HeadObserved':
      s.observedHead = ev.data.headSha;
      s.observedHeadAt = ev.data.observedAt ?? null;
      break;
    case 'ReviewComputed': {
      const d = ev.data;
      s.computes[d.headSha] = { baseSha: d.baseSha, apiContract: d.apiContract, visual: d.visual, at: e.globalPosition };
      // A compute at a head no round has reviewed yet means the review moved on to that head.
      if (s.exists && !s.rounds.some((r) => r.headSha === d.headSha)) {
        s.rounds.push({ round: s.rounds.length + 1, headSha: d.headSha, baseSha: d.baseSha, startedAt: e.globalPosition, implicit: true, nodeIds: [] });
        s.status = 'in_progress';
      }
      // The compute engineer records no status change: the first compute starts the work (SPEC §10).
      if (s.status === 'requested') s.status = 'in_progress';
      break;
    }
    case 'ReviewNodeFiled': {
      const d = ev.data;
      const author = d.node.reviewer.principal;
      s.nodeCount++;
      s.nodes[d.nodeId] = {
        nodeId: d.nodeId,
        round: d.round,
        fingerprint: d.fingerprint,
        author,
        authorRole: d.role,
        node: (lean ? { priority: d.node.priority, confidence: d.node.confidence } : d.node) as B,
        filedAt: e.globalPosition,
        status: 'open',
        confirmations: NO_CONFIRMATIONS,
      };
      const last = currentRound(s);
      const round = last && last.round === d.round ? last : (s.rounds.find((r) => r.round === d.round) ?? last);
      round?.nodeIds.push(d.nodeId);
      if (s.status === 'requested') s.status = 'in_progress';
      if (d.joins) joinCarried(s, s.nodes[d.nodeId], d.joins, round, e.globalPosition);
      break;
    }
    case 'FindingsCarriedOver':
      carryOver(s, ev.data, lean);
      break;
    case 'ReviewNodeConfirmed': {
      const d = ev.data;
      const n = s.nodes[d.nodeId];
      if (!n) break;
      const c = { by: d.by, role: d.role, at: e.globalPosition };
      if (n.confirmations === NO_CONFIRMATIONS) n.confirmations = [c];
      else n.confirmations.push(c);
      if (n.status === 'open' && countsAsConsensus(n, n.confirmations)) n.status = 'consensus-ready';
      break;
    }
    case 'ReviewNodeDismissed':
    case 'ReviewNodeResolved': {
      const d = ev.data;
      const n = s.nodes[d.nodeId];
      if (!n || !isLive(n)) break; // the first close wins; a forged second one changes nothing
      n.status = ev.type === 'ReviewNodeDismissed' ? 'dismissed' : 'resolved';
      n.closed = { by: d.by, role: d.role, reason: d.reason, at: e.globalPosition };
      break;
    }
    case 'ContractChangeDecided':
      s.contractDecisions[ev.data.changeId] = { decision: ev.data.decision, by: ev.data.by, at: e.globalPosition };
      break;
    case 'VisualChangeApproved':
      s.visualApprovals[ev.data.approvalKey] = { snapshotId: ev.data.snapshotId, by: ev.data.by, at: e.globalPosition };
      break;
    case 'AxisRecorded': {
      const d = ev.data;
      s.recordedAxes[`${d.headSha}/${d.axis}`] = { status: d.status, reason: d.reason, headSha: d.headSha, by: d.by, at: e.globalPosition };
      break;
    }
    case 'CiSignalRecorded': {
      const d = ev.data;
      s.ciSignals[`${d.headSha}/${d.name}`] = { name: d.name, status: d.status, conclusion: d.conclusion, url: d.url, headSha: d.headSha, at: e.globalPosition };
      break;
    }
    case 'ReviewFinalized': {
      const d = ev.data;
      s.finalization = {
        round: d.round,
        headSha: d.headSha,
        verdict: d.verdict,
        confidence: d.confidence,
        rulesVersion: d.rulesVersion,
        tokenAxes: d.tokenAxes,
        consensusNodeIds: d.consensusNodeIds,
        by: d.by,
        at: e.globalPosition,
      };
      break;
    }
    case 'PublishRequested':
      s.publishRequests[ev.data.requestId] = { selection: ev.data.selection, by: ev.data.by, needsApproval: ev.data.needsApproval, at: e.globalPosition };
      break;
    case 'PublishApproved':
      if (s.publishRequests[ev.data.requestId]) s.publishRequests[ev.data.requestId].approvedBy = ev.data.by;
      break;
    case 'ReviewPublished':
      // The publisher may or may not record the ladder step itself; a publication completes the review.
      s.status = 'completed';
      break;
  }
  return s;
}

/** Shared by every carried node's entry (most of them): never mutated. */
const CARRIED: CarryRecord = Object.freeze({ fate: 'carried' as const });

/**
 * Applies `FindingsCarriedOver` (facts gathered at the edge, src/review/carry-facts.ts): every node of
 * the previous round gets its fate, in that round's order, so the new round lists carried and outdated
 * nodes first, in filing order. Facts about another previous round than the one folded here (a race
 * between two round starts) are ignored: every live node is then outdated, nothing is dropped. One
 * pass over the previous round's nodes.
 */
function carryOver<B extends NodeCore>(s: PrState<B>, d: EventOfType<'FindingsCarriedOver'>['data'], lean: boolean): void {
  const cur = currentRound(s);
  const prev = s.rounds[s.rounds.length - 2];
  if (!cur || !prev || cur.round !== d.round || cur.carry) return;
  const facts: Record<string, CarryRecord> = dict();
  const moved: Record<string, { startLine: number; endLine: number }> = dict();
  if (prev.round === d.fromRound && prev.headSha === d.fromHead && cur.headSha === d.toHead) {
    for (const id of d.carried) facts[id] = CARRIED;
    for (const o of d.outdated) {
      facts[o.nodeId] = { fate: 'outdated', reason: o.reason };
      if (o.startLine !== undefined && o.endLine !== undefined) moved[o.nodeId] = { startLine: o.startLine, endLine: o.endLine };
    }
    for (const g of d.gone) facts[g.nodeId] = { fate: 'gone', reason: g.reason };
    for (const m of d.moved) moved[m.nodeId] = m;
  }
  const entries: Record<string, CarryRecord> = dict();
  const byFingerprint: Record<string, string> = dict();
  const ids: string[] = [];
  for (const id of prev.nodeIds) {
    const n = s.nodes[id];
    if (!n || n.round !== prev.round) continue;
    const live = isLive(n);
    let f = facts[id] ?? (live ? { fate: 'outdated' as const, reason: 'not checked against the new head' } : { fate: 'gone' as const, reason: 'closed; not checked against the new head' });
    // A closed finding whose code changed no longer describes anything to carry.
    if (f.fate === 'outdated' && !live) f = { fate: 'gone', reason: `${n.status}; ${f.reason ?? 'its code changed'}` };
    entries[id] = f;
    if (f.fate === 'gone') continue;
    n.round = cur.round;
    ids.push(id);
    if (byFingerprint[n.fingerprint] === undefined) byFingerprint[n.fingerprint] = id;
    // The anchor follows its lines to the new head (carried: moved; outdated: the changed range).
    const m = moved[id];
    const a = (n.node as Partial<ReviewNodeBody>).anchor;
    if (m && !lean && a) (n.node as Partial<ReviewNodeBody>) = { ...(n.node as Partial<ReviewNodeBody>), anchor: { ...a, startLine: m.startLine, endLine: m.endLine } };
    if (f.fate === 'outdated') {
      // Confirmations carry only while the anchored text is unchanged (SPEC §5).
      if (n.confirmations.length > 0) n.outdatedConfirmations = n.confirmations;
      n.confirmations = NO_CONFIRMATIONS;
      if (n.status === 'consensus-ready') n.status = 'open';
    }
  }
  cur.nodeIds = cur.nodeIds.length === 0 ? ids : ids.concat(cur.nodeIds);
  cur.carry = { fromRound: prev.round, fromHead: prev.headSha, entries, byFingerprint };
}

/**
 * A re-filed report joins the carried or outdated node it matches (the decider found it): an outdated
 * node is superseded by the re-review, which decides from now on; a carried one stays, with its
 * confirmations, and the new report is its duplicate.
 */
function joinCarried<B extends NodeCore>(s: PrState<B>, n: NodeRecord<B>, joinedId: string, round: RoundRecord | undefined, at: number): void {
  const joined = s.nodes[joinedId];
  if (!joined || !round || joined.round !== round.round || !isLive(joined)) return;
  n.joins = joinedId;
  if (round.carry?.entries[joinedId]?.fate === 'outdated') {
    joined.status = 'superseded';
    joined.closed = { by: n.author, role: n.authorRole, reason: `re-reviewed as ${n.nodeId} after its code changed`, at };
  }
}

/** The PR stream fold the review commands decide on (cached per stream by the kernel). */
export const prFold: StreamFold<PrState> = { initialState: initialPrState, evolve: evolvePr, leanEvents: true };

/**
 * The PR stream as the commands that decide on it need it: every node with only what the verdict reads
 * of its body (NodeCore), everything else as prFold has it. A filed node's title, body, reasoning and
 * anchor are ~3/4 of a PR state's bytes, and the fold cache's budget (REVIEW_LEDGER_FOLD_CACHE_BYTES)
 * then holds ~2.5× as many PRs before a command has to fold its PR again. Commands that carry findings
 * over to a new round read anchors and keep prFold (requestReview, computeReview).
 */
export const prDecisionFold: StreamFold<PrState<NodeCore>> = { initialState: initialPrState, evolve: (s, e) => evolvePr(s, e, true), leanEvents: true };

/** The decision fold's state of a PR stream (prDecisionFold); `options` as for loadPrState. */
export async function loadPrDecisionState(ws: WorkspaceHandle, streamId: string, options: LoadOptions = {}): Promise<PrState<NodeCore>> {
  return (await loadStream(prDecisionFold, ws, streamId, options)).state;
}

/** `options.forDecision`: see LoadOptions — only for a state a decision re-checks (never a client's read). */
export async function loadPrState(ws: WorkspaceHandle, streamId: string, options: LoadOptions = {}): Promise<PrState> {
  return (await loadStream(prFold, ws, streamId, options)).state;
}

/** The finalization of the current round, if any (an older round's finalization describes another head). */
export function currentFinalization(s: PrState<NodeCore>): Finalization | null {
  const round = currentRound(s);
  return s.finalization && round && s.finalization.round === round.round ? s.finalization : null;
}
