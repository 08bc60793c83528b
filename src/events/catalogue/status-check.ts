import { z } from 'zod';
import { defineEvent } from './define';
import { RepoRegistered } from './repo';
import { shaSchema, verdictSchema } from './review';

/** GitHub's commit-status states the ledger uses (it never posts `error`: a failure to post is recorded, not posted). */
export const commitStateSchema = z.enum(['pending', 'success', 'failure']);
export type CommitState = z.infer<typeof commitStateSchema>;

/** The status context posted unless a repo names its own. */
export const DEFAULT_CONTEXT = 'review-ledger/verdict';

/** GitHub's `context`: the name branch protection requires (e.g. "review-ledger/verdict"). */
export const statusContextSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._\/:-]*$/, 'context must start with a letter or digit and use letters, digits, spaces and . _ / : -');

/**
 * An admin turned the verdict status check of a repo on or off (SPEC §14, the one opt-in exception to
 * "the ledger never posts on its own"). Stream `repo-<repoId>`. Off is the default: no event, no post.
 */
export const VerdictStatusCheckConfigured = defineEvent(
  'VerdictStatusCheckConfigured',
  'repo',
  1,
  z.object({
    repoId: RepoRegistered.schema.shape.repoId,
    enabled: z.boolean(),
    context: statusContextSchema,
  }),
);

const postedFields = {
  repoId: RepoRegistered.schema.shape.repoId,
  prNumber: z.number().int().positive(),
  sha: shaSchema,
  context: statusContextSchema,
  state: commitStateSchema,
  /** GitHub keeps at most 140 characters. */
  description: z.string().max(140),
  targetUrl: z.string().max(2000),
  /** The verdict the status reports; null when the head has no review yet. */
  verdict: verdictSchema.nullable(),
  provisional: z.boolean(),
  /** The global position of the verdict projection this status reflects. */
  reflects: z.number().int().nonnegative(),
};

/**
 * A commit status is on GitHub: posted now, or found there already (posted by an earlier process that
 * died before recording it). Stream `status-<repoId>-<prNumber>`: what was posted is the idempotency
 * record — the same (sha, context, state, description, link) is never posted again.
 */
export const VerdictStatusPosted = defineEvent(
  'VerdictStatusPosted',
  'status',
  1,
  z.object({
    ...postedFields,
    foundOnGitHub: z.boolean(),
    githubStatusId: z.number().int().nonnegative().nullable(),
  }),
);

/** GitHub refused a status (or could not be reached after the allowed retries); the next verdict change or restart tries again. */
export const VerdictStatusFailed = defineEvent(
  'VerdictStatusFailed',
  'status',
  1,
  z.object({
    ...postedFields,
    githubStatus: z.number().int().nonnegative(),
    reason: z.string().max(2000),
  }),
);

export const statusCheckEvents = [VerdictStatusCheckConfigured, VerdictStatusPosted, VerdictStatusFailed];
