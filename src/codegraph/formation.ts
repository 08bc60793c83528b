import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { CohortData, DependencyDiffData, FileRole, FragmentData } from '../events/catalogue/compute';
import { BOUNDS, clipId, clipText } from '../events/catalogue/bounds';
import type { CodeGraph } from './graph';
import type { ImportDecl } from './facts';
import { subjectOf, toolingConfigPairs, typeTestSubject } from './pairing';
import type { ChangedMembers, DeclaredMemberPair } from './declared-members';
import type { MirrorPair } from './mirrors';
import { isTestPath } from './file-roles';
import { ChangedNames, IdentifierFrequency, MAX_FILE_SHARE, newIdentifierGroups, sharedIdentifierPairs, testNameCandidates, testNamesSubject } from './shared-identifiers';
import { testTitleCandidates, testTitlesSubject } from './test-titles';
import { AffinityCohort, testAffinityJoins } from './test-affinity';
import { fixtureNamings, NameLiterals } from './fixture-names';

/** A changed file as formation sees it. */
export interface FormationFile {
  path: string;
  oldPath?: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type_changed';
  role: FileRole;
  /** Grammar language, when one exists. */
  language?: string;
  /** Language name of source without a grammar. */
  unsupportedLanguage?: string;
  fragments: FragmentData[];
  /** The grammar's parse of the file has errors: said in the cohort's reason. */
  parseErrors?: boolean;
  /** Symbol ids of modified definitions whose changed lines are only comments, docstrings or blank (`code-change`). */
  docOnly?: Set<string>;
}

/**
 * What may join two changed files into one cohort besides a resolved edge between changed definitions:
 * `changed-reference` (stricter: the reference itself is on a changed line), `new-symbol-import` (an import
 * or re-export of a symbol the change adds or deletes), `changed-import` (a source file starts or stops
 * importing a changed symbol), `code-change` (a definition whose changed lines are only comments,
 * docstrings or blank lines is no link target), `wrapper` (one hop through an
 * exported definition of a changed file that calls a changed private one), `test-subject` (name pairing), `type-test` (a tsd type
 * test `X.test-d.ts` and the declaration file `X.d.ts` beside it, `pairing.ts` `typeTestSubject`), `fixture-name` (a changed test
 * naming another changed file in a string literal: `execa('verbose-script.js')` and `test/fixtures/verbose-script.js`,
 * `fixture-names.ts`), `declared-member` (a hand-written `X.d.ts` and the `X.js` beside it both changing a member the
 * implementation starts or stops naming, `declared-members.ts`), `member-use` (a rare member one changed source declares on a
 * changed line and one other changed file accesses on a changed line, `declared-members.ts`), `similar-edit` (the same line added
 * or removed in two files, `similar-edits.ts`), `same-substitution` (the same part of a line changed the same way in two files,
 * `similar-edits.ts`), `test-names` (a test nothing joined to a source joins the one changed
 * source whose changed lines name most of the same rare identifiers and string literals, `shared-identifiers.ts`), `test-titles` (a test
 * still without a source joins the one changed source whose changed lines name a rare identifier the titles of its added test cases
 * name, `test-titles.ts`), `test-affinity` (a cohort of sources no test joined and a cohort of tests that joined no source whose
 * changed lines' words are clearly, both ways, each other's closest, `test-affinity.ts`), `new-identifier` (changed
 * files whose changed lines name an identifier no indexed file of the base holds, one of them a source), `mirror` (a generated or vendored
 * copy of the changed tree under another root, `mirrors.ts`), `co-change` (changed together in earlier commits), `directory` (loners of
 * one directory), `type-edges` (every edge only TypeScript's checker found), `type-bindings` (of those, the
 * ones naming their target through a binding or a module's member, not a member of an inferred receiver,
 * and no JavaScript file's reference into a declaration file). Each is measured with and without on
 * `npm run eval:cohorts` (docs/cohorts.md).
 */
export type FormationSignal = 'changed-reference' | 'test-hub' | 'new-symbol-import' | 'changed-import' | 'code-change' | 'wrapper' | 'test-subject' | 'type-test' | 'fixture-name' | 'declared-member' | 'member-use' | 'similar-edit' | 'same-substitution' | 'edit-idiom' | 'shared-identifiers' | 'test-names' | 'test-titles' | 'test-affinity' | 'new-identifier' | 'tooling-config' | 'mirror' | 'co-change' | 'directory' | 'type-edges' | 'type-bindings';
export const ALL_SIGNALS: readonly FormationSignal[] = ['changed-reference', 'test-hub', 'new-symbol-import', 'changed-import', 'code-change', 'wrapper', 'test-subject', 'type-test', 'fixture-name', 'declared-member', 'member-use', 'similar-edit', 'same-substitution', 'edit-idiom', 'shared-identifiers', 'test-names', 'test-titles', 'test-affinity', 'new-identifier', 'tooling-config', 'mirror', 'co-change', 'directory', 'type-edges', 'type-bindings'];
// Measured (docs/cohorts.md): co-change, directory and type-edges did not earn their place on the
// five evaluation repos, nor did `wrapper` through any unchanged definition (it now hops only from an exported
// top-level function to a changed private one of its file). TypeScript's checker runs by default (computeReview's
// `typeEdges`) and all its edges feed the graph (blast radius, dependents); of them only `type-bindings` joins
// cohorts by default (commander gains, immer and h3 unchanged; a member of an inferred receiver over-merges h3).
// `similar-edit` earned its place on eight repositories, `tooling-config` on ofetch (neutral on the other seven),
// `shared-identifiers` on eight (16 cases up, none down), `mirror` on zod and `wrapper` on h3, `test-names` on thirteen
// (19 cases up, none down), `test-hub` on thirteen, `type-test` on execa, `new-identifier` on thirteen, `test-titles` on thirteen, `same-substitution` and `test-affinity` on thirteen, `fixture-name` on nineteen (execa 13 cases up, 6 down;
// the rest unchanged but commander, 1 up), `declared-member` on execa (9 up, none down), `member-use` on h3 and got (5 up, none down on 26)
// (docs/cohorts.md).
export const DEFAULT_SIGNALS: readonly FormationSignal[] = ['changed-reference', 'test-hub', 'new-symbol-import', 'changed-import', 'code-change', 'test-subject', 'type-bindings', 'similar-edit', 'edit-idiom', 'tooling-config', 'shared-identifiers', 'mirror', 'wrapper', 'test-names', 'type-test', 'new-identifier', 'test-titles', 'same-substitution', 'test-affinity', 'fixture-name', 'declared-member', 'member-use'];

/** Files of the change that earlier commits changed together (from `git log` before the base). */
export interface CoChangePair {
  a: string;
  b: string;
  together: number;
  window: number;
}

