import * as path from 'node:path';
import type { CohortData } from '../events/catalogue/compute';
import { BOUNDS, clipId, clipText } from '../events/catalogue/bounds';
import { baseName, cite } from './cite';
import { Group, toCohort } from './cohort-data';
import { attachDependencyClues } from './dependency-clues';
import { changedLinks } from './links';
import { DEFAULT_SIGNALS, signalsOf } from './registry';
import { UnionFind } from './union-find';
import { AffinityJoin, affinityUnion, pairEvidence } from './affinity';
import type { FormationFile, FormationInput, FormationSignal, Join, JoinContext, Link } from './types';
import { pushTo } from './group';

/** A merge that would make a cohort larger than this is refused: the chain stays at file level. */
export const MAX_COHORT_FILES = 12;

/**
 * Forms cohorts, keys them, measures blast radius and ranks them riskiest first. The signals act in the registry's
 * stages: the reference walk with its `edge` rules and `link` passes; the `pre-join` signals; the source↔source links,
 * bounded; each test joining the cohort it references most; then the `join` signals in registry order. With an
 * `affinityModel` (weights.json when adopted; affinity.ts) the semantic cohorts are the model's partition of the pair
 * evidence instead, the rules' partition being one of its features; `onEvidence` is given that evidence (the dump).
 */
