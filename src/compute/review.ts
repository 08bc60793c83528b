import { createHash } from 'node:crypto';
import type { EventData } from '../events/catalogue/define';
import type { FileRole, ReviewComputed } from '../events/catalogue/compute';
import type { RepoConfig } from '../events/catalogue/repo';
import { parseHunks } from '../codegraph/diff-hunks';
import { FactsCache } from '../codegraph/facts-cache';
import { docLinesOf } from '../codegraph/doc-lines-of';
import { fragmentsOf } from '../codegraph/fragments';
import { DEFAULT_AFFINITY_MODEL } from '../cohorts/fitted-model';
import { DEFAULT_SIGNALS, formCohorts, FormationFile, FormationInput, FormationSignal } from '../cohorts';
import { detectMirrors, mirrorCandidates, MirrorPair } from '../cohorts/evidence/mirrors';
import { boilerplateSet } from '../cohorts/boilerplate';
import { EditSides, editKeysOf, idiomEditKeys, substitutionKeysOf } from '../cohorts/evidence/similar-edits';
import { changedMembersOf, declaredMemberPairs } from '../cohorts/evidence/declared-members';
import { changedIdentifiersOf, changedKeysOf, changedLiteralsOf, collectFromChangedLines, identifierFrequency } from '../cohorts/evidence/shared-identifiers';
import { changedTitleWordsOf } from '../cohorts/evidence/test-titles';
import { NameLiterals, nameLiteralsOf, removedNameLiteralsOf } from '../cohorts/evidence/fixture-names';
import { changedAffinityWordsOf, wordFrequency } from '../cohorts/evidence/test-affinity';
import { coChangePairs } from '../git/co-change';
import { CodeGraph } from '../codegraph/graph';
import { CODEGRAPH_ENGINE_VERSION, CommitIndex, indexCommit, IndexProgress } from '../codegraph/indexer';
import { languageOf, unsupportedLanguageOf } from '../codegraph/languages/languages';
import { classifyRole, hasGeneratedHeader } from '../codegraph/file-roles';
import { resolveCheckerEdges, TYPE_EDGES_VERSION, type CheckerEdgeStats, type CheckerLimits } from '../codegraph/checker/type-edges';
import { diffDependencies } from '../dependencies/diff';
import type { ChangedFile, GitRepo } from '../git/repo';
import { runApiContract, runVisual, type RenderSetup } from './axes';
import { fitReviewComputed } from './fit-output';
import { BOUNDS, clipId, clipText } from '../events/catalogue/bounds';

export type ReviewComputedData = EventData<typeof ReviewComputed>;

/**
 * Bump whenever formation, keys, ranking or dependency diffs change what a computation records (review-13: `test-names`; review-14: `test-hub`; review-15: `edit-idiom`; review-16: `type-test`; review-17: `new-identifier`; review-18: `test-titles`; review-19: `test-affinity`, `same-substitution`, `test-subject` by name parts; review-20: `fixture-name`, a changed test naming a changed fixture in a string literal, `declared-member`, `member-use`, whole-module imports in `new-symbol-import`, carried literals in `same-substitution` keys; review-21: a dependency change is a clue of the cohorts importing it, or of the riskiest one, not of every cohort of its component; review-22: a code file whose header says a tool wrote it is `generated`). The
 * checker's part (its caps and what it says of them: type-edges.ts) is versioned by TYPE_EDGES_VERSION.
 */
export const REVIEW_ENGINE_VERSION = `review-22${DEFAULT_AFFINITY_MODEL ? `+${DEFAULT_AFFINITY_MODEL.version}` : ''}+${CODEGRAPH_ENGINE_VERSION}+${TYPE_EDGES_VERSION}`;

/** Changed code files whose header is read at once (the blobs come through one `git cat-file --batch`). */
const HEADER_READS_AT_ONCE = 64;

