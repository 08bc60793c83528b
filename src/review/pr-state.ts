import type { StreamFold } from '../commands/kernel';
import type { ApiContractComputation, VisualComputation } from '../axes/types';
import type { RecordedEvent } from '../events/envelope';
import type { LadderStatus, ReviewerBrief, ReviewNodeBody, TokenAxes, Verdict } from '../events/catalogue/review';
import type { ReviewLevel } from '../events/catalogue/workspace';
import type { Role } from '../security/roles';
import { countsAsConsensus } from './consensus';

export type NodeStatus = 'open' | 'consensus-ready' | 'resolved' | 'dismissed';

export interface Confirmation {
  by: string;
  role: Role;
  at: number;
}

export interface NodeRecord {
  nodeId: string;
  round: number;
  headSha: string;
  fingerprint: string;
  author: string;
  authorRole: Role;
  node: ReviewNodeBody;
  /** Global position of the filing: the "earliest" of SPEC §5 duplicates and the as-of cut. */
  filedAt: number;
  status: NodeStatus;
  /** Every confirmation recorded, including any that do not count (a forged self-confirmation stays visible). */
  confirmations: Confirmation[];
  closed?: { by: string; role: Role; reason: string; at: number };
}

export interface RoundRecord {
  round: number;
  headSha: string;
  baseSha: string;
  startedAt: number;
  /** Started by a compute at a head no round had reviewed, rather than by a request. */
  implicit?: boolean;
  nodeIds: string[];
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
export interface PrState {
  exists: boolean;
  repoId?: string;
  prNumber?: number;
  level: ReviewLevel;
  roster: ReviewerBrief[];
  requestedBy?: string;
  status: LadderStatus;
  rounds: RoundRecord[];
  observedHead: string | null;
  nodes: Record<string, NodeRecord>;
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

export function initialPrState(): PrState {
  return {
    exists: false,
    level: 'balanced',
    roster: [],
    status: 'requested',
    rounds: [],
    observedHead: null,
    nodes: {},
    nodeCount: 0,
    computes: {},
    contractDecisions: {},
    visualApprovals: {},
    recordedAxes: {},
    ciSignals: {},
    finalization: null,
    publishRequests: {},
    lastPosition: 0,
  };
}

export const currentRound = (s: PrState): RoundRecord | undefined => s.rounds[s.rounds.length - 1];

export const isLive = (n: NodeRecord): boolean => n.status === 'open' || n.status === 'consensus-ready';

/** A newer head has been observed than the one the current round reviews (SPEC §10). */
export function isStale(s: PrState): boolean {
  const round = currentRound(s);
  return !!round && s.observedHead !== null && s.observedHead !== round.headSha;
}

/** Mutates and returns `s`: the hot path of every rebuild, so no copies. */
export function evolvePr(s: PrState, e: RecordedEvent): PrState {
  const d = e.data as any;
  s.lastPosition = e.globalPosition;
  switch (e.type) {
    case 'ReviewRequested':
      s.exists = true;
      s.repoId = d.repoId;
      s.prNumber = d.prNumber;
      s.level = d.level;
      s.roster = d.roster;
      s.requestedBy = d.requestedBy;
      s.status = 'requested';
      s.rounds.push({ round: 1, headSha: d.headSha, baseSha: d.baseSha, startedAt: e.globalPosition, nodeIds: [] });
      break;
    case 'ReviewRoundStarted':
      s.rounds.push({ round: s.rounds.length + 1, headSha: d.headSha, baseSha: d.baseSha, startedAt: e.globalPosition, nodeIds: [] });
      break;
    case 'ReviewStatusChanged':
      s.status = d.to;
      break;
    case 'HeadObserved':
      s.observedHead = d.headSha;
      break;
    case 'ReviewComputed': {
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
      const author = d.node.reviewer.principal;
      s.nodeCount++;
      s.nodes[d.nodeId] = {
        nodeId: d.nodeId,
        round: d.round,
        headSha: d.headSha,
        fingerprint: d.fingerprint,
        author,
        authorRole: d.role,
        node: d.node,
        filedAt: e.globalPosition,
        status: 'open',
        confirmations: [],
      };
      const last = currentRound(s);
      const round = last && last.round === d.round ? last : (s.rounds.find((r) => r.round === d.round) ?? last);
      round?.nodeIds.push(d.nodeId);
      if (s.status === 'requested') s.status = 'in_progress';
      break;
    }
    case 'ReviewNodeConfirmed': {
      const n = s.nodes[d.nodeId];
      if (!n) break;
      n.confirmations.push({ by: d.by, role: d.role, at: e.globalPosition });
      if (n.status === 'open' && countsAsConsensus(n, n.confirmations)) n.status = 'consensus-ready';
      break;
    }
    case 'ReviewNodeDismissed':
    case 'ReviewNodeResolved': {
      const n = s.nodes[d.nodeId];
      if (!n || !isLive(n)) break; // the first close wins; a forged second one changes nothing
      n.status = e.type === 'ReviewNodeDismissed' ? 'dismissed' : 'resolved';
      n.closed = { by: d.by, role: d.role, reason: d.reason, at: e.globalPosition };
      break;
    }
    case 'ContractChangeDecided':
      s.contractDecisions[d.changeId] = { decision: d.decision, by: d.by, at: e.globalPosition };
      break;
    case 'VisualChangeApproved':
      s.visualApprovals[d.approvalKey] = { snapshotId: d.snapshotId, by: d.by, at: e.globalPosition };
      break;
    case 'AxisRecorded':
      s.recordedAxes[`${d.headSha}/${d.axis}`] = { status: d.status, reason: d.reason, headSha: d.headSha, by: d.by, at: e.globalPosition };
      break;
    case 'CiSignalRecorded':
      s.ciSignals[`${d.headSha}/${d.name}`] = { name: d.name, status: d.status, conclusion: d.conclusion, url: d.url, headSha: d.headSha, at: e.globalPosition };
      break;
    case 'ReviewFinalized':
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
    case 'PublishRequested':
      s.publishRequests[d.requestId] = { selection: d.selection, by: d.by, needsApproval: d.needsApproval, at: e.globalPosition };
      break;
    case 'PublishApproved':
      if (s.publishRequests[d.requestId]) s.publishRequests[d.requestId].approvedBy = d.by;
      break;
    case 'ReviewPublished':
      // The publisher may or may not record the ladder step itself; a publication completes the review.
      s.status = 'completed';
      break;
  }
  return s;
}

/** The PR stream fold the review commands decide on (cached per stream by the kernel). */
export const prFold: StreamFold<PrState> = { initialState: initialPrState, evolve: evolvePr };

/** The finalization of the current round, if any (an older round's finalization describes another head). */
export function currentFinalization(s: PrState): Finalization | null {
  const round = currentRound(s);
  return s.finalization && round && s.finalization.round === round.round ? s.finalization : null;
}
