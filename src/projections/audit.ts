import { z } from 'zod';
import type { StreamFold } from '../events/kernel-types';
import { parseReviewStream } from '../events/streams';
import { prNumberSchema, repoIdSchema } from '../events/catalogue/review';
import type { RecordedEvent } from '../events/envelope';
import type { QueryDefinition } from './query';
import { auditChainStatus } from '../audit/status';
import type { CatalogueEvent } from '../events/catalogue/event-types';

export const AUDIT_ACTIONS = ['confirm', 'dismiss', 'resolve', 'contract_decision', 'visual_approval', 'finalize', 'publish_request', 'publish_approval', 'publish'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One decision act as the audit shows it: what was done, by whom, to what. */
export interface DecisionAct {
  action: AuditAction;
  actor: string;
  target: string;
  detail?: string;
}

/** The event types that record a decision act (also read by the audit read model). */
export const ACT_TYPES = new Set(['ReviewNodeConfirmed', 'ReviewNodeDismissed', 'ReviewNodeResolved', 'ContractChangeDecided', 'VisualChangeApproved', 'ReviewFinalized', 'PublishRequested', 'PublishApproved', 'ReviewPublished']);

/** Which event is which decision act, and what it acted on; null for an event that records none. */
export function decisionAct(e: CatalogueEvent): DecisionAct | null {
  switch (e.type) {
    case 'ReviewNodeConfirmed':
      return { action: 'confirm', actor: e.data.by, target: e.data.nodeId, detail: e.data.note };
    case 'ReviewNodeDismissed':
      return { action: 'dismiss', actor: e.data.by, target: e.data.nodeId, detail: e.data.reason };
    case 'ReviewNodeResolved':
      return { action: 'resolve', actor: e.data.by, target: e.data.nodeId, detail: e.data.reason };
    case 'ContractChangeDecided':
      return { action: 'contract_decision', actor: e.data.by, target: e.data.changeId, detail: e.data.note ? `${e.data.decision}: ${e.data.note}` : e.data.decision };
    case 'VisualChangeApproved':
      return { action: 'visual_approval', actor: e.data.by, target: e.data.snapshotId, detail: e.data.approvalKey };
    case 'ReviewFinalized':
      return { action: 'finalize', actor: e.data.by, target: `round ${e.data.round}`, detail: `${e.data.verdict} (${e.data.confidence}) under rules ${e.data.rulesVersion}` };
    case 'PublishRequested':
      return { action: 'publish_request', actor: e.data.by, target: e.data.requestId, detail: e.data.selection };
    case 'PublishApproved':
      return { action: 'publish_approval', actor: e.data.by, target: e.data.requestId };
    case 'ReviewPublished':
      return { action: 'publish', actor: e.data.publishedBy, target: e.data.forgeReviewId, detail: `${e.data.event}${e.data.fallbackUsed ? ' (fallback: folded into the body)' : ''}` };
    default:
      return null;
  }
}

export interface AuditRow {
  position: number;
  time: string;
  action: AuditAction;
  actor: string;
  role: string;
  target: string;
  repoId: string | null;
  prNumber: number | null;
  detail: string | null;
  eventId: string;
  /** The edge the act came through (rpc, mcp, cli, webhook, server); null for acts recorded before it was kept. */
  via: string | null;
  /** The token that acted, or null (the local operator's CLI, the server itself). */
  tokenId: string | null;
  /**
   * Who issued the token that acted, then who issued theirs, … up to an act without a token (the local
   * operator's CLI or the server's first start). Empty when no token acted.
   */
  issuerChain: IssuerLink[];
}

export interface IssuerLink {
  principal: string;
  /** The token the issuer used, or null at the chain's root. */
  tokenId: string | null;
  via: string | null;
}

export interface AuditState {
  /** Workspace roles as of each point of the log, for acts whose events do not carry the role. */
  members: Record<string, string>;
  /** tokenId → who issued it, and with which token. */
  tokens: Record<string, IssuerLink>;
  rows: AuditRow[];
}

/** Tokens are issued by earlier tokens, so a chain cannot loop; the bound only guards a corrupted log. */
const MAX_CHAIN = 32;

function issuerChain(tokens: Record<string, IssuerLink>, tokenId: string | undefined): IssuerLink[] {
  const chain: IssuerLink[] = [];
  for (let id = tokenId; id !== undefined && chain.length < MAX_CHAIN; ) {
    const link = tokens[id];
    if (!link) break;
    chain.push(link);
    id = link.tokenId ?? undefined;
  }
  return chain;
}

export const auditFold: StreamFold<AuditState, CatalogueEvent> = {
  initialState: () => ({ members: {}, tokens: {}, rows: [] }),
  evolve(s, e) {
    if (e.type === 'ApiTokenIssued') s.tokens[e.data.tokenId] = { principal: e.metadata.principal, tokenId: e.metadata.tokenId ?? null, via: e.metadata.via ?? null };
    else if (e.type === 'MemberAdded') s.members[e.data.principal] = e.data.role;
    else if (e.type === 'MemberRoleChanged') s.members[e.data.principal] = e.data.to;
    else if (e.type === 'MemberRemoved') delete s.members[e.data.principal];
    const act = decisionAct(e);
    if (!act) return s;
    const actor = act.actor ?? e.metadata.principal;
    const pr = parseReviewStream(e.streamId);
    s.rows.push({
      position: e.globalPosition,
      time: e.metadata.occurredAt,
      action: act.action,
      actor,
      // The role the act was authorized with; older events carry it in their data or not at all.
      role: ('role' in e.data ? e.data.role : undefined) ?? (actor === e.metadata.principal ? e.metadata.role : undefined) ?? s.members[actor] ?? 'unknown',
      target: act.target,
      repoId: pr?.repoId ?? null,
      prNumber: pr?.prNumber ?? null,
      detail: act.detail ?? null,
      eventId: e.eventId,
      via: e.metadata.via ?? null,
      tokenId: e.metadata.tokenId ?? null,
      issuerChain: issuerChain(s.tokens, e.metadata.tokenId),
    });
    return s;
  },
};

const isoTime = z.string().refine((t) => !Number.isNaN(Date.parse(t)), { message: 'must be an ISO-8601 time' }).transform((t) => new Date(t).toISOString());

export const auditInput = z.object({
  actor: z.string().max(200).optional(),
  action: z.enum(AUDIT_ACTIONS).optional(),
  repoId: repoIdSchema.optional(),
  prNumber: prNumberSchema.optional(),
  since: isoTime.optional(),
  until: isoTime.optional(),
  /** Pagination cursor in log order: only rows after this position (the last row's `position` of the previous page). */
  after: z.number().int().nonnegative().optional(),
  /** Pagination cursor newest first: only rows before this position (the last row's `position` of the previous `order: 'desc'` page). */
  before: z.number().int().positive().optional(),
  /** `asc` (default): log order, oldest first; `desc`: newest first (an audit screen's first page). */
  order: z.enum(['asc', 'desc']).optional(),
  /** Page size: at most this many rows, the first ones in `order` (no limit when absent). */
  limit: z.number().int().min(1).max(10_000).optional(),
});
export type AuditInput = z.infer<typeof auditInput>;

/** "Who approved what, when" (SPEC §0): one row per decision act, filtered, in log order (or newest first). */
export function auditView(s: AuditState, f: AuditInput): AuditRow[] {
  const rows = s.rows.filter(
    (r) =>
      (f.after === undefined || r.position > f.after) &&
      (f.before === undefined || r.position < f.before) &&
      (f.actor === undefined || r.actor === f.actor) &&
      (f.action === undefined || r.action === f.action) &&
      (f.repoId === undefined || r.repoId === f.repoId) &&
      (f.prNumber === undefined || r.prNumber === f.prNumber) &&
      (f.since === undefined || r.time >= f.since) &&
      (f.until === undefined || r.time <= f.until),
  );
  if (f.order === 'desc') rows.reverse();
  return f.limit === undefined ? rows : rows.slice(0, f.limit);
}

export const AFFECTING = new Set([...ACT_TYPES, 'MemberAdded', 'MemberRoleChanged', 'MemberRemoved', 'ApiTokenIssued']);

export const auditQuery: QueryDefinition<AuditInput, AuditState, AuditRow[]> = {
  name: 'audit',
  description: 'The audit log: one row per decision act (confirm, dismiss, resolve, contract decision, visual approval, finalize, publish request/approval/publication).',
  input: auditInput,
  access: { minRole: 'viewer' },
  affects: (_i, e) => AFFECTING.has(e.type),
  fold: () => auditFold,
  sources: () => 'all',
  view: auditView,
  // Whether the log behind the rows verifies, and up to which signed checkpoint (docs/audit.md).
  attach: async (ws) => ({ chain: await auditChainStatus(ws, new Date()) }),
};
