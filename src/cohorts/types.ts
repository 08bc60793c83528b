import type { DependencyDiffData, FileRole, FragmentData } from '../events/catalogue/compute';
import type { CodeGraph, Edge } from '../codegraph/graph';
import type { ChangedMembers, DeclaredMemberPair } from './evidence/declared-members';
import type { MirrorPair } from './evidence/mirrors';
import type { IdentifierFrequency } from './evidence/shared-identifiers';
import type { NameLiterals } from './evidence/fixture-names';
import type { UnionFind } from './union-find';

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
 * What may join two changed files into one cohort besides a resolved edge between changed definitions. Each
 * signal is one entry of the registry (registry.ts) and one file of signals/; the table in docs/cohorts.md is
 * rendered from the registry. Each is measured with and without on `npm run eval:cohorts` (docs/cohorts.md).
 */
export type FormationSignal = 'changed-reference' | 'test-hub' | 'new-symbol-import' | 'changed-import' | 'code-change' | 'wrapper' | 'test-subject' | 'type-test' | 'fixture-name' | 'declared-member' | 'member-use' | 'similar-edit' | 'same-substitution' | 'edit-idiom' | 'boilerplate-lines' | 'edit-rare-id' | 'join-attach' | 'shared-identifiers' | 'test-names' | 'test-titles' | 'test-affinity' | 'new-identifier' | 'tooling-config' | 'mirror' | 'co-change' | 'directory' | 'type-edges' | 'type-bindings';

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
  /** A fitted combination of the pair evidence (affinity.ts) that forms the semantic cohorts instead of the rules' union. */
  affinityModel?: AffinityModel;
  /** Given each pair's evidence (the evaluation's dump). */
  onEvidence?: (evidence: PairEvidence) => void;
}

/** A resolved reference between changed definitions of two changed files (or an import line standing for one). */
export interface Link {
  fromFile: string;
  toFile: string;
  fromSymbol: string;
  toSymbol: string;
  /** The unchanged wrapper the reference went through (the `wrapper` signal). */
  via?: string;
}

/** Signals that join files by a link (a reference) or shape the links, rather than by a recorded join. */
export type LinkSignal = 'changed-reference' | 'new-symbol-import' | 'changed-import' | 'code-change' | 'wrapper';

/** Why two files of one cohort were joined (other than a reference edge): recorded in the cohort's reason. */
export interface Join {
  a: string;
  b: string;
  signal: Exclude<FormationSignal, LinkSignal>;
  detail: string;
}

/** What the reference walk (links.ts) gives every signal that shapes it. */
export interface LinkContext {
  input: FormationInput;
  active: ReadonlySet<FormationSignal>;
  /** The changed files with a grammar (formation's semantic files). */
  files: FormationFile[];
  /** Changed definition → its (head) file. */
  fileOfSymbol: Map<string, string>;
  /** Files with a changed residual fragment (imports, top-level code). */
  residualFiles: Set<string>;
  testFiles: Set<string>;
  /** Base path → head path of each changed file. */
  baseToHead: Map<string, string>;
  /** A changed definition a link may point at (`code-change` takes some away). */
  linkable(symbol: string): boolean;
  /** The line is a changed line of the (head) file on that side. */
  onChangedLine(file: string, side: 'head' | 'base', line: number): boolean;
  /** Adds a link unless the same one is already there. */
  addLink(link: Link): void;
}

/** A signal's say in the reference walk over each graph's resolved edges (links.ts). */
export interface EdgeRule {
  /** A reference on a changed line counts even when its enclosing definition is no changed fragment. */
  linesProveChange?: boolean;
  /** An edge only TypeScript's checker found joins when some active rule admits it (never a member read). */
  admitsCheckerEdge?(e: Edge): boolean;
  /** The edge from a changed file says nothing about the change: skipped. */
  skips?(ctx: LinkContext, e: Edge, fromFile: string, side: 'head' | 'base'): boolean;
  /** Changed definitions no link may point at. */
  unlinkable?(files: FormationFile[]): Iterable<string>;
  /** A changed definition reached one hop past the edge's target, when the target itself is none. */
  hop?(ctx: LinkContext, graph: CodeGraph, to: string): string | undefined;
}

/** What every joining signal is given: the files, the links and the union of files formed so far. */
export interface JoinContext {
  input: FormationInput;
  active: ReadonlySet<FormationSignal>;
  /** The changed files with a grammar, in input order. */
  semantic: FormationFile[];
  role: Map<string, FileRole>;
  links: Link[];
  uf: UnionFind;
  /** Tests the reference votes joined to a source cohort. */
  joinedTests: Set<string>;
  /** Joins two files' cohorts and records why, unless already one or the result would exceed MAX_COHORT_FILES. */
  join(a: string, b: string, signal: Join['signal'], detail: string): boolean;
}

/** Where in formation a signal acts; formCohorts runs the stages in this order and each stage's signals in registry order. */
export type SignalStage =
  /** Prepared by computeReview before formation (it drops or adds formation's inputs). */
  | 'input'
  /** A rule of the walk over each graph's resolved edges. */
  | 'edge'
  /** A pass that adds links after the walk. */
  | 'link'
  /** Joins before the reference links are merged (so a link cannot bound them out). */
  | 'pre-join'
  /** Joins after the reference links and the tests' votes. */
  | 'join';

interface SignalBase {
  id: FormationSignal;
  /** One line: which pairs of changed files it links. */
  joins: string;
  /** What the cohort's reason says for it. */
  evidence: string;
  /** The test that covers it (a path from the repository root). */
  test: string;
  /** On in DEFAULT_SIGNALS. */
  default: boolean;
  /** One line: the measurement that decided `default` (eval:cohorts; the full record is docs/cohorts-history.md). */
  measured: string;
}

/** One formation signal: one entry of the registry, one file of signals/. */
export type SignalDef = SignalBase &
  (
    | { stage: 'input' }
    | { stage: 'edge'; edge: EdgeRule }
    | { stage: 'link'; apply(ctx: LinkContext): void }
    | ({ stage: 'pre-join' } & JoinStep)
    | ({ stage: 'join' } & JoinStep)
  );

interface JoinStep {
  /** The cohort reason's label before this signal's details. */
  label: string;
  apply(ctx: JoinContext): void;
}

/** A change's pair evidence (affinity.ts `pairEvidence`). */
export interface PairEvidence {
  /** The semantic files of the change, in formation order. */
  files: string[];
  /** Every pair i < j of files with its feature vector (AFFINITY_FEATURES order). */
  pairs: Array<{ a: number; b: number; x: number[] }>;
}

/** A fitted combination: p(pair together) = σ(bias + Σ weights·x); pairs at or above `threshold` join, most probable first. */
export interface AffinityModel {
  version: string;
  features: readonly string[];
  bias: number;
  weights: readonly number[];
  threshold: number;
  /** `single`: each pair above the threshold joins its two cohorts; `average`: two cohorts join when their pairs' mean probability is. */
  linkage: 'single' | 'average';
}