export interface ComputeReviewInput {
  repo: GitRepo;
  baseSha: string;
  headSha: string;
  /** Workspace folder: the blob-SHA facts cache and axis artefacts live here. */
  workspaceDir: string;
  repoConfig?: RepoConfig;
  /** The operator's render configuration for this repo (never the repo registration's). */
  render?: RenderSetup;
  /** `false`: do not index (path grouping with the reason), e.g. when indexing is disabled. */
  semantic?: boolean;
  blastDepth?: number;
  /** Formation signals (default DEFAULT_SIGNALS); the evaluation measures each with and without. */
  signals?: readonly FormationSignal[];
  /**
   * The fitted model of the pair evidence that forms semantic cohorts (default DEFAULT_AFFINITY_MODEL: weights.json when
   * adopted); `null`: the rule engine (the evaluation's comparison).
   */
  affinityModel?: FormationInput['affinityModel'] | null;
  /** Given each pair of semantic files' evidence (`npm run eval:cohorts -- --dump`). */
  onFormationEvidence?: FormationInput['onEvidence'];
  /** `boilerplate-lines`: the repositories a learned line must be found in (default: boilerplate-lines.json's threshold; the evaluation's variants). */
  boilerplateThreshold?: number;
  /**
   * TypeScript's checker resolves the changed TS/JS files' references (type-edges.ts) on top of the
   * syntactic edges, for the files under a project root (a tsconfig.json, jsconfig.json or package.json
   * in their directory or above). Default on; `false` is the syntax-only path. Checker edges feed the
   * graph (blast radius, dependents) with provenance `checker`; which of them may join cohorts is the
   * formation signals' decision (`type-bindings`, `type-edges`). Bounded by deterministic work caps
   * (`checkerLimits`), not time, so the result does not depend on machine load; a wall-clock safety limit
   * past which the whole review is syntax-only, said in `typeEdges` (type-edges.ts).
   */
  typeEdges?: boolean;
  /** The checker's caps and safety limit (default CHECKER_LIMITS; the operator's `typeEdges` configuration). */
  checkerLimits?: Partial<CheckerLimits>;
  onProgress?: (phase: 'index-base' | 'index-head', p: IndexProgress) => void;
  /** Stops the computation between steps (the acting token was revoked): it rejects with the reason. */
  signal?: AbortSignal;
}

const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, val: unknown) => (val && typeof val === 'object' && !Array.isArray(val) ? Object.fromEntries(Object.entries(val as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) : val));

/** Identical inputs give the identical digest; a recompute with the same digest records nothing new. */
export function inputsDigestOf(engineVersion: string, baseSha: string, headSha: string, repoConfig: RepoConfig | undefined, operatorRender?: unknown, checker?: { typeEdges?: boolean; checkerLimits?: Partial<CheckerLimits> }): string {
  // The operator's render entry and checker settings join the digest only when there are some, so digests
  // recorded before they existed stay the same.
  const limits = checker?.checkerLimits && Object.keys(checker.checkerLimits).length ? checker.checkerLimits : undefined;
  return createHash('sha256')
    .update(canonical({ engineVersion, baseSha, headSha, repoConfig: repoConfig ?? {}, ...(operatorRender ? { operatorRender } : {}), ...(checker?.typeEdges === false ? { typeEdges: false } : {}), ...(limits ? { checkerLimits: limits } : {}) }))
    .digest('hex');
}

export interface ComputedReview {
  data: ReviewComputedData;
  head?: CodeGraph;
  base?: CodeGraph;
}

/**
 * The deterministic review computation of one PR at one head: changed files, code graph of base and head
 * (cached by blob), fragments, cohorts, blast radius and ranking, dependency diffs and the axes.
 */
