import type { DiffContext, PairRecord, Site } from '../context';
import { isObject, type Loc, type SpecDocuments } from '../document';
import type { OasdiffHint } from '../oasdiff-id';
import type { ContractRule, Effect, KeywordFamily } from '../rule';
import { checkArray } from './schema-arrays';
import { nodeOf, type SchemaComparer } from './schema-comparer';
import { checkAllOfBranches, checkComposition, checkCompositionWrapping, checkRefRename } from './schema-composition';
import { checkConstraints } from './schema-constraints';
import { checkObject } from './schema-objects';
import { checkTypesAndValues } from './schema-types';

const MAX_LABEL = 200;

/** JSON Schema boolean forms: `true` accepts anything, `false` nothing. */
function asSchemaNode(node: unknown): Record<string, unknown> {
  if (node === false) return { not: {} };
  return isObject(node) ? node : {};
}

/**
 * Compares two schemas lazily, never expanding them. Each (base location, head location, direction)
 * triple is compared at most once for the whole diff, which bounds the work by the number of location
 * pairs the two documents actually align (linear in practice) and makes any reference cycle — self,
 * mutual, through allOf/items/additionalProperties — terminate at the first revisit.
 */
export class SchemaDiff implements SchemaComparer {
  /** Pairs waiting to be compared. An explicit queue instead of recursion: deep or long reference chains cannot overflow the stack. */
  private readonly pending: Array<[Site, Loc, Loc, PairRecord | undefined]> = [];
  private draining = false;

  private readonly asWritten: SameAsWritten;

  constructor(readonly ctx: DiffContext) {
    this.asWritten = new SameAsWritten(ctx.base, ctx.head);
  }

  compare(site: Site, base: Loc, head: Loc): void {
    // the same content on both sides, references and annotations included: nothing to find below it, and
    // nothing to remember either (met again, it is the same again)
    if (this.asWritten.same(base, head)) return;
    // Labels grow by one segment per level; through a cycle that would make memory quadratic in the depth.
    const bounded = site.label.length > MAX_LABEL ? { ...site, label: `${site.label.slice(0, 60)} … ${site.label.slice(-(MAX_LABEL - 70))}` } : site;
    this.pending.push([bounded, base, head, this.ctx.currentPair]);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let i = 0; i < this.pending.length; i++) {
        const [s, b, h, parent] = this.pending[i];
        const record: PairRecord = { label: s.label, operation: s.operation, reports: [], children: [] };
        const earlier = this.ctx.comparedPairs.add(s.direction, this.ctx.base.deref(b), this.ctx.head.deref(h), record);
        if (earlier !== undefined) {
          if (earlier.operation !== s.operation) this.replay(earlier, s);
          continue;
        }
        parent?.children.push(record);
        this.ctx.currentPair = record;
        try {
          this.compareNow(s, b, h);
        } finally {
          this.ctx.currentPair = undefined;
        }
      }
    } finally {
      this.pending.length = 0;
      this.draining = false;
    }
  }

  private compareNow(site: Site, base: Loc, head: Loc): void {
    const b = this.ctx.base.deref(base);
    const h = this.ctx.head.deref(head);
    checkRefRename(this, site, base, head, b, h);
    checkAllOfBranches(this, site, base, head, b, h);
    // from here on, what a client sees: allOf composed, nullable-by-oneOf unwrapped
    const bl: Loc = this.ctx.baseView.view({ ...b, node: asSchemaNode(b.node) });
    const hl: Loc = this.ctx.headView.view({ ...h, node: asSchemaNode(h.node) });
    if (checkCompositionWrapping(this, site, bl, hl)) return;
    checkTypesAndValues(this, site, bl, hl);
    checkConstraints(this, site, bl, hl);
    // against an unconstrained schema ({}), the widening (or narrowing) is the one finding: listing every
    // property and item of the other side as removed (or added) would say the same thing many times over
    if (Object.keys(nodeOf(bl)).length === 0 || Object.keys(nodeOf(hl)).length === 0) return;
    checkObject(this, site, bl, hl);
    checkArray(this, site, bl, hl);
    checkComposition(this, site, bl, hl);
  }

  /**
   * A pair already compared for another operation: its findings (and those of the pairs it led to) are one
   * change each for us, but oasdiff reports them again at this operation — repeat them here, relabelled,
   * so the context adds this operation's oasdiff finding to each.
   */
  private replay(root: PairRecord, site: Site): void {
    const visited = new Set<PairRecord>();
    const rebase = (label: string | undefined) =>
      label !== undefined && label.startsWith(root.label) ? `${site.label}${label.slice(root.label.length)}` : (label ?? site.label);
    const walk = (rec: PairRecord) => {
      if (visited.has(rec)) return;
      visited.add(rec);
      for (const r of rec.reports)
        this.ctx.report(r.rule, { ...r.site, operation: site.operation, display: site.display, direction: site.direction, label: rebase(r.site.label), ...(site.where ? { where: site.where } : {}) }, r.input, true);
      for (const c of rec.children) walk(c);
    };
    walk(root);
  }

  emit(family: KeywordFamily, effect: Effect, site: Site, base: Loc, head: Loc, message: string, subject?: string): void {
    const rule = family.rules[site.direction][effect];
    if (rule) this.report(rule, site, base, head, message, subject);
  }

  report(rule: ContractRule, site: Site, base: Loc | undefined, head: Loc | undefined, message: string, subject?: string, oasdiff?: OasdiffHint): void {
    this.ctx.report(rule, site, { base, head, subject, message: `${site.label}: ${message}`, ...(oasdiff ? { oasdiff } : {}) });
  }
}