export interface FormationInput {
  files: FormationFile[];
  /** Changed line numbers per (head) path: head-side lines added or changed, base-side lines removed. */
  changedLines?: Map<string, { head: Set<number>; base: Set<number> }>;
  coChange?: CoChangePair[];
  /**
   * `similar-edit`: per (head) path, the normalized text of each changed line, `+` (added) or `-` (removed)
   * first (`editKeysOf`).
   */
  editLines?: Map<string, Set<string>>;
  /** `same-substitution`: per (head) path, the keys of its changed line pairs' substitutions (`substitutionKeysOf`), idioms dropped. */
  editSubstitutions?: Map<string, Set<string>>;
  /** `mirror`: changed files that are generated or vendored copies of another changed file (`detectMirrors`). */
  mirrors?: MirrorPair[];
  /** `declared-member`: declaration files and their implementations whose changed code lines share a member (`declaredMemberPairs`). */
  declaredMembers?: DeclaredMemberPair[];
  /** `member-use`: per changed file, the members its changed code lines declare and access (`changedMembersOf`). */
  changedMembers?: Map<string, ChangedMembers>;
  /** `shared-identifiers`: per (head) path, the identifiers on its changed lines (`changedIdentifiersOf`). */
  changedIdentifiers?: Map<string, Set<string>>;
  /** `test-names`: per (head) path, the one-line string literals on its changed lines (`changedLiteralsOf`). */
  changedLiterals?: Map<string, Set<string>>;
  /** `fixture-name`: per path, the string literals that could name a file on its added, unchanged (tests) and removed lines (`nameLiteralsOf`). */
  nameLiterals?: ReadonlyMap<string, NameLiterals>;
  /** `test-titles`: per (head) path, the title words of the test cases its added lines open (`changedTitleWordsOf`). */
  changedTitleWords?: Map<string, Set<string>>;
  /** `test-affinity`: per (head) path, the words of its added lines and of all its changed lines (`changedAffinityWordsOf`). */
  affinityWords?: Map<string, { added: Set<string>; changed: Set<string> }>;
  /** `test-affinity`: in how many of the head commit's indexed files each word occurs (`wordFrequency`). */
  affinityFrequency?: IdentifierFrequency;
  /** `shared-identifiers`, `test-names`: in how many of the head commit's indexed files each identifier occurs. */
  identifierFrequency?: IdentifierFrequency;
  /** `new-identifier`: in how many of the base commit's indexed files each identifier occurs (absent: new to the code). */
  baseIdentifierFrequency?: IdentifierFrequency;
  /** `new-identifier`: per (head) path, the keys its changed lines declare (`changedKeysOf`). */
  changedKeys?: Map<string, Set<string>>;
  /** Signals in use (default DEFAULT_SIGNALS). */
  signals?: readonly FormationSignal[];
  head?: CodeGraph;
  base?: CodeGraph;
  /** Why there is no semantic grouping at all (no index at the needed commit); undefined when indexed. */
  noIndexReason?: string;
  dependencyDiffs: DependencyDiffData[];
  /** Bound on the transitive dependents walk. */
  blastDepth?: number;
}

/**
 * A JavaScript file's reference into a declaration file (`require('../')` bound to `typings/index.d.ts`):
 * the code runs the implementation, the typings only describe it, so `type-bindings` does not join them
 * (measured on commander: with it the signal cost the median 0.800 → 0.733).
 */
function jsIntoTypings(fromFile: string, toFile: string): boolean {
  return /\.[cm]?jsx?$/.test(fromFile) && /\.d\.[cm]?ts$/.test(toFile);
}

/** A merge that would make a cohort larger than this is refused: the chain stays at file level. */
export const MAX_COHORT_FILES = 12;
export const DEFAULT_BLAST_DEPTH = 3;
/** Dependents listed per cohort (files and symbols each); beyond it the list is marked truncated. */
export const MAX_LISTED_DEPENDENTS = 200;
/** Symbols named in one reading-order step's explanation; the rest are counted. */
export const MAX_NAMES_IN_WHY = 8;

/**
 * `test-hub`: a definition referenced from more than this share of the head commit's indexed files' test
 * files is a hub (the entry point every test calls: `execa()`, `new Elysia()`, kong's `New`). A changed test's
 * reference to it on an UNCHANGED line says nothing about which change the test belongs to.
 */
export const TEST_HUB_SHARE = 0.05;
/** …and from at least this many test files: in a repository of a few dozen files 5 % is one or two tests, no hub. */
export const TEST_HUB_MIN_TESTS = 3;
const hubCounts = new WeakMap<CodeGraph, Map<string, number>>();
/** In how many distinct test files of the graph each definition is referenced (resolved edges). */
function testReferenceCounts(graph: CodeGraph): Map<string, number> {
  const cached = hubCounts.get(graph);
  if (cached) return cached;
  const files = new Map<string, Set<string>>();
  for (const e of graph.edges) {
    if (!isTestPath(e.fromFile) || e.fromFile === e.toFile) continue;
    const set = files.get(e.to) ?? new Set<string>();
    set.add(e.fromFile);
    files.set(e.to, set);
  }
  const counts = new Map([...files].map(([k, v]) => [k, v.size]));
  hubCounts.set(graph, counts);
  return counts;
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

/** Ancestors of a symbol id, nearest first: `a.ts#A.b.c` → `a.ts#A.b`, `a.ts#A`. */
function ancestors(id: string): string[] {
  const hashAt = id.indexOf('#');
  if (hashAt < 0) return [];
  const out: string[] = [];
  let q = id.slice(hashAt + 1);
  for (let dot = q.lastIndexOf('.'); dot > 0; dot = q.lastIndexOf('.')) {
    q = q.slice(0, dot);
    out.push(`${id.slice(0, hashAt)}#${q}`);
  }
  return out;
}

class UnionFind {
  private readonly parent = new Map<string, string>();
  private readonly size = new Map<string, number>();
  add(x: string): void {
    if (!this.parent.has(x)) {
      this.parent.set(x, x);
      this.size.set(x, 1);
    }
  }
  find(x: string): string {
    let r = x;
    while (this.parent.get(r) !== r) r = this.parent.get(r)!;
    this.parent.set(x, r);
    return r;
  }
  sizeOf(x: string): number {
    return this.size.get(this.find(x))!;
  }
  union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return;
    const [keep, drop] = ra < rb ? [ra, rb] : [rb, ra];
    this.parent.set(drop, keep);
    this.size.set(keep, this.size.get(keep)! + this.size.get(drop)!);
  }
}

interface Link {
  fromFile: string;
  toFile: string;
  fromSymbol: string;
  toSymbol: string;
  /** The unchanged wrapper the reference went through (the `wrapper` signal). */
  via?: string;
}

/**
 * Resolved edges between changed fragments of different files (SPEC §8.3), from the head graph and, for
 * deleted definitions, from the base graph. Paths are normalized to head paths. With the
 * `changed-reference` signal an edge counts only when the reference itself is on a changed line (the
 * caller's change is about the callee: a new call, an updated call, a removed one); without it, any
 * edge from a changed fragment does. With `wrapper`, a reference to an exported definition of a changed
 * file that calls a changed non-exported definition of that file counts as reaching it (one hop).
 */
