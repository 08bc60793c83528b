import type { ContractSeverity } from '../types';
import type { ContractRule } from './rule';
import { OASDIFF_EQUIVALENTS } from './oasdiff-equivalents';
import { OASDIFF_LEVELS, type OasdiffLevel } from './oasdiff-registry';

/**
 * oasdiff's granularity: one of our rules (e.g. `request-type-changed`) is several oasdiff rules, told apart
 * by where the change sits (request body, a parameter by its `in`, a property inside either, a response
 * body, a response header), by the kind of change (a default added, changed or removed) and by whether the
 * property or header was required. The finding's id is derived from these, and only ever names an id of
 * oasdiff's registry (./oasdiff-registry.ts); where oasdiff has no twin for the location, the finding has no oasdiff id.
 */

/** Which part of an operation a schema comparison started from. */
export interface OasdiffWhere {
  area: 'request-body' | 'request-parameter' | 'response-body' | 'response-header';
  /** For a parameter: query, header, path or cookie. */
  in?: string;
  /** The label of the comparison's root: a finding with another label sits inside a property or item. */
  root: string;
}

/** Facts about one finding that pick among oasdiff's twins. */
export interface OasdiffHint {
  /** The property, parameter or header concerned was required (on the side where it exists). */
  required?: boolean;
  /** The parameter's `in` (parameter rules reported outside schema comparison). */
  in?: string;
  /** The response status concerned. */
  status?: string;
  /** An operation removed together with its whole path. */
  pathRemoved?: boolean;
  /** A default (or similar) value: added (none before), removed (none after), changed. */
  change?: 'added' | 'removed' | 'changed';
  /** A writeOnly response property added or removed (reported under --profile oasdiff only). */
  writeOnly?: boolean;
}

export interface OasdiffFinding {
  id: string;
  /** oasdiff's default level for `id`. */
  level: OasdiffLevel;
  /** HTTP method ("GET") and path as written in the head spec ("/users/{id}"), when the finding is in an operation. */
  method?: string;
  path?: string;
  /** The finding was graded info because its operation is alpha/draft (oasdiff exempts it too). */
  exempt?: boolean;
  /**
   * The same change (inside a component several operations reach) as oasdiff reports it at each further
   * operation: its id there may differ (the component is a response body here, an array item there).
   */
  also?: Array<Omit<OasdiffFinding, 'also'>>;
}

const known = (id: string): boolean => OASDIFF_LEVELS.has(id);
const firstKnown = (...ids: string[]): string | undefined => ids.find(known);

/** Strips the composition-branch segments (`<oneOf Cat>`) a label gains without descending into a property. */
const withoutBranches = (label: string): string => label.replace(/<[^<>]*>/g, '');

/**
 * The oasdiff id of one finding of `rule`; undefined when oasdiff has no equivalent. `direction` is the
 * direction the finding was compared in (webhooks flip it), `where` the schema root it was found under.
 */
