import { z } from 'zod';
import { prNumberSchema, repoIdSchema } from './catalogue/review';
import { streamIds } from './envelope';

/** Every review command names its PR the same way: one code path from (repo, number) to the review stream (SPEC §10). */
export const reviewTarget = { repoId: repoIdSchema, prNumber: prNumberSchema };
export const reviewTargetSchema = z.object(reviewTarget);
export const reviewStreamOf = (t: { repoId: string; prNumber: number }): string => streamIds.pr(t.repoId, t.prNumber);

/** Parses `pr-<repoId>-<number>` back (repo ids may contain "-", the number never does). */
export function parseReviewStream(streamId: string): { repoId: string; prNumber: number } | null {
  const m = /^pr-(.+)-(\d+)$/.exec(streamId);
  return m ? { repoId: m[1], prNumber: Number(m[2]) } : null;
}