function changedLinks(input: FormationInput, semanticFiles: FormationFile[], signals: ReadonlySet<FormationSignal>): Link[] {
  const fileOfSymbol = new Map<string, string>();
  const residualFiles = new Set<string>();
  const baseToHead = new Map<string, string>();
  for (const f of semanticFiles) {
    baseToHead.set(f.oldPath ?? f.path, f.path);
    for (const fr of f.fragments) {
      if (fr.symbolId) fileOfSymbol.set(fr.symbolId, f.path);
      else residualFiles.add(f.path);
    }
  }
  // `code-change`: a definition whose change is only its comments or docstring is no link target (what
  // references it does not depend on that change).
  const docOnly = new Set(signals.has('code-change') ? semanticFiles.flatMap((f) => [...(f.docOnly ?? [])]) : []);
  const linkable = (symbol: string) => !docOnly.has(symbol);

  const testFiles = new Set(semanticFiles.filter((f) => f.role === 'test').map((f) => f.path));
  const liveHeadFiles = new Set(semanticFiles.filter((f) => f.status !== 'deleted').map((f) => f.path));
  const byLine = signals.has('changed-reference');
  const typeEdges = signals.has('type-edges');
  const typeBindings = signals.has('type-bindings');
  const testHub = byLine && signals.has('test-hub');
  const hubGraph = input.head ?? input.base;
  const hubCount = hubGraph && testHub ? testReferenceCounts(hubGraph) : undefined;
  const hubBound = hubGraph ? TEST_HUB_SHARE * hubGraph.index.files.size : Infinity;
  const isHub = (to: string) => { const n = hubCount?.get(to) ?? 0; return n > hubBound && n >= TEST_HUB_MIN_TESTS; };
  const links: Link[] = [];
  const seen = new Set<string>();
  const visit = (graph: CodeGraph | undefined, side: 'head' | 'base') => {
    if (!graph) return;
    /**
     * A changed non-exported top-level function reached through one exported top-level function of the
     * same file that calls it (the reference names the wrapper, the change is in the private helper). One
     * hop only; a class is no wrapper (naming it says nothing about which changed method runs).
     */
    const topLevelFunction = (id: string) => {
      const def = graph.symbols.get(id)?.def;
      return def && def.parent === -1 && (def.kind === 'function' || def.kind === 'constant') ? def : undefined;
    };
    const throughWrapper = (to: string): string | undefined => {
      if (!signals.has('wrapper')) return undefined;
      const info = graph.symbols.get(to);
      if (!info || !topLevelFunction(to)?.exported) return undefined;
      for (const e of graph.outgoingOf(to)) {
        if (e.toFile !== info.path || !fileOfSymbol.has(e.to) || !linkable(e.to) || topLevelFunction(e.to)?.exported !== false) continue;
        return e.to;
      }
      return undefined;
    };
    for (const e of graph.edges) {
      // Edges only TypeScript's checker found join with `type-edges` (all of them) or `type-bindings` (those
      // naming their target through a binding or a module's member, not a member of an inferred receiver);
      // never a field read landing on its owner class. Measured: `type-bindings` is a default, `type-edges` is not (docs/cohorts.md).
      if (e.provenance === 'checker' && (e.member || !(typeEdges || (typeBindings && e.form !== 'receiver' && !jsIntoTypings(e.fromFile, e.toFile))))) continue;
      const fromFile = side === 'head' ? e.fromFile : baseToHead.get(e.fromFile);
      if (!fromFile || (side === 'head' && !liveHeadFiles.has(fromFile))) continue;
      // A changed test exercises whatever it references: the line rule is for source files.
      if (byLine && !testFiles.has(fromFile) && !input.changedLines?.get(fromFile)?.[side].has(e.line)) continue;
      // `test-hub`: a test's unchanged line naming a hub (referenced from > 5 % of the head's files' worth of
      // test files) is how every test starts, not what this one is about.
      if (testHub && testFiles.has(fromFile) && !input.changedLines?.get(fromFile)?.[side].has(e.line) && isHub(e.to)) continue;
      let fromSymbol: string | undefined;
      if (testFiles.has(fromFile)) fromSymbol = e.from; // a changed test exercises whatever it references
      else if (e.from === e.fromFile) fromSymbol = residualFiles.has(fromFile) || byLine ? e.from : undefined;
      else fromSymbol = [e.from, ...ancestors(e.from)].find((s) => fileOfSymbol.has(s)) ?? (byLine ? e.from : undefined);
      if (!fromSymbol) continue;
      // Exactly the changed definition: naming a class (a type annotation, `new X`) says nothing about
      // which of its changed methods runs, and treating it so turns every widely used class into a hub.
      const direct = fileOfSymbol.has(e.to) && linkable(e.to) ? e.to : undefined;
      const toSymbol = direct ?? throughWrapper(e.to);
      if (!toSymbol) continue;
      const toFile = fileOfSymbol.get(toSymbol)!;
      if (toFile === fromFile) continue;
      const key = `${fromFile}\0${toFile}\0${fromSymbol}\0${toSymbol}`;
      if (seen.has(key)) continue;
      seen.add(key);
      links.push({ fromFile, toFile, fromSymbol, toSymbol, ...(direct ? {} : { via: e.to }) });
    }
  };
  visit(input.head, 'head');
  visit(input.base, 'base');
  if (signals.has('new-symbol-import') || signals.has('changed-import')) {
    // An import (or re-export) of a symbol the change adds or removes: that import line changed with it.
    // With `changed-import`, also a binding the file did not import before (head) or no longer imports
    // (base) naming any changed symbol: the file starts or stops using what the change touches.
    const changeOf = new Map<string, FragmentData['change']>();
    for (const f of semanticFiles) for (const fr of f.fragments) if (fr.symbolId) changeOf.set(fr.symbolId, fr.change);
    const bindingKeys = (graph: CodeGraph | undefined, file: string | undefined): Set<string> => {
      const facts = file ? graph?.index.files.get(file)?.facts : undefined;
      return new Set((facts?.imports ?? []).flatMap((d) => d.bindings.map((x) => `${d.source}\0${x.imported}\0${x.local}`)));
    };
    const statusOf = new Map(semanticFiles.map((f) => [f.status === 'deleted' ? f.oldPath ?? f.path : f.path, f]));
    const importsOf = (graph: CodeGraph | undefined, side: 'head' | 'base', want: FragmentData['change']) => {
      if (!graph) return;
      for (const f of semanticFiles) {
        const own = side === 'head' ? f.path : f.oldPath ?? f.path;
        if (side === 'head' && f.status === 'deleted') continue;
        const indexed = graph.index.files.get(own);
        if (!indexed) continue;
        // The same file's bindings on the other side: a binding on both sides neither starts nor stops.
        const other = signals.has('changed-import')
          ? side === 'head'
            ? bindingKeys(input.base, f.status === 'added' ? undefined : f.oldPath ?? f.path)
            : bindingKeys(input.head, f.status === 'deleted' ? undefined : f.path)
          : new Set<string>();
        for (const decl of indexed.facts.imports) {
          const target = graph.resolveModule(indexed, decl.source);
          if (!target) continue;
          if (isModuleImport(decl)) {
            // A whole module imported or re-exported (`export * from './cache'`, `from .x import *`,
            // `import * as ns`, `import './x'`) names no symbol to follow: the line links to the module itself
            // when the change adds it (head) or deletes it (base) — that import line necessarily changed with it.
            // Not merely a module the change touches: a new example's `import click` is no part of a fix to
            // click.py (measured on click, docs/cohorts.md).
            const to = statusOf.get(target);
            if (!to || to.path === f.path || !signals.has('new-symbol-import') || to.status !== (want === 'added' ? 'added' : 'deleted')) continue;
            const key = `${f.path}\0${to.path}\0${f.path}\0${to.path}`;
            if (seen.has(key)) continue;
            seen.add(key);
            links.push({ fromFile: f.path, toFile: to.path, fromSymbol: f.path, toSymbol: to.path });
            continue;
          }
          for (const b of decl.bindings) {
            if (b.imported === '*') continue;
            const to = graph.resolveExport(target, b.imported, 0);
            const change = to ? changeOf.get(to) : undefined;
            if (!to || !change || !linkable(to)) continue;
            const newOrGone = signals.has('new-symbol-import') && change === want;
            // Source files only: a test's references already link it to what it exercises, and a test that
            // imports a changed symbol it never uses says little (measured on immer).
            const startsOrStops = signals.has('changed-import') && f.role !== 'test' && !other.has(`${decl.source}\0${b.imported}\0${b.local}`);
            if (!newOrGone && !startsOrStops) continue;
            const toFile = fileOfSymbol.get(to)!;
            if (toFile === f.path) continue;
            const key = `${f.path}\0${toFile}\0${f.path}\0${to}`;
            if (seen.has(key)) continue;
            seen.add(key);
            links.push({ fromFile: f.path, toFile, fromSymbol: f.path, toSymbol: to });
          }
        }
      }
    };
    importsOf(input.head, 'head', 'added');
    importsOf(input.base, 'base', 'deleted');
  }
  return links.sort((a, b) => `${a.fromFile}\0${a.toFile}\0${a.fromSymbol}\0${a.toSymbol}`.localeCompare(`${b.fromFile}\0${b.toFile}\0${b.fromSymbol}\0${b.toSymbol}`));
}