const MAX_RAW_DEPTH = 200;

/**
 * Whether two schemas are the same exactly as written — every keyword (annotations too), keys in their
 * written order, each `$ref` by its text and by what it leads to — so that comparing them would find
 * nothing at all and the comparison can stop there. Walks both sides in step and stops at the first
 * difference; each pair of nodes is decided once. Says "not the same" whenever it cannot tell: a reference
 * that does not resolve (the comparison records it), a pair already being decided (a cycle), a tree deeper
 * than any real schema. So "the same" is always exact, and "not the same" only means "compare them".
 * One thing a skipped pair no longer does: compose the views of its nodes first. Where a node inside a
 * composed schema is reported (Composer.relocate) is recorded by the first composition that meets it, so
 * skipping can change which path records it; on the four real pairs of bench:contract no pointer changed
 * (their outputs are byte-identical to the comparison without the skip), nor any eval:contract verdict.
 */
class SameAsWritten {
  /**
   * What was decided, per base node: the head node it was decided against and the answer. One entry per
   * node (a node is nearly always compared with one other): forgetting an earlier answer only costs time.
   * Plain maps, not weak ones: they live as long as the comparison, and weak maps cost the collector more.
   */
  private readonly decided = new Map<object, { head: object; same: boolean }>();
  /** Pairs being decided (a base node → its head node): what stops a walk around a cycle. */
  private readonly deciding = new Map<object, object>();

  constructor(
    private readonly base: SpecDocuments,
    private readonly head: SpecDocuments,
  ) {}

  same(b: Loc, h: Loc): boolean {
    return this.eq(b.node, b.file, h.node, h.file, 0);
  }

  private eq(b: unknown, bFile: string, h: unknown, hFile: string, depth: number): boolean {
    if (typeof b !== 'object' || b === null || typeof h !== 'object' || h === null) return b === h;
    const earlier = this.decided.get(b);
    if (earlier !== undefined && earlier.head === h) return earlier.same;
    // a pair met again while it is being decided (a cycle), or a base node met with another head node
    // while it is being decided: not decided here, so "not the same" (the comparison will look)
    if (this.deciding.has(b) || depth > MAX_RAW_DEPTH) return false;
    this.deciding.set(b, h);
    let same: boolean;
    try {
      same = this.decide(b, bFile, h, hFile, depth);
    } finally {
      this.deciding.delete(b);
    }
    this.decided.set(b, { head: h, same });
    return same;
  }

  private decide(b: object, bFile: string, h: object, hFile: string, depth: number): boolean {
    if (Array.isArray(b) || Array.isArray(h)) {
      if (!Array.isArray(b) || !Array.isArray(h) || b.length !== h.length) return false;
      for (let i = 0; i < b.length; i++) if (!this.eq(b[i], bFile, h[i], hFile, depth + 1)) return false;
      return true;
    }
    const bo = b as Record<string, unknown>;
    const ho = h as Record<string, unknown>;
    const bk = Object.keys(bo);
    const hk = Object.keys(ho);
    if (bk.length !== hk.length) return false;
    for (let i = 0; i < bk.length; i++) if (bk[i] !== hk[i]) return false;
    for (const k of bk) if (!this.eq(bo[k], bFile, ho[k], hFile, depth + 1)) return false;
    if (typeof bo.$ref !== 'string') return true;
    const bt = this.base.follow({ file: bFile, ptr: '', node: bo });
    const ht = this.head.follow({ file: hFile, ptr: '', node: ho });
    return bt !== null && ht !== null && this.eq(bt.node, bt.file, ht.node, ht.file, depth + 1);
  }
}
