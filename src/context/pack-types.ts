import { z } from 'zod';
import { cohortSchema } from '../events/catalogue/compute';
import { reviewTarget } from '../events/streams';

/** How a fact relates to the cohort (seeds/004 §2.3): the code it is about. */
export const CLUE_RELATIONS = ['self', 'owner', 'caller', 'callee', 'used', 'project'] as const;
export type ClueRelation = (typeof CLUE_RELATIONS)[number];

/**
 * What kind of fact it is. `link`: a definition reached over a resolved code-graph edge; `case`: a test
 * that exercises the code; `spec`: an API-contract change; `doc`: documentation that names the symbol;
 * `history`: a node of an earlier review on the same symbol; `project`: manifest / lock facts; `rule`:
 * reserved for author-declared rules (none are recorded yet).
 */
export const CLUE_KINDS = ['spec', 'case', 'rule', 'link', 'doc', 'history', 'project'] as const;
export type ClueKind = (typeof CLUE_KINDS)[number];

/** whole: the full fact · signature: its header only · pointer: `ref` only, re-fetchable by the reviewer. */
export type ClueForm = 'whole' | 'signature' | 'pointer';

export interface Clue {
  relation: ClueRelation;
  kind: ClueKind;
  /** Where the fact lives: a symbol id, `path:L<line>`, a review node `pr-<repo>-<n>/<nodeId>`, a spec path. */
  ref: string;
  /** Absent for a pointer. */
  content?: string;
  form: ClueForm;
}

/** A candidate before budgeting: its full text and (when it has one) a shorter signature. */
export interface ClueCandidate {
  relation: ClueRelation;
  kind: ClueKind;
  ref: string;
  whole: string;
  signature?: string;
  /** Lower is more certain and kept whole first (own diff 0, contract changes and direct neighbours next). */
  tier: number;
}

export interface PackFragment {
  id: string;
  path: string;
  symbolId?: string;
  kind: string;
  side: 'head' | 'base';
  change: 'added' | 'modified' | 'deleted';
  startLine: number;
  endLine: number;
  /** The unified-diff hunks (3 lines of context) that touch the fragment; absent when degraded to a pointer. */
  diff?: string;
}

export interface TruncatedEntry {
  ref: string;
  what: 'fragment' | 'clue';
  relation: ClueRelation;
  kind?: ClueKind;
  /** The form it was degraded to. */
  form: 'signature' | 'pointer';
  /** Bytes the whole fact would have taken. */
  wholeBytes: number;
}

export interface ContextPack {
  cohortKey: string;
  title: string;
  headSha: string;
  baseSha: string;
  budgetBytes: number;
  /** Bytes of fragment diffs and clue refs/contents actually preloaded. */
  usedBytes: number;
  /** True when even pointers to every fact exceed the budget (nothing is dropped: they are all still listed). */
  overBudget: boolean;
  fragments: PackFragment[];
  clues: Clue[];
  /** Every fragment or clue handed over in a degraded form. Nothing is ever dropped silently. */
  truncated: TruncatedEntry[];
  /** Names the cohort's changed code references that resolve to no known definition (or only by name): left unknown, no clue attached. */
  unresolved: Array<{ from: string; name: string; candidates: number }>;
  counts: { whole: number; signature: number; pointer: number };
}

export const DEFAULT_BUDGET_BYTES = 32 * 1024;
export const MIN_BUDGET_BYTES = 256;
export const MAX_BUDGET_BYTES = 1024 * 1024;

export const cohortContextInput = z.object({
  ...reviewTarget,
  cohortKey: cohortSchema.shape.key,
  budgetBytes: z
    .number()
    .int('budgetBytes must be an integer')
    .min(MIN_BUDGET_BYTES, `budgetBytes must be at least ${MIN_BUDGET_BYTES}`)
    .max(MAX_BUDGET_BYTES, `budgetBytes must be at most ${MAX_BUDGET_BYTES}`)
    .default(DEFAULT_BUDGET_BYTES),
});
export type CohortContextInput = z.infer<typeof cohortContextInput>;
