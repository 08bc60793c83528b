import { z } from 'zod';
import { normalizeRepoPath } from '../repo-path';
import { roleSchema } from '../roles';
import { principalSchema } from '../envelope';
import { axisStatusSchema } from './compute';
import { defineEvent } from './define';
import { reviewLevelSchema } from './workspace';

/**
 * PR-stream events of the review domain (SPEC §4, §5, §10, §13, §14). ReviewComputed and the cohort
 * events live in compute.ts, ContractChangeDecided in contract.ts, VisualChangeApproved in visual.ts.
 * Every decision act carries `by` and `role` so the audit log needs no side lookup.
 */

export const shaSchema = z.string().regex(/^[0-9a-f]{7,64}$/, 'must be a hex commit id (7-64 lowercase hex digits)');
export const repoIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'repoId must be 1-100 chars of letters, digits, ".", "_" or "-"');
export const prNumberSchema = z.number().int().positive().max(1_000_000_000);
export const nodeIdSchema = z.string().regex(/^n[0-9]{1,9}$/, 'nodeId must look like "n<number>" as returned by addReviewNode');

export const REVIEWER_BRIEFS = ['engineer', 'qa', 'architect', 'security', 'performance'] as const;
export const reviewerBriefSchema = z.enum(REVIEWER_BRIEFS);
export type ReviewerBrief = z.infer<typeof reviewerBriefSchema>;

export const nodeKindSchema = z.enum(['bug', 'suggestion', 'recommendation', 'question', 'ticket']);
export type NodeKind = z.infer<typeof nodeKindSchema>;
export const PRIORITIES = ['P0', 'P1', 'P2', 'P3'] as const;
export const prioritySchema = z.enum(PRIORITIES);
export type Priority = z.infer<typeof prioritySchema>;

export const LADDER_STATUSES = ['requested', 'in_progress', 'awaiting_approval', 'completed'] as const;
export const ladderStatusSchema = z.enum(LADDER_STATUSES);
export type LadderStatus = z.infer<typeof ladderStatusSchema>;

export const verdictSchema = z.enum(['Ship', 'Hold', 'Block']);
export type Verdict = z.infer<typeof verdictSchema>;

/** A repo-relative path as stored: already normalized, so `..`, absolute paths and NUL never reach the log. */
export const storedRepoPathSchema = z
  .string()
  .min(1)
  .max(4000)
  .refine(
    (p) => {
      try {
        return normalizeRepoPath(p) === p;
      } catch {
        return false;
      }
    },
    { message: 'path must be a normalized repo-relative path (no "..", no leading "/", no NUL)' },
  );

export const anchorSchema = z
  .object({
    path: storedRepoPathSchema,
    startLine: z.number().int().min(1, 'startLine must be ≥ 1'),
    endLine: z.number().int().min(1, 'endLine must be ≥ 1'),
    /** Stable id of the enclosing symbol (`<path>#<qualified name>`), when the reviewer or the code graph knows it. */
    symbolId: z.string().min(1).max(2000).optional(),
    /** Which side of the diff the lines number: RIGHT (head, default) or LEFT (base: a deleted line). */
    side: z.enum(['RIGHT', 'LEFT']).optional(),
  })
  .refine((a) => a.startLine <= a.endLine, { message: 'startLine must be ≤ endLine', path: ['endLine'] });

export const triageSchema = z.object({
  category: z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, 'category must be a lowercase word such as security, stability, correctness, performance, maintainability, testing'),
  severity: z.enum(['critical', 'high', 'medium', 'low', 'info']),
  effort: z.enum(['trivial', 'small', 'medium', 'large']),
});

export const fixSchema = z.object({
  /** Exact replacement for the anchored lines: the only source of one-click suggestions (SPEC §14). */
  replacementLines: z.array(z.string().max(10_000)).max(2000).optional(),
  unifiedDiff: z.string().max(100_000).optional(),
  prompt: z.string().max(20_000).optional(),
});

