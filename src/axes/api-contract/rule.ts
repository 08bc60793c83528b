import type { ContractSeverity } from '../types';

export type RuleDirection = 'request' | 'response' | 'none';

/** One row of the contract-rules table (docs/contract-rules.md is generated from these). */
export interface ContractRule {
  id: string;
  /** What the rule detects, in one sentence. */
  description: string;
  direction: RuleDirection;
  severity: ContractSeverity;
  /** A base → head example, short enough for a table cell. */
  example: string;
  /** The family (file) the rule belongs to, for the docs. */
  family: string;
  /**
   * The equivalent oasdiff rule (github.com/oasdiff/oasdiff, checker/rules.go) and its level, so users
   * migrating from oasdiff can map findings; `differs` says why, where our grade deliberately disagrees.
   * Attached from the table in ./oasdiff.ts (absent: oasdiff has no equivalent).
   */
  oasdiff?: OasdiffEquivalent;
}

export interface OasdiffEquivalent {
  /** oasdiff's rule id. Schema rules name the property-level id; oasdiff has request-body-/request-parameter- twins. */
  id: string;
  level: 'ERR' | 'WARN' | 'INFO';
  /** Why our severity class differs from oasdiff's level (ERR/WARN = breaking or warning, INFO = not). */
  differs?: string;
}

export function defineRule(family: string, id: string, direction: RuleDirection, severity: ContractSeverity, description: string, example: string): ContractRule {
  return { id, family, direction, severity, description, example };
}

/** Whether head accepts more, fewer or different values than base. */
export type Effect = 'narrower' | 'wider' | 'changed';

/** A schema fragment pair used both as the docs example and as the fixture of a schema rule. */
export type SchemaExample = [base: Record<string, unknown>, head: Record<string, unknown>];

/**
 * A JSON-Schema keyword whose changes are classified by direction alone: for a request, head accepting
 * fewer values than base breaks clients that send them; for a response, head producing more values than
 * base breaks clients that read them. A keyword family defines up to six rules:
 *   request-<slug>-<narrowerVerb> breaking      response-<slug>-<narrowerVerb> non-breaking
 *   request-<slug>-<widerVerb>    non-breaking  response-<slug>-<widerVerb>    breaking
 *   request-<slug>-<changedVerb>  breaking      response-<slug>-<changedVerb>  breaking
 */
export interface KeywordFamily {
  slug: string;
  /** e.g. "maxLength" */
  keyword: string;
  verbs: { narrower: string; wider: string; changed?: string };
  examples: { narrower: SchemaExample; wider: SchemaExample; changed?: SchemaExample };
  rules: Record<'request' | 'response', Partial<Record<Effect, ContractRule>>>;
}

export function keywordFamily(
  family: string,
  slug: string,
  keyword: string,
  verbs: KeywordFamily['verbs'],
  examples: KeywordFamily['examples'],
  /** Grades that differ from the direction rule, keyed "<direction>-<effect>" (e.g. oasdiff's INFO for a changed response pattern). */
  overrides?: Partial<Record<`${'request' | 'response'}-${Effect}`, ContractSeverity>>,
  /** A sentence appended to the description of an overridden rule (why it is graded so). */
  notes?: Partial<Record<`${'request' | 'response'}-${Effect}`, string>>,
): KeywordFamily {
  const show = ([b, h]: SchemaExample) => `\`${JSON.stringify(b)}\` → \`${JSON.stringify(h)}\``;
  const make = (direction: 'request' | 'response', effect: Effect): ContractRule | undefined => {
    const verb = verbs[effect];
    const example = examples[effect];
    if (!verb || !example) return undefined;
    const breaking = effect === 'changed' || (direction === 'request' ? effect === 'narrower' : effect === 'wider');
    const severity = overrides?.[`${direction}-${effect}`] ?? (breaking ? 'breaking' : 'non-breaking');
    const why =
      effect === 'changed'
        ? 'values valid before may be invalid now and the reverse'
        : effect === 'narrower'
          ? direction === 'request'
            ? 'clients may send values the server now refuses'
            : 'the server returns a subset of what it returned before'
          : direction === 'request'
            ? 'the server accepts more than before'
            : 'clients may receive values they were told could not occur';
    return defineRule(
      family,
      `${direction}-${slug}-${verb}`,
      direction,
      severity,
      `\`${keyword}\` of a ${direction} schema ${verb.replace(/-/g, ' ')}: ${why}.${notes?.[`${direction}-${effect}`] ? ` ${notes[`${direction}-${effect}`]}` : ''}`,
      show(example),
    );
  };
  return {
    slug,
    keyword,
    verbs,
    examples,
    rules: {
      request: { narrower: make('request', 'narrower'), wider: make('request', 'wider'), changed: make('request', 'changed') },
      response: { narrower: make('response', 'narrower'), wider: make('response', 'wider'), changed: make('response', 'changed') },
    },
  };
}

export function familyRules(f: KeywordFamily): ContractRule[] {
  return (['request', 'response'] as const).flatMap((d) => (['narrower', 'wider', 'changed'] as const).map((e) => f.rules[d][e]).filter((r): r is ContractRule => !!r));
}