export function formCohorts(input: FormationInput): CohortData[] {
  const active: ReadonlySet<FormationSignal> = new Set(input.signals ?? DEFAULT_SIGNALS);
  const groups: Group[] = [];
  const reviewable = input.files.filter((f) => f.role === 'source' || f.role === 'test');
  const semantic = input.noIndexReason ? [] : reviewable.filter((f) => f.language);
  const pathOnly = reviewable.filter((f) => !semantic.includes(f));
  for (const f of semantic) if (!f.fragments.length) f.fragments.push({ id: clipId(`${f.path}#<residual>`, BOUNDS.fragmentId), path: f.path, kind: 'residual', side: f.status === 'deleted' ? 'base' : 'head', change: 'modified', startLine: 1, endLine: 1 });

  const links = changedLinks(input, semantic, active);
  const rules = ruleFormation(input, semantic, links, active, 'union');
  let uf = rules.uf;
  let joins = rules.joins;
  let affinity: AffinityJoin[] = [];
  const model = input.affinityModel;
  if (model || input.onEvidence) {
    const observed = ruleFormation(input, semantic, links, active, 'observe');
    const evidence = pairEvidence(input, semantic, links, rules.uf, observed);
    input.onEvidence?.(evidence);
    if (model) {
      const fitted = affinityUnion(evidence, model, MAX_COHORT_FILES);
      uf = fitted.uf;
      affinity = fitted.joined;
      // Each signal's join once per pair, as the reason lists them.
      const seen = new Set<string>();
      joins = observed.joins.filter((j) => {
        const k = `${j.signal}\0${j.a < j.b ? j.a : j.b}\0${j.a < j.b ? j.b : j.a}`;
        return !seen.has(k) && seen.add(k);
      });
    }
  }

  const byRoot = new Map<string, FormationFile[]>();
  for (const f of semantic) {
    const r = uf.find(f.path);
    pushTo(byRoot, r, f);
  }
  for (const files of byRoot.values()) {
    const paths = new Set(files.map((f) => f.path));
    const own = links.filter((l) => paths.has(l.fromFile) && paths.has(l.toFile));
    groups.push({ files, grouping: 'semantic', links: own, reason: reasonOf(files, own, joins.filter((j) => paths.has(j.a) && paths.has(j.b)), affinity.filter((j) => paths.has(j.a) && paths.has(j.b)), model?.version) });
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
  attachDependencyClues(cohorts, input);
  return cohorts;
}

/**
 * The rule engine's joins: the `pre-join` signals; the source↔source links, bounded; each test joining the cohort it
 * references most; then the `join` signals in registry order. In `observe` mode nothing is united: every signal sees
 * each file alone and each join it asks for is recorded (the pair evidence of `affinity.ts`), and the tests' votes
 * are recorded as `test-vote` joins.
 */
export function ruleFormation(input: FormationInput, semantic: FormationFile[], links: Link[], active: ReadonlySet<FormationSignal>, mode: 'union' | 'observe'): { uf: UnionFind; joins: Join[]; votes: Array<{ test: string; file: string }> } {
  const uf = new UnionFind();
  for (const f of semantic) uf.add(f.path);
  const role = new Map(semantic.map((f) => [f.path, f.role]));
  const joins: Join[] = [];
  const votes: Array<{ test: string; file: string }> = [];
  const observe = mode === 'observe';
  // `join-attach`: in the `join` stage a signal attaches a file (or a file's cohort) to a cohort, never merges two
  // cohorts of several files each.
  let attachOnly = false;
  const ctx: JoinContext = {
    input,
    active,
    semantic,
    role,
    links,
    uf,
    joinedTests: new Set<string>(),
    join: (a, b, signal, detail) => {
      if (a === b) return false;
      if (observe) {
        joins.push({ a, b, signal, detail });
        return true;
      }
      if (uf.find(a) === uf.find(b) || uf.sizeOf(a) + uf.sizeOf(b) > MAX_COHORT_FILES) return false;
      if (attachOnly && uf.sizeOf(a) > 1 && uf.sizeOf(b) > 1) return false;
      uf.union(a, b);
      joins.push({ a, b, signal, detail });
      return true;
    },
  };
  for (const s of signalsOf('pre-join')) if (active.has(s.id)) s.apply(ctx);
  // Source↔source reference links, bounded.
  if (!observe) {
    for (const l of links) {
      if (role.get(l.fromFile) === 'test' || role.get(l.toFile) === 'test') continue;
      if (uf.find(l.fromFile) === uf.find(l.toFile)) continue;
      if (uf.sizeOf(l.fromFile) + uf.sizeOf(l.toFile) > MAX_COHORT_FILES) continue;
      uf.union(l.fromFile, l.toFile);
    }
  }
  // Each test joins the cohort whose changed definitions it references most.
  for (const t of semantic.filter((f) => f.role === 'test')) {
    const votes_ = new Map<string, Set<string>>();
    for (const l of links) {
      if (l.fromFile !== t.path || role.get(l.toFile) === 'test') continue;
      const root = uf.find(l.toFile);
      const set = votes_.get(root) ?? new Set<string>();
      set.add(l.toSymbol);
      votes_.set(root, set);
    }
    const best = [...votes_.entries()].sort((a, b) => b[1].size - a[1].size || a[0].localeCompare(b[0]))[0];
    if (!best) continue;
    if (observe) votes.push({ test: t.path, file: best[0] });
    else if (uf.sizeOf(best[0]) < MAX_COHORT_FILES) {
      uf.union(best[0], t.path);
      ctx.joinedTests.add(t.path);
    }
  }
  attachOnly = active.has('join-attach');
  for (const s of signalsOf('join')) if (active.has(s.id)) s.apply(ctx);
  return { uf, joins, votes };
}

/** Each joining signal's label in a cohort's reason. */
const LABELS = new Map<string, string>([...signalsOf('pre-join'), ...signalsOf('join')].map((s) => [s.id, s.label]));

/** Why the files of a semantic cohort are together, in words: its reference links and its other joins. */
function reasonOf(files: FormationFile[], links: Link[], joins: Join[], affinity: AffinityJoin[] = [], version?: string): string | undefined {
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
  for (const j of joins) pushTo(bySignal, j.signal, j.detail);
  for (const [signal, details] of bySignal) parts.push(`${LABELS.get(signal)}: ${details.slice(0, 3).join('; ')}${details.length > 3 ? ` and ${details.length - 3} more` : ''}`);
  if (affinity.length) parts.push(`fitted affinity (${version}): ${affinity.slice(0, 3).map((j) => `${baseName(j.a)} + ${baseName(j.b)} ${j.p.toFixed(2)}${j.because.length ? ` (${j.because.join(', ')})` : ''}`).join('; ')}${affinity.length > 3 ? ` and ${affinity.length - 3} more` : ''}`);
  if (brokenNote) parts.push(brokenNote);
  return parts.length ? clipText(parts.join(' · '), BOUNDS.groupingReason) : undefined;
}
