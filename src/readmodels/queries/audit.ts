import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../events/canonical-json';
import { DomainError } from '../../domain-error';
import type { StreamFold } from '../../events/kernel-types';
import { parseReviewStream } from '../../events/streams';
import { prNumberSchema, repoIdSchema } from '../../events/catalogue/review';
import type { RecordedEvent } from '../../events/envelope';
import type { QueryDefinition } from './query';
import { auditChainStatus } from '../../audit/status';
import type { CatalogueEvent } from '../../events/catalogue/event-types';

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
  /**
   * How the act was authenticated: `sign-in` (a session or CLI sign-in token the person's own sign-in at
   * the identity provider minted; `signIn` names that identity), `admin-provisioned` (a human's token an
   * admin or owner minted — the only kind without a provider), `agent-token` (an agent's token; the
   * issuer chain names who minted it), `local` (no token: the local operator's CLI or the server itself).
   */
  authn: AuthnKind;
  /** For `sign-in`: the provider's issuer and the subject that signed in; null otherwise. */
  signIn: { issuer: string; subject: string } | null;
}

export const AUTHN_KINDS = ['sign-in', 'admin-provisioned', 'agent-token', 'local'] as const;
export type AuthnKind = (typeof AUTHN_KINDS)[number];

/** The authentication of an act by `principal` with `tokenId` (whose sign-in identity, if any, is `signIn`). */
export function authnOf(principal: string, tokenId: string | null | undefined, signIn: unknown): AuthnKind {
  if (tokenId === null || tokenId === undefined) return 'local';
  if (signIn) return 'sign-in';
  return principal.startsWith('user:') ? 'admin-provisioned' : 'agent-token';
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
  /** tokenId → the identity whose sign-in minted it (sessions and CLI sign-in tokens only). */
  signIns: Record<string, { issuer: string; subject: string }>;
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
  initialState: () => ({ members: {}, tokens: {}, signIns: {}, rows: [] }),
  evolve(s, e) {
    if (e.type === 'ApiTokenIssued') {
      s.tokens[e.data.tokenId] = { principal: e.metadata.principal, tokenId: e.metadata.tokenId ?? null, via: e.metadata.via ?? null };
      if (e.data.signIn) s.signIns[e.data.tokenId] = { issuer: e.data.signIn.issuer, subject: e.data.signIn.subject };
      else delete s.signIns[e.data.tokenId];
    }
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
      authn: authnOf(e.metadata.principal, e.metadata.tokenId, e.metadata.tokenId ? s.signIns[e.metadata.tokenId] : undefined),
      signIn: (e.metadata.tokenId && s.signIns[e.metadata.tokenId]) || null,
    });
    return s;
  },
};

const isoTime = z.string().refine((t) => !Number.isNaN(Date.parse(t)), { message: 'must be an ISO-8601 time' }).transform((t) => new Date(t).toISOString());

/** Rows of one `audit` page when the request names no `limit`. */
export const AUDIT_DEFAULT_LIMIT = 100;
/** The most rows one `audit` page may hold: a bigger answer is read page by page with `next`. */
export const AUDIT_MAX_LIMIT = 1000;

export const auditInput = z.object({
  actor: z.string().max(200).optional(),
  action: z.enum(AUDIT_ACTIONS).optional(),
  repoId: repoIdSchema.optional(),
  prNumber: prNumberSchema.optional(),
  since: isoTime.optional(),
  until: isoTime.optional(),
  /** Only acts authenticated this way (sign-in, admin-provisioned, agent-token, local). */
  authn: z.enum(AUTHN_KINDS).optional().describe('only acts authenticated this way: sign-in, admin-provisioned, agent-token or local'),
  /** Only acts of sessions / sign-in tokens of this identity-provider subject. */
  subject: z.string().min(1).max(500).optional().describe("only acts signed in as this identity-provider subject (the provider's `sub`; GitHub: the numeric user id)"),
  /** `desc` (default): newest first, the latest acts on the first page; `asc`: log order, oldest first. */
  order: z.enum(['asc', 'desc']).optional().describe("desc (default): newest first; asc: log order"),
  /** Page size: at most this many rows, the first ones in `order` (default 100, at most 1000). */
  limit: z
    .number()
    .int()
    .min(1)
    .max(AUDIT_MAX_LIMIT, { message: `at most ${AUDIT_MAX_LIMIT} rows per page; read further pages with the answer's \`next\`` })
    .optional()
    .describe(`rows per page: default ${AUDIT_DEFAULT_LIMIT}, at most ${AUDIT_MAX_LIMIT}`),
  /** The previous page's `next`, passed back unchanged with the same filters and order: the page after it. */
  cursor: z.string().max(200).optional().describe("the previous page's `next`, unchanged, with the same filters and order"),
});
export type AuditInput = z.infer<typeof auditInput>;

/** One page of the audit: its rows, and `next` (the cursor of the page after it; null on the last page). */
export interface AuditPage {
  rows: AuditRow[];
  next: string | null;
}

export const auditOrder = (f: AuditInput): 'asc' | 'desc' => f.order ?? 'desc';
export const auditLimit = (f: AuditInput): number => f.limit ?? AUDIT_DEFAULT_LIMIT;