/** An import of a whole module rather than of named bindings: `export *`, a namespace, a side effect, `import *`. */
const isModuleImport = (d: ImportDecl): boolean => Boolean(d.star) || d.bindings.every((b) => b.imported === '*');

interface Group {
  files: FormationFile[];
  grouping: 'semantic' | 'path';
  reason?: string;
  links: Link[];
}

/** Why two files of one cohort were joined (other than a reference edge): recorded in the cohort's reason. */
interface Join {
  a: string;
  b: string;
  signal: Exclude<FormationSignal, 'changed-reference' | 'new-symbol-import' | 'changed-import' | 'code-change' | 'wrapper'>;
  detail: string;
}

/** A name or path as a reason cites it: bounded at the source (BOUNDS.reasonName), marked when clipped. */
const cite = (name: string): string => clipText(name, BOUNDS.reasonName);
const baseName = (p: string): string => cite(path.posix.basename(p));

/** Forms cohorts, keys them, measures blast radius and ranks them riskiest first. */
export function formCohorts(input: FormationInput): CohortData[] {
  const signals: ReadonlySet<FormationSignal> = new Set(input.signals ?? DEFAULT_SIGNALS);
  const groups: Group[] = [];
  const reviewable = input.files.filter((f) => f.role === 'source' || f.role === 'test');
  const semantic = input.noIndexReason ? [] : reviewable.filter((f) => f.language);
  const pathOnly = reviewable.filter((f) => !semantic.includes(f));
  for (const f of semantic) if (!f.fragments.length) f.fragments.push({ id: clipId(`${f.path}#<residual>`, BOUNDS.fragmentId), path: f.path, kind: 'residual', side: f.status === 'deleted' ? 'base' : 'head', change: 'modified', startLine: 1, endLine: 1 });

  // Semantic formation: source↔source links first, bounded; then each test joins the cohort it exercises most.
  const links = changedLinks(input, semantic, signals);
  const uf = new UnionFind();
  for (const f of semantic) uf.add(f.path);
  const role = new Map(semantic.map((f) => [f.path, f.role]));
  const joins: Join[] = [];
  const join = (a: string, b: string, signal: Join['signal'], detail: string): boolean => {
    if (uf.find(a) === uf.find(b) || uf.sizeOf(a) + uf.sizeOf(b) > MAX_COHORT_FILES) return false;
    uf.union(a, b);
    joins.push({ a, b, signal, detail });
    return true;
  };
  if (signals.has('mirror')) {
    for (const m of [...(input.mirrors ?? [])].sort((x, y) => x.mirror.localeCompare(y.mirror) || x.source.localeCompare(y.source))) {
      if (role.has(m.mirror) && role.has(m.source)) join(m.mirror, m.source, 'mirror', `${cite(m.mirror)} is a generated mirror of ${cite(m.source)}`);
    }
  }
  for (const l of links) {
    if (role.get(l.fromFile) === 'test' || role.get(l.toFile) === 'test') continue;
    if (uf.find(l.fromFile) === uf.find(l.toFile)) continue;
    if (uf.sizeOf(l.fromFile) + uf.sizeOf(l.toFile) > MAX_COHORT_FILES) continue;
    uf.union(l.fromFile, l.toFile);
  }
  const joinedTests = new Set<string>();
  for (const t of semantic.filter((f) => f.role === 'test')) {
    const votes = new Map<string, Set<string>>();
    for (const l of links) {
      if (l.fromFile !== t.path || role.get(l.toFile) === 'test') continue;
      const root = uf.find(l.toFile);
      const set = votes.get(root) ?? new Set<string>();
      set.add(l.toSymbol);
      votes.set(root, set);
    }
    const best = [...votes.entries()].sort((a, b) => b[1].size - a[1].size || a[0].localeCompare(b[0]))[0];
    if (best && uf.sizeOf(best[0]) < MAX_COHORT_FILES) {
      uf.union(best[0], t.path);
      joinedTests.add(t.path);
    }
  }
  if (signals.has('test-subject')) {
    const sources = semantic.filter((f) => f.role === 'source').map((f) => f.path);
    for (const t of semantic.filter((f) => f.role === 'test' && !joinedTests.has(f.path))) {
      const subject = subjectOf(t.path, sources);
      if (subject) join(t.path, subject, 'test-subject', `${baseName(t.path)} tests ${baseName(subject)}`);
    }
  }
  if (signals.has('type-test')) {
    // A tsd type test and the declaration file beside it (`index.test-d.ts` ↔ `index.d.ts`): joined even when the
    // test already joined the implementation through a reference, since the declarations are what it checks.
    const sources = semantic.filter((f) => f.role === 'source').map((f) => f.path);
    for (const t of semantic.filter((f) => f.role === 'test')) {
      const subject = typeTestSubject(t.path, sources);
      if (subject) join(t.path, subject, 'type-test', `${baseName(t.path)} checks ${baseName(subject)}`);
    }
  }
  if (signals.has('fixture-name') && input.nameLiterals && input.head) {
    // A changed file whose text names another changed file in a string literal (`execa('verbose-script.js')`: a test and
    // the fixture script it runs by name), where no import edge exists (fixture-names.ts). Direct evidence, so with the
    // name-pairing signals; measured the same on execa as after `same-substitution` (docs/cohorts.md).
    for (const n of fixtureNamings(input.nameLiterals, semantic, input.head.index.files.keys(), input.base?.index.files.keys())) join(n.from, n.to, 'fixture-name', `${cite(n.from)} names ${cite(n.to)} in \`${cite(JSON.stringify(n.literal).slice(1, -1))}\``);
  }
  if (signals.has('declared-member')) {
    // A hand-written declaration file and the JavaScript beside it that both change one member (`index.d.ts` adds
    // `s(…)`, `index.js` sets `$.s`): the implementation never imports its typings (declared-members.ts).
    for (const p of input.declaredMembers ?? []) {
      if (role.has(p.declaration) && role.has(p.implementation)) join(p.declaration, p.implementation, 'declared-member', `${baseName(p.declaration)} and ${baseName(p.implementation)} both change ${p.names.slice(0, 4).map((n) => `\`${cite(n)}\``).join(', ')}${p.names.length > 4 ? ` and ${p.names.length - 4} more` : ''}`);
    }
  }
  if (signals.has('member-use') && input.changedMembers && input.changedIdentifiers && input.identifierFrequency) {
    // A member one changed source declares on a changed line (`_headers: Headers` in a class body) that one other
    // changed file's changed lines access (`event.response._headers`), where no resolved edge reaches (a member of
    // an inferred receiver). The name must be rare (shared-identifiers' bound) and on the changed lines of just these
    // two files: `options.timeout` or a name three files touch says nothing about which two belong together.
    const namedBy = new Map<string, number>();
    for (const [p, ids] of input.changedIdentifiers) if (role.has(p)) for (const id of ids) namedBy.set(id, (namedBy.get(id) ?? 0) + 1);
    const frequency = input.identifierFrequency;
    const rare = (name: string) => name.length >= 3 && namedBy.get(name) === 2 && (frequency.counts.get(name) ?? 0) <= Math.max(2, MAX_FILE_SHARE * frequency.files);
    const members = [...input.changedMembers].filter(([p]) => role.has(p)).sort((a, b) => a[0].localeCompare(b[0]));
    const declaredBy = new Map<string, string>();
    for (const [p, m] of members) if (role.get(p) === 'source') for (const d of m.declared) if (rare(d) && !declaredBy.has(d)) declaredBy.set(d, p);
    for (const [p, m] of members) {
      for (const name of [...m.accessed].sort()) {
        const by = declaredBy.get(name);
        if (by && by !== p && join(by, p, 'member-use', `${baseName(by)} declares \`${cite(name)}\`, which ${baseName(p)} changes lines accessing`)) break;
      }
    }
  }
  if (signals.has('similar-edit') && input.editLines) {
    // The same changed line in two files (modified or renamed ones): one edit applied in several places.
    const filesOf = new Map<string, string[]>();
    for (const f of semantic) {
      if (f.status !== 'modified' && f.status !== 'renamed') continue;
      for (const k of input.editLines.get(f.path) ?? []) filesOf.set(k, [...(filesOf.get(k) ?? []), f.path]);
    }
    // Linear in the keys: each shared line chains its files (a pair list would be quadratic on a wide edit).
    for (const [k, ps] of [...filesOf.entries()].filter(([, ps]) => ps.length > 1).sort((a, b) => a[0].localeCompare(b[0]))) {
      for (const p of ps.slice(1)) join(ps[0], p, 'similar-edit', `${baseName(ps[0])} and ${baseName(p)} both ${k[0] === '+' ? 'add' : 'remove'} \`${clipText(k.slice(1), 60)}\``);
    }
  }
  if (signals.has('shared-identifiers') && input.changedIdentifiers && input.identifierFrequency) {
    // Rare identifiers (named in at most 5 % of the commit's indexed files) on the changed lines of exactly
    // two changed files, at least three of them: one piece of work without a resolved edge (shared-identifiers.ts).
    const ids = new Map([...input.changedIdentifiers].filter(([p]) => role.has(p)));
    for (const { a, b, names } of sharedIdentifierPairs(ids, input.identifierFrequency)) join(a, b, 'shared-identifiers', `${baseName(a)} and ${baseName(b)} both change lines naming ${names.slice(0, 4).map((n) => `\`${cite(n)}\``).join(', ')}${names.length > 4 ? ` and ${names.length - 4} more` : ''}`);
  }
  if (signals.has('new-identifier') && input.changedIdentifiers && input.identifierFrequency && input.baseIdentifierFrequency) {
    // An identifier that no indexed file of the base holds and the changed lines of several changed files name: a
    // name the change introduces (a new struct field set in composite literals, a new method called on an inferred
    // receiver), so the files naming it are one piece of work even where no reference resolves (shared-identifiers.ts).
    // A changed source must name it: tests alone make up fresh names (`pepper`, a fixture's variable) that coincide
    // across unrelated test files (measured on commander: test-only joins cost 7 cases, docs/cohorts.md).
    // The name must be one the change declares (a definition of a changed file at head: a method, a function; or a key
    // a changed source's changed lines declare: `enforceRetryRules?: boolean`), or all its files must share one
    // directory (a Go package's struct field): an external API first used in this change (`srv.BaseContext` of Go's
    // http.Server, in an example and a test of two commits) is no piece of work by itself (measured on chi).
    const ids = new Map([...input.changedIdentifiers].filter(([p]) => role.has(p)));
    const declared = new Map<string, string>();
    for (const f of semantic) {
      if (f.status === 'deleted') continue;
      for (const d of input.head?.index.files.get(f.path)?.facts.defs ?? []) {
        const name = d.qname.slice(d.qname.lastIndexOf('.') + 1);
        if (!declared.has(name)) declared.set(name, f.path);
      }
    }
    for (const f of semantic) {
      if (f.role !== 'source') continue;
      for (const k of input.changedKeys?.get(f.path) ?? []) if (!declared.has(k)) declared.set(k, f.path);
    }
    for (const { name, files } of newIdentifierGroups(ids, input.baseIdentifierFrequency, input.identifierFrequency)) {
      const by = declared.get(name);
      if (!(by && files.includes(by)) && new Set(files.map((p) => path.posix.dirname(p))).size > 1) continue;
      const anchor = by && role.get(by) === 'source' ? by : files.find((p) => role.get(p) === 'source');
      if (!anchor) continue;
      for (const p of files) if (p !== anchor) join(anchor, p, 'new-identifier', `${baseName(anchor)} and ${baseName(p)} both name \`${cite(name)}\`, new in this change`);
    }
  }
  if (signals.has('tooling-config')) for (const [a, b] of toolingConfigPairs(semantic.map((f) => f.path))) join(a, b, 'tooling-config', `${baseName(a)} and ${baseName(b)}`);
  if (signals.has('test-names') && input.changedIdentifiers && input.identifierFrequency) {
    // A test that every other signal left without a source (a feature-named suite reaching the code only through
    // the package's entry point) joins the one changed source whose changed lines name most of what its own do.
    const names = new Map<string, ChangedNames>();
    for (const f of semantic) names.set(f.path, { identifiers: input.changedIdentifiers.get(f.path) ?? new Set(), literals: input.changedLiterals?.get(f.path) ?? new Set() });
    const sources = semantic.filter((f) => f.role === 'source').map((f) => f.path);
    const withSource = new Set(sources.map((s) => uf.find(s)));
    const lone = semantic.filter((f) => f.role === 'test' && !withSource.has(uf.find(f.path))).map((f) => f.path);
    const candidates = testNameCandidates(lone, new Set(sources), names, input.identifierFrequency);
    for (const t of lone) {
      if (withSource.has(uf.find(t))) continue; // joined a source with another test of its cohort
      const hit = testNamesSubject(candidates.get(t), (p) => uf.find(p));
      if (hit && join(t, hit.source, 'test-names', `${baseName(t)} and ${baseName(hit.source)} both change lines naming ${hit.names.slice(0, 4).map((n) => `\`${cite(n)}\``).join(', ')}${hit.names.length > 4 ? ` and ${hit.names.length - 4} more` : ''}`)) withSource.add(uf.find(t));
    }
  }
  if (signals.has('test-titles') && input.changedTitleWords && input.changedIdentifiers && input.identifierFrequency) {
    // A test still without a source whose added test cases are titled for what one changed source's changed lines name
    // (`test('reusedSocket getter', …)` beside `return this._request?.reusedSocket`): a regression test and its fix,
    // where the test reaches the code only through the package's entry point (test-titles.ts).
    const ids = new Map([...input.changedIdentifiers].filter(([p]) => role.has(p)));
    const sources = new Set(semantic.filter((f) => f.role === 'source').map((f) => f.path));
    const withSource = new Set([...sources].map((s) => uf.find(s)));
    const lone = semantic.filter((f) => f.role === 'test' && !withSource.has(uf.find(f.path))).map((f) => f.path);
    const candidates = testTitleCandidates(lone, sources, input.changedTitleWords, ids, input.identifierFrequency);
    for (const t of lone) {
      if (withSource.has(uf.find(t))) continue; // joined a source with another test of its cohort
      const hit = testTitlesSubject(candidates.get(t), (p) => uf.find(p));
      if (hit && join(t, hit.source, 'test-titles', `${baseName(t)} adds test cases titled for ${hit.words.slice(0, 4).map((n) => `\`${cite(n)}\``).join(', ')}${hit.words.length > 4 ? ` and ${hit.words.length - 4} more` : ''}, which ${baseName(hit.source)} changes lines naming`)) withSource.add(uf.find(t));
    }
  }
  if (signals.has('same-substitution') && input.editSubstitutions) {
    // The same part of a line changed the same way in two files (`searchParameters` → `searchParams` at each call
    // site): one edit applied in several places, where the lines around it differ (similar-edits.ts). After the
    // test-name signals and before `test-affinity` (the soft, relative decision last).
    const filesOf = new Map<string, string[]>();
    for (const f of semantic) for (const k of input.editSubstitutions.get(f.path) ?? []) filesOf.set(k, [...(filesOf.get(k) ?? []), f.path]);
    for (const [k, ps] of [...filesOf.entries()].filter(([, ps]) => ps.length > 1).sort((a, b) => a[0].localeCompare(b[0]))) {
      const [from, to] = k.slice(1).split('→');
      const what = from && to ? `change \`${clipText(from, 40)}\` to \`${clipText(to, 40)}\`` : from ? `remove \`${clipText(from, 60)}\`` : `insert \`${clipText(to, 60)}\``;
      for (const p of ps.slice(1)) join(ps[0], p, 'same-substitution', `${baseName(ps[0])} and ${baseName(p)} both ${what}`);
    }
  }
  if (signals.has('test-affinity') && input.affinityWords && input.affinityFrequency) {
    // Last: a cohort of sources that no test joined and a cohort of tests that joined no source, whose changed lines'
    // words are each other's clearly closest (a relative decision with a floor; test-affinity.ts).
    const members = new Map<string, FormationFile[]>();
    for (const f of semantic) members.set(uf.find(f.path), [...(members.get(uf.find(f.path)) ?? []), f]);
    const sources: AffinityCohort[] = [];
    const tests: AffinityCohort[] = [];
    for (const [root, files] of [...members].sort((a, b) => a[0].localeCompare(b[0]))) {
      const hasSource = files.some((f) => f.role === 'source');
      const hasTest = files.some((f) => f.role === 'test');
      if (hasSource === hasTest) continue;
      const words = new Set<string>();
      for (const f of files) for (const w of (hasSource ? input.affinityWords.get(f.path)?.changed : input.affinityWords.get(f.path)?.added) ?? []) words.add(w);
      (hasSource ? sources : tests).push({ key: root, words });
    }
    for (const j of testAffinityJoins(sources, tests, input.affinityFrequency)) {
      const test = members.get(j.test)!.map((f) => f.path).sort();
      const source = members.get(j.source)!.map((f) => f.path).sort();
      const names = (ps: string[]) => `${ps.slice(0, 2).map(baseName).join(', ')}${ps.length > 2 ? ` and ${ps.length - 2} more` : ''}`;
      const next = Math.max(j.nextTest, j.nextSource);
      join(test[0], source[0], 'test-affinity', `${names(test)} adds lines whose words are closest to ${names(source)}'s changed lines (${j.words.slice(0, 4).map((w) => `\`${cite(w)}\``).join(', ')}${j.words.length > 4 ? ` and ${j.words.length - 4} more` : ''}; affinity ${j.score.toFixed(2)}, next ${next.toFixed(2)})`);
    }
  }
  if (signals.has('co-change') && input.coChange) {
    for (const p of input.coChange) if (role.has(p.a) && role.has(p.b)) join(p.a, p.b, 'co-change', `${baseName(p.a)} and ${baseName(p.b)} changed together in ${p.together} of the last ${p.window} commits`);
  }
  if (signals.has('directory')) {
    // Files no other signal joined, in the same directory: a weak signal, used only between loners.
    const loners = semantic.filter((f) => uf.sizeOf(f.path) === 1).map((f) => f.path);
    const byDir = new Map<string, string[]>();
    for (const p of loners) byDir.set(path.posix.dirname(p), [...(byDir.get(path.posix.dirname(p)) ?? []), p]);
    for (const [dir, ps] of byDir) for (const p of ps.slice(1)) join(ps[0], p, 'directory', `no resolved link; both in ${cite(dir)}/`);
  }
  const byRoot = new Map<string, FormationFile[]>();
  for (const f of semantic) {
    const r = uf.find(f.path);
    byRoot.set(r, [...(byRoot.get(r) ?? []), f]);
  }
  for (const files of byRoot.values()) {
    const paths = new Set(files.map((f) => f.path));
    const own = links.filter((l) => paths.has(l.fromFile) && paths.has(l.toFile));
    groups.push({ files, grouping: 'semantic', links: own, reason: reasonOf(files, own, joins.filter((j) => paths.has(j.a))) });
  }

  // Path fallback: never fake semantic confidence.
  const byDir = new Map<string, { files: FormationFile[]; reasons: Set<string> }>();
  for (const f of pathOnly) {
    const dir = path.posix.dirname(f.path);
    const entry = byDir.get(dir) ?? { files: [], reasons: new Set<string>() };
    entry.files.push(f);
    entry.reasons.add(input.noIndexReason ?? `no grammar for ${f.unsupportedLanguage ?? 'this file type'}: grouped by directory, no semantic grouping`);
    byDir.set(dir, entry);
  }
  for (const f of input.files.filter((x) => x.role === 'docs' || x.role === 'spec' || x.role === 'other')) {
    const dir = path.posix.dirname(f.path);
    const entry = byDir.get(dir) ?? { files: [], reasons: new Set<string>() };
    entry.files.push(f);
    entry.reasons.add(`${f.role === 'other' ? 'non-code' : f.role} files are not in the code graph: grouped by directory`);
    byDir.set(dir, entry);
  }
  for (const [, { files, reasons }] of [...byDir.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    groups.push({ files, grouping: 'path', reason: clipText([...reasons].sort().join('; '), BOUNDS.groupingReason), links: [] });
  }

  const cohorts = groups.map((g) => toCohort(g, input));
  cohorts.sort((a, b) => b.blastRadius.score - a.blastRadius.score || a.key.localeCompare(b.key));
  cohorts.forEach((c, i) => (c.rank = i + 1));
  return cohorts;
}

/** Why the files of a semantic cohort are together, in words: its reference links and its other joins. */
function reasonOf(files: FormationFile[], links: Link[], joins: Join[]): string | undefined {
  const broken = files.filter((f) => f.parseErrors).map((f) => baseName(f.path));
  const brokenNote = broken.length ? `parse errors in ${broken.slice(0, 3).join(', ')}${broken.length > 3 ? ` and ${broken.length - 3} more` : ''}: definitions and references there may be incomplete` : undefined;
  if (files.length < 2) return brokenNote;
  const short = (id: string) => cite(id.slice(id.indexOf('#') + 1) || id);
  const parts: string[] = [];
  const refs = links.filter((l) => !l.via);
  const hops = links.filter((l) => l.via);
  if (refs.length) parts.push(`changed references: ${refs.slice(0, 4).map((l) => `${short(l.fromSymbol)} → ${short(l.toSymbol)}`).join(', ')}${refs.length > 4 ? ` and ${refs.length - 4} more` : ''}`);
  if (hops.length) parts.push(`through an exported wrapper: ${hops.slice(0, 3).map((l) => `${short(l.fromSymbol)} → ${short(l.via!)} → ${short(l.toSymbol)}`).join(', ')}`);
  const bySignal = new Map<string, string[]>();
  for (const j of joins) bySignal.set(j.signal, [...(bySignal.get(j.signal) ?? []), j.detail]);
  const label: Record<string, string> = { 'test-subject': 'test ↔ subject', 'type-test': 'a type test and its declarations', 'fixture-name': 'a file named by another', 'declared-member': 'a declaration and its implementation', 'member-use': 'a member declared and used', 'similar-edit': 'the same edit', 'same-substitution': 'the same substitution', 'tooling-config': 'tooling configuration of one directory', 'shared-identifiers': 'rare identifiers both change', 'test-names': 'a test and the source it names', 'test-titles': 'a test titled for the change', 'test-affinity': 'a test closest in words to the change', 'new-identifier': 'a name the change introduces', mirror: 'copies of one tree', 'co-change': 'co-change history (weaker)', directory: 'same directory, no link (weak)' };
  for (const [signal, details] of bySignal) parts.push(`${label[signal]}: ${details.slice(0, 3).join('; ')}${details.length > 3 ? ` and ${details.length - 3} more` : ''}`);
  if (brokenNote) parts.push(brokenNote);
  return parts.length ? clipText(parts.join(' · '), BOUNDS.groupingReason) : undefined;
}

function anchorsOf(g: Group): string[] {
  if (g.grouping === 'path') return [];
  const sources = g.files.filter((f) => f.role !== 'test');
  const pick = sources.length ? sources : g.files;
  const symbols = pick.flatMap((f) => f.fragments.map((fr) => fr.symbolId).filter((s): s is string => !!s));
  if (symbols.length) return [...new Set(symbols)].sort();
  return pick.map((f) => clipId(`${f.path}#<residual>`, BOUNDS.symbolId)).sort();
}

