import { z } from 'zod';
import { prNumberSchema, repoIdSchema } from '../events/catalogue/review';
import { REPLAY_MAX_LIMIT, replayCursorOf, replayPage, replayReviews } from '../readmodels/queries/replay';
import { DomainError } from '../domain-error';
import { auditChainStatus } from '../audit/status';
import { readReviewDiff, readReviewFileLines, reviewDiffInput, reviewFileLinesInput } from '../readmodels/queries/review-diff';
import { rulesSchema } from '../rules/rules';
import type { Role } from '../events/roles';
import type { WorkspaceHandle } from '../workspaces/registry';

/**
 * Read-only procedures that are not folds of one read model (so they have no `watch` pair), exposed as
 * `review_studio.<name>` with the same generated catalogue and role check as the queries.
 */
export interface ReadProcedure<I = any> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  access: { minRole: Role };
  /** `signal`: aborted when the client went away (long reads stop their work, see CallContext.signal). */
  run(workspace: WorkspaceHandle, input: I, asOf: number | undefined, signal?: AbortSignal): Promise<unknown>;
  /**
   * The log position the request is pinned to, if it names one itself (a page cursor carries the position
   * of its first page): the dispatcher answers at that position instead of the head.
   */
  pinnedPosition?(input: I): number | undefined;
}

const replayInput = z.object({
  /** The rules document to replay under (the shape of src/rules/v1.json). */
  rules: rulesSchema,
  repoId: repoIdSchema.optional(),
  prNumber: prNumberSchema.optional(),
  /** List unchanged reviews too. */
  all: z.boolean().optional(),
  /** Rows per page (default 100, at most 1,000). */
  limit: z.number().int().min(1).max(REPLAY_MAX_LIMIT).optional(),
  /** A previous answer's `next`: the rows after it, folded at the same position as that first page. */
  cursor: z.string().max(400).optional(),
});

export const READ_PROCEDURES: ReadProcedure[] = [
  {
    name: 'auditChain',
    description: "Whether the workspace's log verifies (docs/audit.md): the hash chain recomputed, the signed checkpoints checked against the server's key; the first broken position and what is wrong, and up to which checkpoint it holds.",
    input: z.object({}),
    access: { minRole: 'viewer' },
    // The log as stored now, whatever asOf says: integrity is not a fold.
    run: (ws) => auditChainStatus(ws, new Date()),
  },
  {
    name: 'replay',
    description: 'Replay reviews under another rules document (SPEC §7.4): which verdicts or confidences would change, old → new and why, sorted by repo then PR, in pages (`limit`, default 100, at most 1,000; pass `next` back as `cursor` — every page is folded at the first page\'s position). Writes nothing.',
    input: replayInput,
    access: { minRole: 'viewer' },
    pinnedPosition: (input: z.infer<typeof replayInput>) => replayCursorOf(input)?.position,
    async run(ws, input: z.infer<typeof replayInput>, asOf) {
      if (asOf === undefined) throw new DomainError('invalid_payload', 'replay: answered at a log position');
      const rows = await replayReviews(ws, input.rules, { repoId: input.repoId, prNumber: input.prNumber, asOf });
      return replayPage(input, rows, asOf);
    },
  },
  {
    name: 'reviewDiff',
    description: "The PR's code under review from the ledger's own clone (latest computation's base..head): per cohort, riskiest first, its fragments' hunks in the computed reading order; pages bounded by maxBytes and resumed with nextCursor; large, binary, generated, vendored and lock files collapsed with the reason.",
    input: reviewDiffInput,
    access: { minRole: 'viewer' },
    run: (ws, input, asOf, signal) => readReviewDiff(ws, input, asOf, signal),
  },
  {
    name: 'reviewFileLines',
    description: 'Lines of a file the PR changed, at the computed base or head (at most 500): the unchanged context a reader expands around a hunk.',
    input: reviewFileLinesInput,
    access: { minRole: 'viewer' },
    run: (ws, input, asOf) => readReviewFileLines(ws, input, asOf),
  },
];