export async function computeReview(input: ComputeReviewInput): Promise<ComputedReview> {
  const started = performance.now();
  const { repo } = input;
  const baseSha = await repo.revParse(input.baseSha);
  const headSha = await repo.revParse(input.headSha);
  // A path beyond the recorded bound cannot be read back anyway: it is recorded clipped, as a non-code file.
  const overlong = new Set<string>();
  const changed = (await repo.diffNameStatus(baseSha, headSha)).map((c) => {
    if (c.path.length <= BOUNDS.path && (c.oldPath ?? '').length <= BOUNDS.path) return c;
    const path = clipId(c.path, BOUNDS.path);
    overlong.add(path);
    return { ...c, path, ...(c.oldPath ? { oldPath: clipId(c.oldPath, BOUNDS.path) } : {}) };
  });
  const semantic = input.semantic !== false;

  let head: CodeGraph | undefined;
  let base: CodeGraph | undefined;
  let headIndex: CommitIndex | undefined;
  let baseIndex: CommitIndex | undefined;
  let noIndexReason: string | undefined = semantic ? undefined : 'indexing disabled for this computation: grouped by directory';
  if (semantic) {
    const cache = FactsCache.open(input.workspaceDir);
    try {
      headIndex = await indexCommit(repo, headSha, { cache, signal: input.signal, onProgress: (p) => input.onProgress?.('index-head', p) });
      baseIndex = await indexCommit(repo, baseSha, { cache, signal: input.signal, onProgress: (p) => input.onProgress?.('index-base', p) });
      head = new CodeGraph(headIndex);
      base = new CodeGraph(baseIndex);
    } catch (e) {
      // Stopped, not failed: the computation ends here instead of going on without an index.
      input.signal?.throwIfAborted();
      noIndexReason = `no code index at ${headSha.slice(0, 12)} (${(e as Error).message}): grouped by directory`;
      head = base = undefined;
    } finally {
      cache.close();
    }
  }
  const indexedAt = performance.now();
  input.signal?.throwIfAborted();

  const patch = await repo.diffPatch(baseSha, headSha, [], 0);
  const hunks = parseHunks(patch);
  const dependencyDiffs = await diffDependencies(changed, async (side, p) => (await repo.readFileAt(side === 'base' ? baseSha : headSha, p))?.toString('utf8') ?? null);
  const versionOnly = new Set(dependencyDiffs.filter((d) => d.versionOnly).map((d) => d.path));

  // Generated by a tool, as the file's own header says (SPEC §8.3): a code file's role is read from its text too,
  // where its path does not say it (classifyRole). Only a header the change did not write counts: a generated file
  // leaves the cohorts and is collapsed in the diff, so a PR that could mark its own code generated could take it out
  // of review with one comment line. A changed file is generated when its base already said so and its head still
  // does (a regenerated file), a deleted one when its base said so; an added file only by its path.
  const generatedByHeader = new Set<string>();
  const saysGenerated = async (sha: string, p: string): Promise<boolean> => {
    const blob = await repo.readFileAt(sha, p);
    return !!blob && hasGeneratedHeader(blob.toString('utf8', 0, Math.min(blob.length, 8192)));
  };
  const codeByPath = changed.filter((c) => !overlong.has(c.path) && c.status !== 'added' && c.status !== 'copied' && ['source', 'test'].includes(classifyRole(c.path)));
  for (let i = 0; i < codeByPath.length; i += HEADER_READS_AT_ONCE) {
    await Promise.all(
      codeByPath.slice(i, i + HEADER_READS_AT_ONCE).map(async (c) => {
        if (!(await saysGenerated(baseSha, c.oldPath ?? c.path))) return;
        if (c.status === 'deleted' || (await saysGenerated(headSha, c.path))) generatedByHeader.add(c.path);
      }),
    );
  }
  const roleOf = (c: { path: string }): FileRole => (overlong.has(c.path) ? 'other' : generatedByHeader.has(c.path) ? 'generated' : classifyRole(c.path));

  const signals = input.signals ?? DEFAULT_SIGNALS;
  // `code-change`: which changed lines are only comments, docstrings or blank, read from both sides'
  // texts of the changed code files that have a modified definition to tell apart.
  const docLines = new Map<string, { head?: Set<number>; base?: Set<number> }>();
  // `similar-edit`: both sides' texts of the same files, to tell a file's signature lines from its idioms.
  const editSides = new Map<string, EditSides>();
  const edits = signals.includes('similar-edit') || signals.includes('same-substitution') || signals.includes('declared-member') || signals.includes('member-use');
  if ((signals.includes('code-change') || edits) && head && base) {
    for (const c of changed) {
      const language = languageOf(c.path);
      const role = roleOf(c);
      if (!language || (role !== 'source' && role !== 'test') || (c.status !== 'modified' && c.status !== 'renamed')) continue;
      if (!hunks.get(c.path)?.hunks.length || !headIndex?.files.has(c.path)) continue;
      const [h, b] = await Promise.all([repo.readFileAt(headSha, c.path), repo.readFileAt(baseSha, c.oldPath ?? c.path)]);
      if (!h || !b) continue;
      const [headText, baseText] = [h.toString('utf8'), b.toString('utf8')];
      const doc = { head: await docLinesOf(language, headText), base: await docLinesOf(language, baseText) };
      if (signals.includes('code-change')) docLines.set(c.path, doc);
      if (edits) editSides.set(c.path, { headText, baseText, headDoc: doc.head, baseDoc: doc.base });
    }
  }

  const files: FormationFile[] = changed.map((c) => {
    let role = roleOf(c);
    if (role === 'manifest' && versionOnly.has(c.path)) role = 'version-bump';
    const language = languageOf(c.path);
    const status = c.status;
    const indexed = language && (status === 'deleted' ? baseIndex?.files.has(c.oldPath ?? c.path) : headIndex?.files.has(c.path));
    const file: FormationFile = { path: c.path, ...(c.oldPath ? { oldPath: c.oldPath } : {}), status, role, fragments: [] };
    if (language && indexed) file.language = language;
    else if (!language) {
      const other = unsupportedLanguageOf(c.path);
      if (other) file.unsupportedLanguage = other;
    } else file.unsupportedLanguage = `${language} (file not indexed: vendored, generated or too large)`;
    if ((role === 'source' || role === 'test') && file.language) {
      const fragStatus = status === 'copied' ? 'added' : status === 'type_changed' ? 'modified' : status;
      const doc = docLines.get(c.path);
      const docOnly = new Set<string>();
      file.fragments = fragmentsOf({ path: c.path, oldPath: c.oldPath, status: fragStatus }, hunks.get(c.path), head, base, doc ? { ...doc, docOnly } : undefined);
      if (docOnly.size) file.docOnly = docOnly;
    }
    return file;
  });

  // Type-resolved edges from the changed TS/JS code files (head), and at base when a definition was deleted.
  const checker: Array<CheckerEdgeStats & { side: 'head' | 'base' }> = [];
  let typeEdges: ReviewComputedData['typeEdges'];
  if (input.typeEdges === false || !head || !base) {
    if (files.some((f) => f.language === 'typescript' || f.language === 'tsx' || f.language === 'javascript')) typeEdges = { status: 'off', reason: input.typeEdges === false ? 'type edges off for this computation: syntax-only edges' : 'type edges off: no code index', skippedFiles: [] };
  } else {
    const code = files.filter((f) => f.language && (f.role === 'source' || f.role === 'test'));
    const headFiles = code.filter((f) => f.status !== 'deleted').map((f) => f.path);
    // Each walked file's result is kept per commit in the workspace cache: a recomputation (another base
    // for the same head, a PR against the same base) walks only what it has not seen.
    const cache = FactsCache.open(input.workspaceDir);
    try {
      // Only edges into the changed files matter here (formation, blast radius): the rest is not asked of the checker.
      const sides: Array<{ side: 'head' | 'base'; graph: CodeGraph; files: string[] }> = [{ side: 'head', graph: head, files: headFiles }];
      if (code.some((f) => f.fragments.some((fr) => fr.change === 'deleted'))) sides.push({ side: 'base', graph: base, files: code.filter((f) => f.status !== 'added').map((f) => f.oldPath ?? f.path) });
      const resolved = [];
      for (const s of sides) {
        const r = await resolveCheckerEdges(s.graph, repo, { ...input.checkerLimits, files: s.files, targetFiles: s.files, lib: false, cache, signal: input.signal, cacheScope: input.workspaceDir });
        // Stopped, not failed safe: the computation ends here.
        input.signal?.throwIfAborted();
        resolved.push(r);
        checker.push({ ...r.stats, side: s.side });
        if (r.stats.failedSafe) break;
      }
      // The safety limit on either side: no checker edge anywhere (the whole review is syntax-only).
      const failed = checker.find((c) => c.failedSafe);
      if (!failed) for (const r of resolved) r.apply();
      typeEdges = typeEdgesOf(checker, failed);
    } finally {
      cache.close();
    }
  }

  const changedLines = new Map<string, { head: Set<number>; base: Set<number> }>();
  for (const [p, fh] of hunks) {
    const lines = { head: new Set<number>(), base: new Set<number>() };
    for (const h of fh.hunks) {
      for (let l = h.newStart; l < h.newStart + h.newCount; l++) lines.head.add(l);
      for (let l = h.oldStart; l < h.oldStart + h.oldCount; l++) lines.base.add(l);
    }
    changedLines.set(p, lines);
  }
  const codeFiles = files.filter((f) => f.language && (f.role === 'source' || f.role === 'test')).map((f) => f.path);
  const coChange = signals.includes('co-change') && !noIndexReason ? await coChangePairs(repo, baseSha, codeFiles) : undefined;
  // A file the grammar could not parse cleanly is said so, never silently degraded (its fragments may be residual).
  const parseErrorFiles = new Set(files.filter((f) => f.language && (f.status === 'deleted' ? baseIndex?.files.get(f.oldPath ?? f.path) : headIndex?.files.get(f.path))?.facts.hasErrors).map((f) => f.path));
  for (const f of files) if (parseErrorFiles.has(f.path)) f.parseErrors = true;
  const editLines = signals.includes('similar-edit') ? editKeysOf(patch, editSides) : undefined;
  // `edit-idiom`: a shared line the head commit's unchanged code already holds is an idiom being spread file by
  // file, not one edit (`idiomEditKeys`); those keys are dropped before formation.
  const dropIdioms = async (keysByPath: Map<string, Set<string>>, textOf?: (key: string) => string): Promise<void> => {
    if (!signals.includes('edit-idiom') || !headIndex || noIndexReason) return;
    const changedPaths = new Set(changed.flatMap((c) => [c.path, ...(c.oldPath ? [c.oldPath] : [])]));
    const idioms = await idiomEditKeys(keysByPath, changedPaths, (p) => headIndex!.files.has(p), (patterns) => grepFixed(repo, headSha, patterns), textOf);
    if (idioms.size) for (const [p, keys] of keysByPath) for (const k of idioms) if (keys.delete(k) && !keys.size) keysByPath.delete(p);
  };
  // `boilerplate-lines`: a line learned as boilerplate across repositories joins nothing (boilerplate.ts).
  if (editLines && signals.includes('boilerplate-lines')) {
    const boiler = boilerplateSet(input.boilerplateThreshold);
    for (const [p, keys] of editLines) {
      for (const k of [...keys]) if (boiler.has(k.slice(1))) keys.delete(k);
      if (!keys.size) editLines.delete(p);
    }
  }
  if (editLines) await dropIdioms(editLines);
  // `same-substitution`: the same part of a line changed the same way in several files; the same `edit-idiom` rule
  // drops a substitution whose new text (or removed text, for a pure removal) the unchanged code already holds.
  let editSubstitutions: Map<string, Set<string>> | undefined;
  if (signals.includes('same-substitution')) {
    const texts = new Map<string, string>();
    editSubstitutions = new Map();
    for (const [p, keys] of substitutionKeysOf(patch, editSides)) {
      editSubstitutions.set(p, new Set(keys.keys()));
      for (const [k, t] of keys) texts.set(k, t);
    }
    await dropIdioms(editSubstitutions, (k) => texts.get(k)!);
  }
  // `mirror`: changed files of the same name under two roots whose trees are copies (same definitions in
  // the index) and whose texts are copies once module specifiers are normalized. Reads only candidates' texts.
  let mirrors: MirrorPair[] | undefined;
  if (signals.includes('mirror') && head && base && headIndex && baseIndex) {
    const code = files.filter((f) => f.language && (f.role === 'source' || f.role === 'test'));
    const live = code.filter((f) => f.status !== 'deleted');
    const gone = code.filter((f) => f.status === 'deleted');
    const defsOf = (index: CommitIndex) => new Map([...index.files.values()].map((x) => [x.path, x.facts.defs.map((d) => d.qname)]));
    const read = (sha: string) => async (p: string) => (await repo.readFileAt(sha, p))?.toString('utf8');
    mirrors = [];
    const liveCandidates = mirrorCandidates(live.map((f) => f.path));
    if (liveCandidates.length) mirrors.push(...(await detectMirrors(liveCandidates, defsOf(headIndex), read(headSha))));
    const goneCandidates = mirrorCandidates(gone.map((f) => f.path));
    if (goneCandidates.length) mirrors.push(...(await detectMirrors(goneCandidates, defsOf(baseIndex), read(baseSha))));
  }
  const shared = (signals.includes('shared-identifiers') || signals.includes('member-use') || signals.includes('test-names') || signals.includes('test-titles') || signals.includes('new-identifier') || signals.includes('test-affinity') || signals.includes('edit-rare-id')) && headIndex && !noIndexReason;
  const changedIdentifiers = shared ? changedIdentifiersOf(patch, new Set(codeFiles)) : undefined;
  const changedLiterals = shared && signals.includes('test-names') ? changedLiteralsOf(patch, new Set(codeFiles)) : undefined;
  const changedTitleWords = shared && signals.includes('test-titles') ? changedTitleWordsOf(patch, new Set(codeFiles)) : undefined;
  // `test-affinity`: the words of the changed lines, and in how many indexed files of the head each word occurs (from the
  // same pass over the blobs' identifiers).
  const affinity = shared && signals.includes('test-affinity');
  const affinityWords = affinity ? changedAffinityWordsOf(patch, new Set(codeFiles)) : undefined;
  const fileIdentifiers: Array<{ blob: string; identifiers: readonly string[] }> = [];
  const frequency = shared && headIndex ? await identifierFrequency(headIndex.files.values(), (sha) => repo.readBlob(sha), input.workspaceDir, affinity ? (blob, identifiers) => fileIdentifiers.push({ blob, identifiers }) : undefined) : undefined;
  const affinityFrequency = affinity && frequency ? wordFrequency(fileIdentifiers, input.workspaceDir) : undefined;
  // `new-identifier`: which of those identifiers the base commit's indexed files already hold (blobs mostly shared with head: cached).
  const baseFrequency = shared && signals.includes('new-identifier') && baseIndex ? await identifierFrequency(baseIndex.files.values(), (sha) => repo.readBlob(sha), input.workspaceDir) : undefined;
  const changedKeys = baseFrequency ? changedKeysOf(patch, new Set(codeFiles)) : undefined;
  // `fixture-name`: the string literals that could name a file on the changed tests' added and removed lines, and on the
  // rest of their head texts (their indexed blobs; fixture-names.ts).
  let nameLiterals: Map<string, NameLiterals> | undefined;
  if (signals.includes('fixture-name') && headIndex && !noIndexReason) {
    nameLiterals = new Map();
    const code = new Set(files.filter((f) => f.role === 'test' && f.language).map((f) => f.path));
    const added = collectFromChangedLines(patch, code, (text, into) => { for (const l of nameLiteralsOf(text)) into.add(l); }, true);
    const removed = removedNameLiteralsOf(patch, code);
    const none = new Set<string>();
    for (const f of files) {
      if (!code.has(f.path)) continue;
      const onAdded = added.get(f.path) ?? none;
      const unchanged = new Set<string>();
      const indexed = f.status !== 'deleted' ? headIndex.files.get(f.path) : undefined;
      const blob = indexed ? await repo.readBlob(indexed.blob) : null;
      if (blob) for (const l of nameLiteralsOf(blob.toString('utf8'), indexed!.language === 'python')) if (!onAdded.has(l)) unchanged.add(l);
      if (onAdded.size || unchanged.size || removed.has(f.path)) nameLiterals.set(f.path, { added: onAdded, unchanged, removed: removed.get(f.path) ?? none });
    }
  }
  const declaredMembers = signals.includes('declared-member') ? declaredMemberPairs(patch, editSides) : undefined;
  const changedMembers = signals.includes('member-use') && shared ? changedMembersOf(patch, editSides, new Set(codeFiles)) : undefined;
  const cohorts = formCohorts({ nameLiterals, declaredMembers, changedMembers, files, head, base, noIndexReason, dependencyDiffs, blastDepth: input.blastDepth, changedLines, signals, coChange, editLines, editSubstitutions, changedIdentifiers, changedLiterals, changedTitleWords, affinityWords, affinityFrequency, identifierFrequency: frequency, baseIdentifierFrequency: baseFrequency, changedKeys, mirrors, affinityModel: input.affinityModel === null ? undefined : (input.affinityModel ?? DEFAULT_AFFINITY_MODEL), onEvidence: input.onFormationEvidence });
  const formedAt = performance.now();

  const changedForAxes: ChangedFile[] = changed;
  input.signal?.throwIfAborted();
  const [apiContract, visual] = await Promise.all([
    runApiContract(repo, baseSha, headSha, changedForAxes),
    runVisual(repo, baseSha, headSha, changedForAxes, input.workspaceDir, input.render),
  ]);

  const data: ReviewComputedData = fitReviewComputed({
    baseSha,
    headSha,
    engineVersion: REVIEW_ENGINE_VERSION,
    inputsDigest: inputsDigestOf(REVIEW_ENGINE_VERSION, baseSha, headSha, input.repoConfig, input.render?.entry, input),
    cohorts,
    dependencyDiffs,
    apiContract,
    visual,
    ...(typeEdges ? { typeEdges } : {}),
    changedFiles: files.map((f) => ({ path: f.path, ...(f.oldPath ? { oldPath: f.oldPath } : {}), status: f.status, role: f.role, ...(f.language ? { language: f.language } : {}), ...(parseErrorFiles.has(f.path) ? { parseErrors: true } : {}) })),
    metrics: {
      changedFiles: files.length,
      cohorts: cohorts.length,
      semanticCohorts: cohorts.filter((c) => c.grouping === 'semantic').length,
      fragments: cohorts.reduce((n, c) => n + c.fragments.length, 0),
      indexedFiles: headIndex?.fileCount ?? 0,
      parsedBlobs: (headIndex?.parsedBlobs ?? 0) + (baseIndex?.parsedBlobs ?? 0),
      cachedBlobs: (headIndex?.cachedBlobs ?? 0) + (baseIndex?.cachedBlobs ?? 0),
      resolvedEdges: head?.stats.resolved ?? 0,
      checkerEdges: head?.stats.checker ?? 0,
      checkerProgramFiles: checker.reduce((n, c) => n + c.programFiles, 0),
      checkerTruncated: checker.some((c) => c.truncated) ? 1 : 0,
      checkerMs: checker.reduce((n, c) => n + c.ms, 0),
      checkerProgramMs: checker.reduce((n, c) => n + (c.programMs ?? 0), 0),
      checkerWalkMs: checker.reduce((n, c) => n + (c.walkMs ?? 0), 0),
      checkerReadMs: checker.reduce((n, c) => n + (c.readMs ?? 0), 0),
      checkerReusedSourceFiles: checker.reduce((n, c) => n + (c.reusedSourceFiles ?? 0), 0),
      checkerStoredFiles: checker.reduce((n, c) => n + (c.fromCache ?? 0), 0),
      checkerOutsideProject: checker.reduce((n, c) => n + (c.outsideProject ?? 0), 0),
      checkerQueries: checker.reduce((n, c) => n + (c.queries ?? 0), 0),
      checkerTypeWork: checker.reduce((n, c) => n + (c.typeWork ?? 0), 0),
      checkerSkippedFiles: checker.reduce((n, c) => n + (c.skipped?.length ?? 0), 0),
      checkerFailedSafe: checker.some((c) => c.failedSafe) ? 1 : 0,
      parseErrorFiles: parseErrorFiles.size,
      nameMatchedReferences: head?.stats.nameMatch ?? 0,
      elapsedMs: Math.round(performance.now() - started),
      indexMs: Math.round(indexedAt - started),
      formationMs: Math.round(formedAt - indexedAt),
    },
  });
  return { data, head, base };
}