/** Key: content-derived (SPEC §8.4) — the anchor definitions' stable symbol ids, or the directory. */
function keyOf(g: Group, anchors: string[]): string {
  if (g.grouping === 'path') return `p-${hash(`path\n${path.posix.dirname(g.files[0].path)}`)}`;
  return `c-${hash(`semantic\n${anchors.join('\n')}`)}`;
}

function toCohort(g: Group, input: FormationInput): CohortData {
  const anchors = anchorsOf(g);
  const key = keyOf(g, anchors);
  const files = g.files.map((f) => f.path).sort();
  const fragments = g.files.flatMap((f) => f.fragments);
  const blastRadius = blastRadiusOf(g, input);
  const readingOrder = readingOrderOf(g);
  const clues = cluesFor(files, input);
  return {
    key,
    title: titleOf(g, anchors),
    grouping: g.grouping,
    ...(g.reason ? { groupingReason: g.reason } : {}),
    files,
    fragments,
    anchors,
    blastRadius,
    readingOrder,
    rank: 1,
    clues,
  };
}

function titleOf(g: Group, anchors: string[]): string {
  if (g.grouping === 'path') {
    const dir = path.posix.dirname(g.files[0].path);
    const count = `/ — ${g.files.length} file${g.files.length === 1 ? '' : 's'}`;
    return `${clipText(dir === '.' ? '(root)' : dir, BOUNDS.cohortTitle - count.length)}${count}`;
  }
  const names = anchors.map((a) => a.slice(a.indexOf('#') + 1)).filter((n) => n !== '<residual>');
  const shown = names.slice(0, 3).join(', ') || g.files.map((f) => path.posix.basename(f.path)).slice(0, 3).join(', ');
  const more = names.length > 3 ? ` +${names.length - 3}` : '';
  const count = ` (${g.files.length} file${g.files.length === 1 ? '' : 's'})`;
  return `${clipText(`${shown}${more}`, BOUNDS.cohortTitle - count.length)}${count}`;
}

