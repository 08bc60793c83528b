import type { DiffContext, Site } from '../context';
import type { Loc } from '../document';
import type { OasdiffHint } from '../oasdiff-id';
import type { ContractRule, Effect, KeywordFamily } from '../rule';

/**
 * What a schema rule family gets to work with: the comparison context, the recursion into subschemas
 * (cycle-safe: each pair of locations is compared at most once per direction) and reporting helpers.
 * `base` and `head` handed to a family check are already dereferenced object nodes.
 */
export interface SchemaComparer {
  readonly ctx: DiffContext;
  compare(site: Site, base: Loc, head: Loc): void;
  /** Reports the family's rule for this direction and effect, if the family defines one. */
  emit(family: KeywordFamily, effect: Effect, site: Site, base: Loc, head: Loc, message: string, subject?: string): void;
  report(rule: ContractRule, site: Site, base: Loc | undefined, head: Loc | undefined, message: string, subject?: string, oasdiff?: OasdiffHint): void;
}

export const nodeOf = (loc: Loc): Record<string, unknown> => loc.node as Record<string, unknown>;

export const show = (v: unknown): string => (v === undefined ? 'unset' : JSON.stringify(v));

/** Compares two optional bounds where a smaller value accepts less (upper bounds) or more (lower bounds). */
export function boundEffect(base: number | undefined, head: number | undefined, smallerIsNarrower: boolean): Effect | null {
  if (base === head) return null;
  if (base === undefined) return 'narrower';
  if (head === undefined) return 'wider';
  return (head < base) === smallerIsNarrower ? 'narrower' : 'wider';
}

export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