export function deriveOasdiffId(rule: ContractRule, direction: 'request' | 'response' | undefined, label: string | undefined, where: OasdiffWhere | undefined, hint: OasdiffHint = {}): string | undefined {
  const equivalent = OASDIFF_EQUIVALENTS[rule.id]?.id;
  if (equivalent === undefined) return undefined;
  const req = hint.required === true ? 'required' : 'optional';
  const dir = direction ?? (rule.direction === 'none' ? 'response' : rule.direction);
  switch (rule.id) {
    case 'response-header-removed':
      return hint.required ? 'required-response-header-removed' : 'optional-response-header-removed';
    case 'response-property-removed':
      return hint.writeOnly ? `response-${req}-write-only-property-removed` : `response-${req}-property-removed`;
    case 'response-property-added':
      return hint.writeOnly ? `response-${req}-write-only-property-added` : `response-${req}-property-added`;
    case 'request-property-became-read-only':
      return `request-${req}-property-became-read-only`;
    case 'request-property-read-only-removed':
      return `request-${req}-property-became-not-read-only`;
    case 'response-property-became-write-only':
      return `response-${req}-property-became-write-only`;
    case 'response-property-write-only-removed':
      return `response-${req}-property-became-not-write-only`;
    case 'response-status-added':
      return hint.status !== undefined && !hint.status.startsWith('2') ? 'response-non-success-status-added' : 'response-success-status-added';
    case 'api-removed-without-deprecation':
    case 'api-removed-with-deprecation':
    case 'api-removed-before-sunset':
      return hint.pathRemoved ? equivalent.replace(/^api-/, 'api-path-') : equivalent;
    case 'api-sunset-date-invalid':
      return hint.pathRemoved ? 'api-path-sunset-parse' : equivalent;
    case 'request-parameter-added-required':
      return hint.in === 'path' ? 'new-request-path-parameter' : equivalent;
    case 'request-parameter-default-changed':
      return hint.change === 'added' ? 'request-parameter-default-value-added' : hint.change === 'removed' ? 'request-parameter-default-value-removed' : equivalent;
    default:
      break;
  }
  // only schema rules have location twins; the others are reported where they are (a parameter, a body …)
  if (where === undefined || !rule.family.startsWith('schema')) return rule.id === 'property-deprecated' ? `${dir}-property-deprecated` : equivalent;
  // rules about a property itself (added, removed, required, readOnly …) always sit on a property
  const aboutProperty = rule.id === 'property-deprecated' || /^(?:request|response)-property-(?!names-)/.test(rule.id);
  const property = aboutProperty || label === undefined || withoutBranches(label) !== where.root;
  if (rule.id === 'request-property-added-required' && where?.area === 'request-parameter' && where.in === 'header') return 'new-required-request-header-property';
  // the keyword part shared by all twins: "type-changed", "enum-value-removed", "discriminator-mapping-changed" …
  const m = /^(?:request|response)-(?:property|parameter|body)-(.+)$/.exec(equivalent);
  if (m === null) {
    if (rule.id === 'property-deprecated') return `${dir}-property-deprecated`;
    return equivalent;
  }
  let x = m[1];
  if (x === 'default-value-changed' && hint.change !== undefined) x = `default-value-${hint.change}`;
  const area = where?.area;
  let derived: string | undefined;
  if (area === 'request-body') derived = property ? firstKnown(`request-property-${x}`) : firstKnown(`request-body-${x}`, `request-property-${x}`);
  else if (area === 'request-parameter') {
    derived = property
      ? firstKnown(`request-parameter-property-${x}`, ...(where!.in === 'header' ? [`request-header-property-${x}`] : []), `request-property-${x}`)
      : firstKnown(`request-parameter-${x}`);
  } else if (area === 'response-body') derived = property ? firstKnown(`response-property-${x}`) : firstKnown(`response-body-${x}`, `response-property-${x}`);
  else if (area === 'response-header') derived = property ? firstKnown(`response-property-${x}`) : firstKnown(`response-header-${x}`);
  else derived = firstKnown(`${dir}-property-${x}`);
  // a location oasdiff has no twin for (e.g. maxItems of a request body): no oasdiff id rather than a wrong one
  return derived;
}

/** Our severity as an oasdiff level (the review-ledger profile): breaking = ERR, warning = WARN, the rest INFO. */
export const levelOfSeverity = (s: ContractSeverity): OasdiffLevel => (s === 'breaking' ? 'ERR' : s === 'warning' ? 'WARN' : 'INFO');

/** An oasdiff level as our severity (the oasdiff profile): INFO keeps our non-breaking/info distinction. */
export function severityOfLevel(level: OasdiffLevel, ours: ContractSeverity): ContractSeverity {
  if (level === 'ERR') return 'breaking';
  if (level === 'WARN') return 'warning';
  return ours === 'breaking' || ours === 'warning' ? 'info' : ours;
}

/** Every oasdiff id a finding of `rule` can print (all locations, required or not, …), with its level: the docs' rule-by-rule profile table. */
export function oasdiffVariants(rule: ContractRule): Array<{ id: string; level: OasdiffLevel }> {
  const out = new Map<string, OasdiffLevel>();
  const add = (id: string | undefined) => {
    if (id !== undefined) out.set(id, OASDIFF_LEVELS.get(id)!);
  };
  const hints: OasdiffHint[] = [];
  for (const required of [false, true])
    for (const change of [undefined, 'added', 'removed', 'changed'] as const)
      for (const extra of [{}, { in: 'path' }, { status: '200' }, { status: '404' }, { pathRemoved: true }, { writeOnly: true }]) hints.push({ required, ...(change ? { change } : {}), ...extra });
  const wheres: Array<OasdiffWhere | undefined> = [
    undefined,
    { area: 'request-body', root: 'r' },
    { area: 'request-parameter', in: 'query', root: 'r' },
    { area: 'request-parameter', in: 'header', root: 'r' },
    { area: 'response-body', root: 'r' },
    { area: 'response-header', root: 'r' },
  ];
  const directions = rule.direction === 'none' ? (['request', 'response'] as const) : ([rule.direction] as const);
  for (const direction of directions)
    for (const where of wheres) {
      // a location only appears in the direction it flows (webhooks aside)
      if (where && !where.area.startsWith(direction)) continue;
      for (const label of where ? ['r', 'r.x'] : [undefined]) for (const hint of hints) add(deriveOasdiffId(rule, direction, label, where, hint));
    }
  return [...out].map(([id, level]) => ({ id, level })).sort((a, b) => a.id.localeCompare(b.id));
}