/**
 * The finding itself (SPEC §5). `reasoning` is listed before `title`/`body` on purpose: schema order is
 * what models follow, and the analysis should be written before the verdict-like prose.
 */
export const reviewNodeBodySchema = z.object({
  kind: nodeKindSchema,
  priority: prioritySchema,
  triage: triageSchema,
  anchor: anchorSchema.optional(),
  fix: fixSchema.optional(),
  confidence: z.number().min(0, 'confidence must be in [0, 1]').max(1, 'confidence must be in [0, 1]'),
  reasoning: z.string().max(50_000).optional(),
  title: z.string().min(1).max(500),
  body: z.string().max(50_000),
  reviewer: z.object({ principal: principalSchema, brief: reviewerBriefSchema }),
});
export type ReviewNodeBody = z.infer<typeof reviewNodeBodySchema>;

const reason = z.string().min(1).max(10_000);
const tokenAxisSchema = z.object({ status: axisStatusSchema, reason: z.string().max(4000).optional() });
export const tokenAxesSchema = z.object({ correctness: tokenAxisSchema, security: tokenAxisSchema, testGap: tokenAxisSchema });
export type TokenAxes = z.infer<typeof tokenAxesSchema>;
export const publishSelectionSchema = z.enum(['all_open', 'consensus']);

export const ReviewRequested = defineEvent(
  'ReviewRequested',
  'pr',
  1,
  z.object({
    repoId: repoIdSchema,
    prNumber: prNumberSchema,
    baseSha: shaSchema,
    headSha: shaSchema,
    /** The workspace level and its roster as they were when the review was requested (SPEC §9). */
    level: reviewLevelSchema,
    roster: z.array(reviewerBriefSchema).min(1),
    rulesVersion: z.string().max(100),
    requestedBy: principalSchema,
    role: roleSchema,
  }),
);

/** The head moved and the review was requested again: round N+1 reviews the new head. */
export const ReviewRoundStarted = defineEvent(
  'ReviewRoundStarted',
  'pr',
  1,
  z.object({ round: z.number().int().min(2), baseSha: shaSchema, headSha: shaSchema, requestedBy: principalSchema, role: roleSchema }),
);

export const ReviewStatusChanged = defineEvent(
  'ReviewStatusChanged',
  'pr',
  1,
  z.object({ from: ladderStatusSchema, to: ladderStatusSchema, reason: z.string().max(1000) }),
);

/**
 * `observedAt`: when the source saw this head (a webhook's pull_request.updated_at); orders observations.
 * `baseSha`: the base the source reported with it (a webhook's pull_request.base.sha), what an automatic
 * recompute of this head diffs against.
 */
export const HeadObserved = defineEvent('HeadObserved', 'pr', 1, z.object({ headSha: shaSchema, baseSha: shaSchema.optional(), source: z.string().max(100).optional(), observedAt: z.string().datetime().optional() }));

export const ReviewNodeFiled = defineEvent(
  'ReviewNodeFiled',
  'pr',
  1,
  z.object({
    nodeId: nodeIdSchema,
    round: z.number().int().positive(),
    headSha: shaSchema,
    fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
    role: roleSchema,
    node: reviewNodeBodySchema,
    /**
     * The carried or outdated node of this round with the same fingerprint that this re-filed report joins
     * (SPEC §5): a carried one keeps its confirmations and the new report is its duplicate; an outdated one
     * is superseded by the new report, the re-review.
     */
    joins: nodeIdSchema.optional(),
  }),
);

const carryReason = z.string().max(300);
/**
 * SPEC §5 carry-over, recorded when a round starts at a new head (with `ReviewRoundStarted`, or after the
 * `ReviewComputed` that starts a round): the git facts about every finding of the previous round, checked
 * at the edge against the diff between the two heads and the code graph, so the fold never runs git.
 * Nodes of `fromRound` listed nowhere (filed while the facts were gathered) are outdated when live.
 */
