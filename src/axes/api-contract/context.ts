import { createHash } from 'node:crypto';
import type { ContractChange } from '../types';
import { formatPointer, type Loc, type SpecDocuments } from './document';
import { Composer } from './compose';
import { deriveOasdiffId, type OasdiffFinding, type OasdiffHint, type OasdiffWhere } from './oasdiff-id';
import type { ContractRule } from './rule';
import { OASDIFF_LEVELS } from './oasdiff-registry';

/** Where in the API a comparison is happening: which operation, which way data flows, and a readable path. */
export interface Site {
  /** Normalized operation key ("GET /users/{}"); "" for document-level changes. */
  operation: string;
  /** What the reader sees ("GET /users/{id}"). */
  display: string;
  direction: 'request' | 'response';
  /** Human path inside the operation: "request body (application/json).address.zip". */
  label: string;
  /** Set while comparing a parameter's schema: its default is judged by the parameter rules. */
  parameter?: true;
  /** Where the comparison started (request body, parameter, response body or header): picks oasdiff's twin ids. */
  where?: OasdiffWhere;
}

export interface ReportInput {
  base?: Pick<Loc, 'file' | 'ptr'>;
  head?: Pick<Loc, 'file' | 'ptr'>;
  /** Distinguishes several changes of one rule at the same pointers (an enum value, a scope, a media type). */
  subject?: string;
  message: string;
  /** What tells oasdiff's twins apart (required or optional, the parameter's `in`, the status …). */
  oasdiff?: OasdiffHint;
}

export interface DiffOptions {
  /** ISO date the sunset rules compare against (x-sunset passed or not). Injected: the engine reads no clock. */
  asOf?: string;
  /**
   * `oasdiff`: where we deliberately detect differently from oasdiff (see "Detection under --profile oasdiff"
   * in docs/contract-rules.md), detect as oasdiff does. Default `review-ledger`: our detection.
   */
  profile?: 'review-ledger' | 'oasdiff';
}

/**
 * The state of one comparison: the two sides, the changes found so far (deduplicated by rule and
 * pointers, so a change inside a schema shared by many operations is one change, attributed to the
 * first operation that reaches it in sorted order), and the set of schema pairs already compared.
 */
export class DiffContext {
  readonly changes: ContractChange[] = [];
  /** changeId → the finding as oasdiff would name it (only for changes oasdiff has an equivalent of). */
  readonly oasdiff = new Map<string, OasdiffFinding>();
  /** identity → changeId and the operations the change was already found in. */
  private readonly seenChanges = new Map<string, { changeId: string; operations: Set<string> }>();
  /** The compared pair whose checks are running: what its reports are recorded in (for replay at another operation). */
  currentPair: PairRecord | undefined;
  /** (base schema, head schema, direction) triples already compared: what makes cycles terminate. */
  readonly comparedPairs = new ComparedPairs();
  /** What clients see of each side's schemas (allOf composed, nullable-by-oneOf unwrapped), memoized. */
  readonly baseView: Composer;
  readonly headView: Composer;

  /**
   * Set while comparing an operation marked alpha/draft: its breaking and warning changes are still shown,
   * graded info and labelled, because unstable operations are exempt from the breaking rules.
   */
  exempt: string | undefined;

  constructor(
    readonly base: SpecDocuments,
    readonly head: SpecDocuments,
    /** The repository path the change is reported under (the head path, or the base path of a deleted spec). */
    readonly specPath: string,
    readonly options: DiffOptions = {},
  ) {
    this.baseView = new Composer(base);
    this.headView = new Composer(head);
    this.asOasdiff = options.profile === 'oasdiff';
  }

  /** Detect as oasdiff does where we deliberately differ (`--profile oasdiff`). */
  readonly asOasdiff: boolean;

  report(rule: ContractRule, site: Pick<Site, 'operation' | 'display'> & Partial<Pick<Site, 'direction' | 'label' | 'where'>>, input: ReportInput, replaying = false): void {
    // a node seen through a composed schema is reported where it is written
    const basePointer = input.base ? formatPointer(this.base.rootFile, this.baseView.relocate(input.base)) : undefined;
    const headPointer = input.head ? formatPointer(this.head.rootFile, this.headView.relocate(input.head)) : undefined;
    // A change located inside an operation belongs to that operation; one inside a shared component is
    // the same change whichever operation reached it first, so the operation stays out of its identity.
    const local = isUnderOperation(basePointer) || isUnderOperation(headPointer);
    const identity = [rule.id, this.specPath, local ? site.operation : '', normalizePointer(basePointer), normalizePointer(headPointer), input.subject ?? ''].join('\u0000');
    this.currentPair?.reports.push({ rule, site: { ...site }, input });
    const exempt = this.exempt !== undefined && (rule.severity === 'breaking' || rule.severity === 'warning');
    const seen = this.seenChanges.get(identity);
    if (seen !== undefined) {
      // the same change (inside a shared component) reached from another operation: one change for us,
      // one more finding for oasdiff, which reports a component change once per operation it affects
      if (!site.operation || seen.operations.has(site.operation)) return;
      seen.operations.add(site.operation);
      const first = this.oasdiff.get(seen.changeId);
      const id = deriveOasdiffId(rule, site.direction, site.label, site.where, input.oasdiff);
      const written = /^([A-Z]+) (\/.*)$/.exec(site.display);
      if (first === undefined || id === undefined || !written) return;
      (first.also ??= []).push({ id, level: OASDIFF_LEVELS.get(id)!, method: written[1], path: written[2], ...(exempt ? { exempt: true } : {}) });
      return;
    }
    if (replaying) return;
    const message = site.display ? `${site.display}: ${input.message}` : input.message;
    const changeId = `ac_${createHash('sha256').update(identity).digest('hex').slice(0, 24)}`;
    this.seenChanges.set(identity, { changeId, operations: new Set(site.operation ? [site.operation] : []) });
    const oasdiffId = deriveOasdiffId(rule, site.direction, site.label, site.where, input.oasdiff);
    if (oasdiffId !== undefined) {
      const written = /^([A-Z]+) (\/.*)$/.exec(site.display);
      this.oasdiff.set(changeId, {
        id: oasdiffId,
        level: OASDIFF_LEVELS.get(oasdiffId)!,
        ...(written ? { method: written[1], path: written[2] } : {}),
        ...(exempt ? { exempt: true } : {}),
      });
    }
    this.changes.push({
      changeId,
      ruleId: rule.id,
      severity: exempt ? 'info' : rule.severity,
      direction: rule.direction,
      message: exempt ? `${message} (exempt: x-stability-level ${this.exempt})` : message,
      specPath: this.specPath,
      ...(site.operation ? { operation: site.operation } : {}),
      ...(basePointer !== undefined ? { basePointer } : {}),
      ...(headPointer !== undefined ? { headPointer } : {}),
    });
  }
}