/**
 * Blast radius (SPEC §8.5): who references the changed symbols in the head (deleted ones: in the base),
 * transitively up to `depth`, the public API touched and the tests reaching it. The score is
 * 2·dependent files + 0.5·dependent symbols + 3·public symbols touched + 2·public symbols deleted
 * + 3 when no test reaches a source change + 0.25·fragments: dependents dominate, an untested public
 * change weighs more than a private one.
 */
function blastRadiusOf(g: Group, input: FormationInput): CohortData['blastRadius'] {
  const depth = input.blastDepth ?? DEFAULT_BLAST_DEPTH;
  const own = new Set(g.files.flatMap((f) => [f.path, f.oldPath ?? f.path]));
  const dependentsFiles = new Set<string>();
  const dependentsSymbols = new Set<string>();
  const publicApi = new Set<string>();
  let deletedPublic = 0;
  let truncated = false;
  const walk = (graph: CodeGraph | undefined, start: string[]) => {
    if (!graph || !start.length) return;
    const seen = new Set(start);
    let frontier = start;
    for (let level = 0; level < depth && frontier.length; level++) {
      const next: string[] = [];
      for (const sym of frontier) {
        const targets = [sym];
        for (const e of targets.flatMap((t) => graph.incomingOf(t))) {
          if (own.has(e.fromFile)) continue;
          dependentsFiles.add(e.fromFile);
          if (e.from !== e.fromFile) dependentsSymbols.add(e.from);
          for (const s of [e.from, ...ancestors(e.from)]) {
            if (seen.has(s)) continue;
            seen.add(s);
            next.push(s);
          }
        }
      }
      frontier = next;
      if (level === depth - 1 && frontier.length) truncated = true;
    }
  };
  const headStart: string[] = [];
  const baseStart: string[] = [];
  for (const f of g.files) {
    for (const fr of f.fragments) {
      if (!fr.symbolId) continue;
      const graph = fr.side === 'head' ? input.head : input.base;
      const info = graph?.symbols.get(fr.symbolId);
      (fr.side === 'head' ? headStart : baseStart).push(fr.symbolId);
      if (info?.def.exported && f.role !== 'test') {
        publicApi.add(fr.symbolId);
        if (fr.change === 'deleted') deletedPublic++;
      }
    }
  }
  walk(input.head, headStart);
  walk(input.base, baseStart);
  const tests = new Set<string>([...g.files.filter((f) => f.role === 'test').map((f) => f.path), ...[...dependentsFiles].filter(isTestPath)]);
  const hasSource = g.files.some((f) => f.role === 'source');
  const fragments = g.files.reduce((n, f) => n + f.fragments.length, 0);
  const score = dependentsFiles.size * 2 + dependentsSymbols.size * 0.5 + publicApi.size * 3 + deletedPublic * 2 + (hasSource && tests.size === 0 ? 3 : 0) + fragments * 0.25;
  // Lists are bounded so one computation stays a reasonable event; the score counts everything.
  const files = [...dependentsFiles].sort();
  const symbols = [...dependentsSymbols].sort();
  if (files.length > MAX_LISTED_DEPENDENTS || symbols.length > MAX_LISTED_DEPENDENTS) truncated = true;
  return {
    dependents: { files: files.slice(0, MAX_LISTED_DEPENDENTS), symbols: symbols.slice(0, MAX_LISTED_DEPENDENTS), depth, truncated },
    publicApi: [...publicApi].sort(),
    tests: [...tests].sort(),
    score: Math.round(score * 100) / 100,
  };
}