export const FindingsCarriedOver = defineEvent(
  'FindingsCarriedOver',
  'pr',
  1,
  z.object({
    round: z.number().int().min(2),
    fromRound: z.number().int().positive(),
    fromHead: shaSchema,
    toHead: shaSchema,
    /** Anchored code unchanged: carried as it is. */
    carried: z.array(nodeIdSchema).max(100_000),
    /** Carried nodes whose unchanged lines moved: their anchor at the new head. */
    moved: z.array(z.object({ nodeId: nodeIdSchema, startLine: z.number().int().min(1), endLine: z.number().int().min(1) })).max(100_000),
    /**
     * Anchored code changed, or could not be checked: listed for re-review (live ones stay live); with the
     * lines the changed range covers at the new head when the diff tells (where a re-reviewer looks).
     */
    outdated: z.array(z.object({ nodeId: nodeIdSchema, reason: carryReason, startLine: z.number().int().min(1).optional(), endLine: z.number().int().min(1).optional() })).max(100_000),
    /** The code the finding points at was deleted. */
    gone: z.array(z.object({ nodeId: nodeIdSchema, reason: carryReason })).max(100_000),
  }),
);

export const ReviewNodeConfirmed = defineEvent('ReviewNodeConfirmed', 'pr', 1, z.object({ nodeId: nodeIdSchema, by: principalSchema, role: roleSchema, note: z.string().max(4000).optional() }));
export const ReviewNodeDismissed = defineEvent(
  'ReviewNodeDismissed',
  'pr',
  1,
  z.object({ nodeId: nodeIdSchema, by: principalSchema, role: roleSchema, reason, fingerprint: z.string().regex(/^[0-9a-f]{64}$/) }),
);
export const ReviewNodeResolved = defineEvent('ReviewNodeResolved', 'pr', 1, z.object({ nodeId: nodeIdSchema, by: principalSchema, role: roleSchema, reason }));

/** A deterministic axis result recorded from outside the compute (e.g. performance, or a harness run elsewhere). */
export const AxisRecorded = defineEvent(
  'AxisRecorded',
  'pr',
  1,
  z.object({
    axis: z.enum(['visual', 'apiContract', 'performance']),
    status: axisStatusSchema,
    reason: z.string().max(4000).optional(),
    headSha: shaSchema,
    by: principalSchema,
    role: roleSchema,
  }),
);

export const CiSignalRecorded = defineEvent(
  'CiSignalRecorded',
  'pr',
  1,
  z.object({
    name: z.string().min(1).max(500),
    status: z.enum(['queued', 'in_progress', 'completed']),
    conclusion: z.enum(['success', 'failure', 'neutral', 'cancelled', 'skipped', 'timed_out', 'action_required', 'stale']).optional(),
    url: z.string().url().max(2000).optional(),
    headSha: shaSchema,
    by: principalSchema,
  }),
);

export const ReviewFinalized = defineEvent(
  'ReviewFinalized',
  'pr',
  1,
  z.object({
    round: z.number().int().positive(),
    headSha: shaSchema,
    tokenAxes: tokenAxesSchema,
    /** The lead reviewer's editorial walkthrough (markdown), not a re-listing of nodes. */
    walkthrough: z.string().max(200_000),
    verdict: verdictSchema,
    confidence: z.number().min(0).max(1),
    rulesVersion: z.string().max(100),
    reasons: z.array(z.string().max(2000)).max(200),
    /** Nodes the finalizer counted as peer-confirmed (confirmations by non-authors only). */
    consensusNodeIds: z.array(nodeIdSchema),
    /**
     * Token axes submitted as pass/warn that cohort progress turned into `partial` (src/review-progress), and the
     * cohorts not reviewed completely with what each brief still owes: said once here, not per axis.
     */
    progress: z
      .object({
        adjustedAxes: z.array(z.enum(['correctness', 'security', 'testGap'])),
        cohorts: z.array(z.object({ cohortKey: z.string().max(200), title: z.string().max(500), missing: z.string().max(300) })).max(200),
        incomplete: z.number().int().min(0),
      })
      .optional(),
    by: principalSchema,
    role: roleSchema,
  }),
);