/**
 * The cursor names the last row of a page by position (keyset pagination: rows are keyed by their
 * position in the log and never change, so the next page is exact however many acts were appended
 * since, and with any asOf), together with the order and filters it continues. Its check digest is
 * not a secret: a cursor grants nothing (it only narrows rows its holder may read anyway); it catches
 * a hand-made or altered cursor, and one passed with other filters or order.
 */
function cursorDigest(f: AuditInput, order: string, position: number): string {
  const filters = canonicalJson({ actor: f.actor, action: f.action, repoId: f.repoId, prNumber: f.prNumber, since: f.since, until: f.until, authn: f.authn, subject: f.subject });
  return createHash('sha256').update(`review-ledger audit cursor v1\n${order}\n${position}\n${filters}`).digest('base64url').slice(0, 16);
}

export function auditCursor(f: AuditInput, position: number): string {
  const order = auditOrder(f);
  return Buffer.from(`v1.${order}.${position}.${cursorDigest(f, order, position)}`).toString('base64url');
}

/** The position a request's cursor continues after (rows past it in `order`), or undefined without one. */
export function auditCursorPosition(f: AuditInput): number | undefined {
  if (f.cursor === undefined) return undefined;
  const refuse = (why: string): never => {
    throw new DomainError('invalid_cursor', `cursor: ${why}; pass an audit answer's \`next\` back unchanged, with the same filters and order (or leave cursor out for the first page)`, { field: 'cursor' });
  };
  const raw = /^[A-Za-z0-9_-]{1,200}$/.test(f.cursor) ? Buffer.from(f.cursor, 'base64url').toString('utf8') : '';
  const m = /^v1\.(asc|desc)\.(\d{1,15})\.([A-Za-z0-9_-]{16})$/.exec(raw);
  if (!m) return refuse('not a cursor audit returned');
  const position = Number(m[2]);
  if (m[1] !== auditOrder(f)) return refuse(`it continues an order: '${m[1]}' page, this request asks for '${auditOrder(f)}'`);
  if (m[3] !== cursorDigest(f, m[1], position)) return refuse('it was not made for these filters (or it was altered)');
  return position;
}

/** The rows of a page read one past its limit (`limit + 1` in order): the page and its `next`. */
export function auditPage(f: AuditInput, rows: AuditRow[]): AuditPage {
  const limit = auditLimit(f);
  if (rows.length <= limit) return { rows, next: null };
  const page = rows.slice(0, limit);
  return { rows: page, next: auditCursor(f, page[page.length - 1].position) };
}

/**
 * The page as of a later position from the page as of an earlier one and the rows acts between them
 * added (`added`: those rows that pass the request's filters and cursor, in its order, at most
 * `limit + 1`). Rows never change once written and every new row lies past every earlier one, so
 * newest first the new rows go on top, in log order at the end: the same page a full read gives.
 */
export function advanceAuditPage(f: AuditInput, previous: AuditPage, added: AuditRow[]): AuditPage {
  if (added.length === 0) return previous;
  const limit = auditLimit(f);
  const merged = auditOrder(f) === 'desc' ? [...added, ...previous.rows] : [...previous.rows, ...added];
  if (previous.next === null && merged.length <= limit) return { rows: merged, next: null };
  const page = merged.slice(0, limit);
  return { rows: page, next: auditCursor(f, page[page.length - 1].position) };
}

/** "Who approved what, when" (SPEC §0): one row per decision act, filtered, newest first (or in log order), one page. */
export function auditView(s: AuditState, f: AuditInput): AuditPage {
  const order = auditOrder(f);
  const from = auditCursorPosition(f);
  const rows = s.rows.filter(
    (r) =>
      (from === undefined || (order === 'desc' ? r.position < from : r.position > from)) &&
      (f.actor === undefined || r.actor === f.actor) &&
      (f.action === undefined || r.action === f.action) &&
      (f.repoId === undefined || r.repoId === f.repoId) &&
      (f.prNumber === undefined || r.prNumber === f.prNumber) &&
      (f.since === undefined || r.time >= f.since) &&
      (f.until === undefined || r.time <= f.until) &&
      (f.authn === undefined || r.authn === f.authn) &&
      (f.subject === undefined || r.signIn?.subject === f.subject),
  );
  if (order === 'desc') rows.reverse();
  return auditPage(f, rows.slice(0, auditLimit(f) + 1));
}

export const AFFECTING = new Set([...ACT_TYPES, 'MemberAdded', 'MemberRoleChanged', 'MemberRemoved', 'ApiTokenIssued']);

export const auditQuery: QueryDefinition<AuditInput, AuditState, AuditPage> = {
  name: 'audit',
  description: 'The audit log: one row per decision act (confirm, dismiss, resolve, contract decision, visual approval, finalize, publish request/approval/publication), newest first, one page at a time (limit: default 100, at most 1000; `next`: the cursor of the following page, null on the last).',
  input: auditInput,
  access: { minRole: 'viewer' },
  affects: (_i, e) => AFFECTING.has(e.type),
  fold: () => auditFold,
  sources: () => 'all',
  view: auditView,
  // Whether the log behind the rows verifies, and up to which signed checkpoint (docs/audit.md).
  attach: async (ws) => ({ chain: await auditChainStatus(ws, new Date()) }),
};