/** What the review says of the checker's work (bounded here: at most BOUNDS.typeEdgeSkips files listed). */
function typeEdgesOf(checker: Array<CheckerEdgeStats & { side: 'head' | 'base' }>, failed: CheckerEdgeStats | undefined): ReviewComputedData['typeEdges'] {
  const asked = checker.filter((c) => c.walked || c.skipped?.length || c.skippedAll);
  if (!asked.length) return undefined;
  if (failed) return { status: 'skipped', reason: clipText(`${failed.skippedAll!}: syntax-only edges`, BOUNDS.note), skippedFiles: [] };
  const all = asked.flatMap((c) => (c.skipped ?? []).map((s) => ({ path: s.path, side: c.side, reason: clipText(s.reason, BOUNDS.note) })));
  const sideCapped = asked.filter((c) => c.skippedAll);
  const status = sideCapped.length === asked.length ? 'skipped' : sideCapped.length || all.length ? 'partial' : 'complete';
  const reason = sideCapped.length ? clipText(sideCapped.map((c) => `${c.side}: ${c.skippedAll}`).join('; '), BOUNDS.note) : undefined;
  return { status, ...(reason ? { reason } : {}), skippedFiles: all.slice(0, BOUNDS.typeEdgeSkips), ...(all.length > BOUNDS.typeEdgeSkips ? { omittedFiles: all.length - BOUNDS.typeEdgeSkips } : {}) };
}

/** Per fixed-string pattern found, the paths of `commit` containing it (`git grep -F -o`; no match: empty). */
async function grepFixed(repo: GitRepo, commit: string, patterns: string[]): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  let text = '';
  try {
    text = await repo.git(['grep', '-I', '-z', '-o', '-F', ...patterns.flatMap((p) => ['-e', p]), commit, '--']);
  } catch {
    return out; // exit status 1: nothing found
  }
  const prefix = `${commit}:`;
  for (const line of text.split('\n')) {
    const nul = line.indexOf('\0');
    if (nul < 0 || !line.startsWith(prefix)) continue;
    const path = line.slice(prefix.length, nul);
    const match = line.slice(nul + 1);
    const set = out.get(match) ?? new Set<string>();
    set.add(path);
    out.set(match, set);
  }
  return out;
}