export const PublishRequested = defineEvent(
  'PublishRequested',
  'pr',
  1,
  z.object({
    requestId: z.string().min(1).max(100),
    selection: publishSelectionSchema,
    approveOnShip: z.boolean().optional(),
    /** True when the requester is an agent: a human approver must approve before anything is posted. */
    needsApproval: z.boolean(),
    by: principalSchema,
    role: roleSchema,
  }),
);
export const PublishApproved = defineEvent('PublishApproved', 'pr', 1, z.object({ requestId: z.string().min(1).max(100), by: principalSchema, role: roleSchema }));

const publishedItem = z.object({
  nodeId: nodeIdSchema,
  path: z.string().max(4000).optional(),
  line: z.number().int().positive().optional(),
  startLine: z.number().int().positive().optional(),
  side: z.enum(['RIGHT', 'LEFT']).optional(),
  fingerprint: z.string().max(128).optional(),
  /** Why a finding went into the body instead of a line (no_anchor, line_outside_diff, range_spans_hunks, …). */
  reason: z.string().max(100).optional(),
  /** Duplicates published with this one ("also found by …"). */
  duplicates: z.array(nodeIdSchema).max(1000).optional(),
});
export const ReviewPublished = defineEvent(
  'ReviewPublished',
  'pr',
  1,
  z.object({
    requestId: z.string().min(1).max(100).optional(),
    forgeReviewId: z.string().min(1).max(200),
    event: z.enum(['APPROVE', 'COMMENT', 'REQUEST_CHANGES']),
    inline: z.array(publishedItem),
    folded: z.array(publishedItem),
    fallbackUsed: z.boolean(),
    headSha: shaSchema.optional(),
    publishedBy: principalSchema,
    role: roleSchema.optional(),
    /** Hidden marker key (PR, head, selected fingerprints, verdict) that makes the post findable on GitHub. */
    publishKey: z.string().max(200).optional(),
    url: z.string().max(2000).optional(),
    verdict: verdictSchema.optional(),
    selection: publishSelectionSchema.optional(),
    /** The event the verdict asked for when GitHub refused it and the review went out as COMMENT. */
    requestedEvent: z.enum(['APPROVE', 'COMMENT', 'REQUEST_CHANGES']).optional(),
    eventRefusal: z.string().max(2000).optional(),
    /** The review already existed on GitHub (found by its marker): nothing was posted. */
    foundExisting: z.boolean().optional(),
    /** Which fallbacks ran: anchors_refolded, orphan_completed, event_downgraded, rate_limit_retry. */
    fallbacks: z.array(z.string().max(50)).max(20).optional(),
  }),
);
export const PublishFailed = defineEvent(
  'PublishFailed',
  'pr',
  1,
  z.object({
    requestId: z.string().min(1).max(100).optional(),
    reason: z.string().max(10_000),
    by: principalSchema.optional(),
    /** GitHub's HTTP status, when GitHub answered. */
    status: z.number().int().optional(),
    publishKey: z.string().max(200).optional(),
    headSha: shaSchema.optional(),
  }),
);

export const reviewEvents = [
  ReviewRequested,
  ReviewRoundStarted,
  ReviewStatusChanged,
  HeadObserved,
  ReviewNodeFiled,
  FindingsCarriedOver,
  ReviewNodeConfirmed,
  ReviewNodeDismissed,
  ReviewNodeResolved,
  AxisRecorded,
  CiSignalRecorded,
  ReviewFinalized,
  PublishRequested,
  PublishApproved,
  ReviewPublished,
  PublishFailed,
];