/** One compared schema pair: the reports its checks made and the pairs it queued, so that reaching it again from another operation can repeat its oasdiff findings there. */
export interface PairRecord {
  label: string;
  operation: string;
  reports: Array<{ rule: ContractRule; site: Pick<Site, 'operation' | 'display'> & Partial<Pick<Site, 'direction' | 'label' | 'where'>>; input: ReportInput }>;
  children: PairRecord[];
}

const isUnderOperation = (pointer: string | undefined): boolean => pointer !== undefined && /^#\/(paths|webhooks)\//.test(pointer);

/** Path parameter names are not part of an operation's identity: "/users/{id}" ≡ "/users/{userId}". */
export function normalizePointer(pointer: string | undefined): string {
  // As /\{[^}/]*\}/g → '{}' would, in one pass: that regex retried every `{` up to the next `}` or `/`.
  const p = pointer ?? '';
  let out = '';
  let at = 0;
  let from = 0;
  for (;;) {
    const open = p.indexOf('{', from);
    if (open < 0) break;
    let k = open + 1;
    while (k < p.length && p[k] !== '}' && p[k] !== '/') k++;
    if (k === p.length) break;
    if (p[k] === '/') {
      from = k; // every `{` before this `/` stops at it too
      continue;
    }
    out += `${p.slice(at, open)}{}`;
    at = from = k + 1;
  }
  return out + p.slice(at);
}

/**
 * Texts already computed, per top-level object. Parsed documents and the views composed from them are never
 * mutated once built, so an object's text never changes; only top-level results are kept, because a node's
 * text inside a cycle depends on where the walk entered it.
 */
const canonicalTexts = new WeakMap<object, string>();

/** Stable text of a JSON value (keys sorted), for "identical content" checks and enum values. Cycle-safe. */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  const cached = canonicalTexts.get(value);
  if (cached !== undefined) return cached;
  const text = canonicalWalk(value);
  canonicalTexts.set(value, text);
  return text;
}

function canonicalWalk(value: object): string {
  const stack = new Set<object>();
  const walk = (v: unknown): string => {
    if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'null';
    if (stack.has(v)) return '"<cycle>"';
    stack.add(v);
    const out = Array.isArray(v)
      ? `[${v.map(walk).join(',')}]`
      : `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${walk((v as Record<string, unknown>)[k])}`)
          .join(',')}}`;
    stack.delete(v);
    return out;
  };
  return walk(value);
}

const SYNTHETIC = {};
const PRIMITIVES = new Map<unknown, object>();

/**
 * The schema pairs already compared, keyed by the identity of the parsed nodes (a node is one location of
 * one file; YAML aliases share a node between locations, which then are the same schema anyway). Cheaper
 * than building a "file#pointer|file#pointer" string per pair on documents with millions of nodes.
 */
export class ComparedPairs {
  private readonly request = new Map<object, Map<object, PairRecord>>();
  private readonly response = new Map<object, Map<object, PairRecord>>();
  size = 0;

  /** Records the pair with its record; the earlier record when it was already there. */
  add(direction: 'request' | 'response', base: Loc, head: Loc, record: PairRecord): PairRecord | undefined {
    const byBase = direction === 'request' ? this.request : this.response;
    const b = identity(base);
    let heads = byBase.get(b);
    if (!heads) {
      heads = new Map();
      byBase.set(b, heads);
    }
    const h = identity(head);
    const earlier = heads.get(h);
    if (earlier) return earlier;
    heads.set(h, record);
    this.size++;
    return undefined;
  }
}

function identity(loc: Loc): object {
  if (loc.synthetic) return SYNTHETIC;
  const node = loc.node;
  if (typeof node === 'object' && node !== null) return node;
  let sentinel = PRIMITIVES.get(node);
  if (!sentinel) {
    sentinel = {};
    PRIMITIVES.set(node, sentinel);
  }
  return sentinel;
}