/** Callee before caller: read what is called first, then who calls it; tests last. */
function readingOrderOf(g: Group): CohortData['readingOrder'] {
  const fragments = g.files.flatMap((f) => f.fragments.map((fr) => ({ fr, role: f.role })));
  const callees = new Map<string, Set<string>>();
  const callers = new Map<string, Set<string>>();
  for (const l of g.links) {
    callees.set(l.fromSymbol, (callees.get(l.fromSymbol) ?? new Set()).add(l.toSymbol));
    callers.set(l.toSymbol, (callers.get(l.toSymbol) ?? new Set()).add(l.fromSymbol));
  }
  const byId = new Map(fragments.map((x) => [x.fr.symbolId ?? x.fr.id, x]));
  const ordered: typeof fragments = [];
  const done = new Set<string>();
  const visit = (id: string, stack: Set<string>) => {
    if (done.has(id) || stack.has(id)) return;
    stack.add(id);
    for (const c of [...(callees.get(id) ?? [])].sort()) visit(c, stack);
    stack.delete(id);
    const x = byId.get(id);
    if (x && !done.has(id)) {
      done.add(id);
      ordered.push(x);
    }
  };
  const rank = (x: (typeof fragments)[number]) => (x.role === 'test' ? 2 : x.fr.kind === 'residual' ? 1 : 0);
  const sorted = [...fragments].sort((a, b) => rank(a) - rank(b) || a.fr.path.localeCompare(b.fr.path) || a.fr.startLine - b.fr.startLine);
  for (const x of sorted.filter((y) => rank(y) === 0)) visit(x.fr.symbolId ?? x.fr.id, new Set());
  for (const x of sorted.filter((y) => rank(y) > 0)) visit(x.fr.symbolId ?? x.fr.id, new Set());
  const short = (id: string) => id.slice(id.indexOf('#') + 1);
  // A hub called by hundreds of changed symbols would make an unreadable (and unrecordable) step.
  const list = (ids: string[]) => (ids.length <= MAX_NAMES_IN_WHY ? ids.map(short).join(', ') : `${ids.slice(0, MAX_NAMES_IN_WHY).map(short).join(', ')} and ${ids.length - MAX_NAMES_IN_WHY} more`);
  return {
    order: 'callee-first',
    steps: ordered.map(({ fr, role }) => {
      const calledBy = [...(callers.get(fr.symbolId ?? '') ?? [])].sort();
      const calls = [...(callees.get(fr.symbolId ?? '') ?? [])].sort();
      let why: string;
      if (role === 'test') why = calls.length ? `test exercising ${list(calls)}` : 'changed test';
      else if (fr.kind === 'residual') why = `rest of the changes in ${path.posix.basename(fr.path)} (imports, top-level code)`;
      else if (fr.change === 'deleted') why = `${fr.kind} ${short(fr.symbolId!)} deleted${calledBy.length ? `; was used by ${list(calledBy)}` : ''}`;
      else why = `${fr.change} ${fr.kind}${calledBy.length ? `, called by ${list(calledBy)}` : ''}${calls.length ? `, calls ${list(calls)}` : ''}`;
      return { path: fr.path, ...(fr.symbolId ? { symbolId: fr.symbolId } : {}), startLine: fr.startLine, endLine: fr.endLine, why: clipText(why, BOUNDS.readingWhy) };
    }),
  };
}

/** Manifests/locks of the same component (the deepest manifest directory containing the files) become clues. */
function cluesFor(files: string[], input: FormationInput): CohortData['clues'] {
  const clues: CohortData['clues'] = [];
  const components = [...new Set(input.dependencyDiffs.filter((d) => !d.versionOnly).map((d) => d.component))];
  const componentOf = (file: string) => components.filter((c) => c === '' || file.startsWith(`${c}/`)).sort((a, b) => b.length - a.length)[0];
  const mine = new Set(files.map(componentOf).filter((c): c is string => c !== undefined));
  for (const d of input.dependencyDiffs) {
    if (d.versionOnly || !mine.has(d.component)) continue;
    clues.push({ kind: 'dependency-diff', path: d.path, note: clipText(`${d.ecosystem} dependencies changed in ${d.path}: ${d.changes.length} change(s)`, BOUNDS.note), dependencyChanges: d.changes });
  }
  return clues;
}
