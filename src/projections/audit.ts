import { z } from 'zod';
import type { StreamFold } from '../commands/kernel';
import { parseReviewStream } from '../commands/review-target';
import { prNumberSchema, repoIdSchema } from '../events/catalogue/review';
import type { RecordedEvent } from '../events/envelope';
import type { QueryDefinition } from './query';

export const AUDIT_ACTIONS = ['confirm', 'dismiss', 'resolve', 'contract_decision', 'visual_approval', 'finalize', 'publish_request', 'publish_approval', 'publish'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Which event is which decision act, and what it acted on. */
const ACTS: Record<string, { action: AuditAction; actor: (d: any, e: RecordedEvent) => string; target: (d: any) => string; detail?: (d: any) => string | undefined }> = {
  ReviewNodeConfirmed: { action: 'confirm', actor: (d) => d.by, target: (d) => d.nodeId, detail: (d) => d.note },
  ReviewNodeDismissed: { action: 'dismiss', actor: (d) => d.by, target: (d) => d.nodeId, detail: (d) => d.reason },
  ReviewNodeResolved: { action: 'resolve', actor: (d) => d.by, target: (d) => d.nodeId, detail: (d) => d.reason },
  ContractChangeDecided: { action: 'contract_decision', actor: (d) => d.by, target: (d) => d.changeId, detail: (d) => (d.note ? `${d.decision}: ${d.note}` : d.decision) },
  VisualChangeApproved: { action: 'visual_approval', actor: (d) => d.by, target: (d) => d.snapshotId, detail: (d) => d.approvalKey },
  ReviewFinalized: { action: 'finalize', actor: (d) => d.by, target: (d) => `round ${d.round}`, detail: (d) => `${d.verdict} (${d.confidence}) under rules ${d.rulesVersion}` },
  PublishRequested: { action: 'publish_request', actor: (d) => d.by, target: (d) => d.requestId, detail: (d) => d.selection },
  PublishApproved: { action: 'publish_approval', actor: (d) => d.by, target: (d) => d.requestId },
  ReviewPublished: { action: 'publish', actor: (d) => d.publishedBy, target: (d) => d.forgeReviewId, detail: (d) => `${d.event}${d.fallbackUsed ? ' (fallback: folded into the body)' : ''}` },
};

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
}

export interface AuditState {
  /** Workspace roles as of each point of the log, for acts whose events do not carry the role. */
  members: Record<string, string>;
  rows: AuditRow[];
}

export const auditFold: StreamFold<AuditState> = {
  initialState: () => ({ members: {}, rows: [] }),
  evolve(s, e) {
    const d = e.data as any;
    if (e.type === 'MemberAdded') s.members[d.principal] = d.role;
    else if (e.type === 'MemberRoleChanged') s.members[d.principal] = d.to;
    else if (e.type === 'MemberRemoved') delete s.members[d.principal];
    const act = ACTS[e.type];
    if (!act) return s;
    const actor = act.actor(d, e) ?? e.metadata.principal;
    const pr = parseReviewStream(e.streamId);
    s.rows.push({
      position: e.globalPosition,
      time: e.metadata.occurredAt,
      action: act.action,
      actor,
      role: d.role ?? s.members[actor] ?? 'unknown',
      target: act.target(d),
      repoId: pr?.repoId ?? null,
      prNumber: pr?.prNumber ?? null,
      detail: act.detail?.(d) ?? null,
      eventId: e.eventId,
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
});
export type AuditInput = z.infer<typeof auditInput>;

/** "Who approved what, when" (SPEC §0): one row per decision act, filtered, in log order. */
export function auditView(s: AuditState, f: AuditInput): AuditRow[] {
  return s.rows.filter(
    (r) =>
      (f.actor === undefined || r.actor === f.actor) &&
      (f.action === undefined || r.action === f.action) &&
      (f.repoId === undefined || r.repoId === f.repoId) &&
      (f.prNumber === undefined || r.prNumber === f.prNumber) &&
      (f.since === undefined || r.time >= f.since) &&
      (f.until === undefined || r.time <= f.until),
  );
}

const AFFECTING = new Set([...Object.keys(ACTS), 'MemberAdded', 'MemberRoleChanged', 'MemberRemoved']);

export const auditQuery: QueryDefinition<AuditInput, AuditState, AuditRow[]> = {
  name: 'audit',
  description: 'The audit log: one row per decision act (confirm, dismiss, resolve, contract decision, visual approval, finalize, publish request/approval/publication).',
  input: auditInput,
  access: { minRole: 'viewer' },
  affects: (_i, e) => AFFECTING.has(e.type),
  fold: () => auditFold,
  sources: () => 'all',
  view: auditView,
};
