import { z } from 'zod';
import { DomainError } from '../../domain-error';
import type { CohortData, FragmentData } from '../../events/catalogue/compute';
import { prNumberSchema, repoIdSchema } from '../../events/catalogue/review';
import type { GitRepo } from '../../git/repo';
import { normalizeRepoPath } from '../../events/repo-path';
import { parseUnifiedDiff, type DiffHunk } from '../../git/unified-diff';
import { cohortsQuery, type cohortsView } from './cohorts';
import { runQuery } from './run-query';
import type { WorkspaceHandle } from '../../workspaces/registry';
import { loadRepoState, openRegisteredRepo } from '../../compute/streams';
import { Slot } from '../../slots';
import { pushTo } from '../../cohorts/group';

/**
 * `review_studio.reviewDiff` (issue 16): the code under review, cohort by cohort (riskiest first), each
 * cohort's fragments' hunks in the computed reading order, read from the ledger's own clone at the
 * latest computation's base..head — the page never reaches the forge. Pages are bounded in bytes and
 * resumed with a cursor naming (cohort, entry); large, binary, generated, vendored and lock files are
 * collapsed with the reason instead of being sent.
 */

/** A file changing more lines than this is collapsed: nobody reviews a 5,000-line diff line by line. */
export const LARGE_FILE_LINES = 1500;
export const DEFAULT_PAGE_BYTES = 256 * 1024;
const MAX_PAGE_BYTES = 1024 * 1024;
/** At most this many lines per `reviewFileLines` answer (expanded context). */
export const MAX_EXPANDED_LINES = 500;
/** Bytes per changed line assumed when choosing the files of a page before their patch is read. */
const ESTIMATED_LINE_BYTES = 48;

const COLLAPSED_ROLES: Record<string, string> = { generated: 'generated file', vendored: 'vendored file', lock: 'lock file' };

export const reviewDiffInput = z
  .object({
    repoId: repoIdSchema,
    prNumber: prNumberSchema,
    /** Where the previous page stopped (its `nextCursor`). */
    cursor: z.string().max(200).optional(),
    /** Only this cohort. */
    cohortKey: z.string().min(1).max(200).optional(),
    /** Budget of hunk text per page (default 256 KiB). */
    maxBytes: z.number().int().min(4096).max(MAX_PAGE_BYTES).optional(),
    /** Unchanged lines around each change (default 3). */
    context: z.number().int().min(0).max(50).optional(),
  })
  .strict();
export type ReviewDiffInput = z.infer<typeof reviewDiffInput>;

export const reviewFileLinesInput = z
  .object({
    repoId: repoIdSchema,
    prNumber: prNumberSchema,
    path: z.string().min(1).max(4000),
    /** head: the reviewed head's version of the file; base: the base's. */
    side: z.enum(['head', 'base']),
    startLine: z.number().int().positive(),
    endLine: z.number().int().positive(),
  })
  .strict()
  .refine((i) => i.endLine >= i.startLine, { message: 'endLine must be ≥ startLine', path: ['endLine'] });
export type ReviewFileLinesInput = z.infer<typeof reviewFileLinesInput>;

export interface DiffHunkView {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  /** The `@@ … @@` line (with the enclosing function git names, if any). */
  header: string;
  /** Body lines, each with its ` ` / `+` / `-` / `\` prefix. */
  lines: string[];
}

export interface DiffEntryView {
  path: string;
  oldPath?: string;
  status: string;
  role: string;
  language?: string;
  /** The fragment this entry shows; absent for "the rest of the file" (hunks no fragment covers). */
  fragmentId?: string;
  symbolId?: string;
  kind?: string;
  change?: FragmentData['change'];
  side?: FragmentData['side'];
  startLine?: number;
  endLine?: number;
  /** Why it comes at this point of the reading order. */
  why?: string;
  collapsed?: { reason: string; added: number; deleted: number };
  hunks: DiffHunkView[];
  /** The hunks were cut at the page budget. */
  truncated?: boolean;
}

/** One planned entry of a cohort, before its hunks are read. */
interface PlannedEntry {
  path: string;
  fragment?: FragmentData;
  why?: string;
  /** Hunks of this file are shown here when they intersect this range on this side. Absent: the rest. */
  range?: LineRange;
  /** The ranges of this file's entries in the cohort, and which of them is this entry's (the rest: past the last). */
  file: FileRanges;
  index: number;
}

type LineRange = { side: 'head' | 'base'; start: number; end: number };

/** A file's entry ranges in reading order, and — per patch read — its hunks grouped by the entry that shows them. */
interface FileRanges {
  ranges: LineRange[];
  shownBy: WeakMap<DiffHunk[], DiffHunk[][]>;
}

interface FileStat {
  added: number;
  deleted: number;
  binary: boolean;
}

type Cohorts = ReturnType<typeof cohortsView>;
type ChangedFile = Cohorts['changedFiles'][number];

/** The entries of a cohort in reading order: reading steps' fragments, remaining fragments, then the rest of each file. */
export function planCohort(cohort: CohortData, collapsedPaths: ReadonlySet<string>): PlannedEntry[] {
  const placed = new Set<FragmentData>();
  const ordered: Array<{ fragment: FragmentData; why?: string }> = [];
  const overlaps = (f: FragmentData, s: { startLine?: number; endLine?: number }) => s.startLine === undefined || (f.startLine <= (s.endLine ?? s.startLine) && s.startLine <= f.endLine);
  // A step's candidates: the fragments of its symbol, or of its file (not every fragment per step: a
  // cohort of thousands of fragments, one step each, was quadratic).
  const bySymbol = new Map<string, FragmentData[]>();
  const byPath = new Map<string, FragmentData[]>();
  for (const f of cohort.fragments) {
    if (f.symbolId !== undefined) pushTo(bySymbol, `${f.path}\0${f.symbolId}`, f);
    pushTo(byPath, f.path, f);
  }
  for (const step of cohort.readingOrder.steps) {
    const candidates = step.symbolId !== undefined ? bySymbol.get(`${step.path}\0${step.symbolId}`) : byPath.get(step.path);
    for (const f of candidates ?? []) {
      if (placed.has(f) || (step.symbolId === undefined && !overlaps(f, step))) continue;
      placed.add(f);
      ordered.push({ fragment: f, why: step.why });
    }
  }
  for (const f of cohort.fragments) if (!placed.has(f)) ordered.push({ fragment: f });

  const entries: PlannedEntry[] = [];
  const filesOf = new Map<string, FileRanges>();
  const fileOf = (p: string) => {
    let f = filesOf.get(p);
    if (!f) filesOf.set(p, (f = { ranges: [], shownBy: new WeakMap() }));
    return f;
  };
  const collapsedDone = new Set<string>();
  for (const { fragment, why } of ordered) {
    const file = fileOf(fragment.path);
    if (collapsedPaths.has(fragment.path)) {
      // A collapsed file is one entry however many fragments it has: there are no hunks to split.
      if (collapsedDone.has(fragment.path)) continue;
      collapsedDone.add(fragment.path);
      entries.push({ path: fragment.path, fragment, why, file, index: 0 });
      continue;
    }
    const range = { side: fragment.side, start: fragment.startLine, end: fragment.endLine };
    entries.push({ path: fragment.path, fragment, why, range, file, index: file.ranges.length });
    file.ranges.push(range);
  }
  const paths = [...new Set([...cohort.files, ...cohort.fragments.map((f) => f.path)])];
  for (const p of paths) {
    const file = fileOf(p);
    if (collapsedPaths.has(p)) {
      if (!collapsedDone.has(p)) entries.push({ path: p, file, index: 0 });
      collapsedDone.add(p);
      continue;
    }
    entries.push({ path: p, file, index: file.ranges.length });
  }
  return entries;
}

const hunkRange = (h: DiffHunk, side: 'head' | 'base') => {
  const start = side === 'head' ? h.newStart : h.oldStart;
  const count = side === 'head' ? h.newCount : h.oldCount;
  // A hunk with no lines on this side (a pure addition seen from the base) sits at its start line.
  return { start: Math.max(1, start), end: Math.max(1, start) + Math.max(count, 1) - 1 };
};

/**
 * The hunks of a file that this entry shows: each hunk of a cohort appears once, at the first entry whose
 * range it intersects, or at the file's last entry (the rest) when it intersects none. Worked out once per
 * file and patch for all its entries (`firstIntersecting`): asked entry by entry, against every earlier
 * range, a file of 1,500 one-line changes took 3.2 s per page of the review diff.
 */
export function hunksOfEntry(entry: PlannedEntry, hunks: DiffHunk[]): DiffHunk[] {
  let shown = entry.file.shownBy.get(hunks);
  if (!shown) {
    const { ranges } = entry.file;
    shown = Array.from({ length: ranges.length + 1 }, (): DiffHunk[] => []);
    const first = firstIntersecting(ranges, hunks);
    for (let i = 0; i < hunks.length; i++) shown[first[i]].push(hunks[i]);
    entry.file.shownBy.set(hunks, shown);
  }
  return shown[entry.index] ?? [];
}

/**
 * For each hunk, the index of the first range it intersects (ranges.length when none): per side, a sweep
 * over hunks by end line, adding ranges by start line into a Fenwick tree over their end lines (latest
 * first) that keeps the least index — O((hunks + ranges) log ranges).
 */
function firstIntersecting(ranges: readonly LineRange[], hunks: readonly DiffHunk[]): Int32Array {
  const first = new Int32Array(hunks.length).fill(ranges.length);
  for (const side of ['head', 'base'] as const) {
    const rs = ranges.map((r, i) => ({ r, i })).filter((x) => x.r.side === side);
    if (rs.length === 0) continue;
    const ends = [...new Set(rs.map((x) => x.r.end))].sort((a, b) => b - a); // latest first
    const slot = new Map(ends.map((e, k) => [e, k + 1]));
    const tree = new Int32Array(ends.length + 1).fill(ranges.length);
    const add = (k: number, i: number) => {
      for (; k <= ends.length; k += k & -k) if (i < tree[k]) tree[k] = i;
    };
    const least = (k: number) => {
      let m = ranges.length;
      for (; k > 0; k -= k & -k) if (tree[k] < m) m = tree[k];
      return m;
    };
    rs.sort((a, b) => a.r.start - b.r.start);
    const order = hunks.map((h, i) => ({ x: hunkRange(h, side), i })).sort((a, b) => a.x.end - b.x.end);
    let next = 0;
    for (const { x, i } of order) {
      for (; next < rs.length && rs[next].r.start <= x.end; next++) add(slot.get(rs[next].r.end)!, rs[next].i);
      // Ranges ending at or after the hunk's start: the ends ≥ x.start are the first slots.
      let lo = 0;
      let hi = ends.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (ends[mid] >= x.start) lo = mid + 1;
        else hi = mid;
      }
      const m = least(lo);
      if (m < first[i]) first[i] = m;
    }
  }
  return first;
}

function toView(h: DiffHunk): DiffHunkView {
  const [header, ...lines] = h.text.split('\n');
  return { oldStart: h.oldStart, oldCount: h.oldCount, newStart: h.newStart, newCount: h.newCount, header, lines };
}

async function numstat(repo: GitRepo, base: string, head: string): Promise<Map<string, FileStat>> {
  const out = await repo.git(['diff', '--no-ext-diff', '--no-textconv', '--find-renames', '--numstat', '-z', base, head]);
  const stats = new Map<string, FileStat>();
  const parts = out.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const rec = parts[i];
    if (!rec) continue;
    const [a, d, p] = rec.split('\t');
    // A rename reads "a\td\t" then the old and the new path as their own NUL-terminated fields.
    const path = p === '' || p === undefined ? ((i += 2), parts[i]) : p;
    stats.set(path, { added: a === '-' ? 0 : Number(a), deleted: d === '-' ? 0 : Number(d), binary: a === '-' });
  }
  return stats;
}

function collapseReason(file: ChangedFile | undefined, stat: FileStat | undefined): string | null {
  if (file && COLLAPSED_ROLES[file.role]) return COLLAPSED_ROLES[file.role];
  if (stat?.binary) return 'binary file';
  if (stat && stat.added + stat.deleted > LARGE_FILE_LINES) return `large diff: ${stat.added + stat.deleted} changed lines (over ${LARGE_FILE_LINES})`;
  return null;
}

interface Cursor {
  head: string;
  cohort: number;
  entry: number;
}
const encodeCursor = (c: Cursor) => `v1.${c.head.slice(0, 16)}.${c.cohort}.${c.entry}`;
function decodeCursor(raw: string, headSha: string): Cursor {
  const m = /^v1\.([0-9a-f]{1,16})\.(\d{1,6})\.(\d{1,7})$/.exec(raw);
  if (!m) throw new DomainError('invalid_cursor', `cursor: "${raw.slice(0, 60)}" is not a reviewDiff cursor (pass nextCursor as received)`);
  if (!headSha.startsWith(m[1])) throw new DomainError('cursor_stale', `cursor: it was made for head ${m[1]}, the PR is now computed at ${headSha.slice(0, 16)}: start again without a cursor`);
  return { head: headSha, cohort: Number(m[2]), entry: Number(m[3]) };
}

async function withRepo<T>(ws: WorkspaceHandle, repoId: string, fn: (repo: GitRepo) => Promise<T>): Promise<T> {
  const repo = await openRegisteredRepo(await loadRepoState(ws, repoId));
  try {
    return await fn(repo);
  } finally {
    repo.close();
  }
}

/**
 * What git says of one base..head at one context width — immutable, since both ends are commits: the
 * numstat of the whole PR and the parsed hunks of each file read so far. Kept per workspace (in its
 * cache) for the pages that follow and the next reader, so a page costs git only for files no earlier
 * page read, and a page open on a warm diff costs no git at all.
 */
interface DiffSet {
  stats: Promise<Map<string, FileStat>>;
  /** Per path asked for: its hunks (empty when git had none for it). */
  patches: Map<string, DiffHunk[]>;
  bytes: number;
}
const DIFF_SETS = new Slot<Map<string, DiffSet>>('reviewDiff.diffSets');
/** Hunk text kept per workspace before the least recently read diffs are dropped. */
export const DIFF_CACHE_BYTES = 64 * 1024 * 1024;

function diffSetOf(ws: WorkspaceHandle, key: string, numstatOf: () => Promise<Map<string, FileStat>>): DiffSet {
  const sets = ws.cache.getOrSet(DIFF_SETS, () => new Map());
  let set = sets.get(key);
  if (set) sets.delete(key);
  else {
    const stats = numstatOf();
    set = { stats, patches: new Map(), bytes: 0 };
    // A failed git call is not remembered: the next read tries again.
    stats.catch(() => sets!.get(key) === set && sets!.delete(key));
  }
  sets.set(key, set); // most recently read last
  return set;
}

function trimDiffSets(ws: WorkspaceHandle, keep: DiffSet): void {
  const sets = ws.cache.get(DIFF_SETS);
  if (!sets) return;
  let total = 0;
  for (const s of sets.values()) total += s.bytes;
  for (const [k, s] of sets) {
    if (total <= DIFF_CACHE_BYTES) break;
    if (s === keep) continue;
    sets.delete(k);
    total -= s.bytes;
  }
}

export async function readReviewDiff(ws: WorkspaceHandle, input: ReviewDiffInput, asOf?: number, signal?: AbortSignal) {
  const answer = await runQuery(cohortsQuery, ws, { repoId: input.repoId, prNumber: input.prNumber }, asOf);
  const c = answer.value as Cohorts;
  const position = answer.position;
  if (!c.computed) return { computed: false as const, reason: `${input.repoId}#${input.prNumber} has no review computation yet`, position, cohorts: [], nextCursor: null };
  const budget = input.maxBytes ?? DEFAULT_PAGE_BYTES;
  const context = input.context ?? 3;
  const cohorts = input.cohortKey === undefined ? c.cohorts : c.cohorts.filter((x) => x.key === input.cohortKey);
  if (input.cohortKey !== undefined && cohorts.length === 0) throw new DomainError('cohort_not_found', `cohortKey: "${input.cohortKey.slice(0, 80)}" is not a cohort of the latest computation`);
  const start = input.cursor ? decodeCursor(input.cursor, c.headSha) : { head: c.headSha, cohort: 0, entry: 0 };
  const fileOf = new Map(c.changedFiles.map((f) => [f.path, f]));

  // The clone is opened only when the cached diff lacks something this page needs.
  const repoState = await loadRepoState(ws, input.repoId);
  let opened: Promise<GitRepo> | null = null;
  const repo = () => (opened ??= openRegisteredRepo(repoState));
  try {
    const set = diffSetOf(ws, `${input.repoId}\0${c.baseSha}\0${c.headSha}\0${context}`, async () => numstat(await repo(), c.baseSha, c.headSha));
    const stats = await set.stats;
    const collapsed = new Map<string, string>();
    for (const p of new Set([...fileOf.keys(), ...stats.keys()])) {
      const reason = collapseReason(fileOf.get(p), stats.get(p));
      if (reason) collapsed.set(p, reason);
    }
    const plans = cohorts.map((co) => planCohort(co, new Set(collapsed.keys())));

    // Choose the page's entries on estimates, read those files' patch in one git call, then fill exactly.
    const chosen: Array<{ ci: number; ei: number }> = [];
    const files = new Set<string>();
    let estimate = 0;
    for (let ci = start.cohort, ei = start.entry; ci < plans.length; ci++, ei = 0) {
      for (; ei < plans[ci].length; ei++) {
        const e = plans[ci][ei];
        const s = stats.get(e.path);
        const cost = collapsed.has(e.path) || files.has(e.path) ? 0 : ((s?.added ?? 0) + (s?.deleted ?? 0) + 2 * context * 4) * ESTIMATED_LINE_BYTES;
        if (chosen.length > 0 && estimate + cost > budget * 2) break;
        chosen.push({ ci, ei });
        if (!collapsed.has(e.path)) files.add(e.path);
        estimate += cost;
      }
      if (ei < plans[ci].length) break;
    }
    const missing = [...files].filter((p) => !set.patches.has(p));
    const patchPaths = missing.flatMap((p) => [p, fileOf.get(p)?.oldPath].filter((x): x is string => !!x));
    if (patchPaths.length) {
      const read = new Map<string, DiffHunk[]>();
      // The one git call of this request alone (numstat is shared): stopped when its client goes away.
      for (const f of parseUnifiedDiff(await (await repo()).diffPatch(c.baseSha, c.headSha, patchPaths, context, signal))) read.set(f.path, f.hunks);
      for (const p of missing) {
        const hunks = read.get(p) ?? [];
        set.patches.set(p, hunks);
        set.bytes += hunks.reduce((n, hk) => n + hk.text.length, 0) + p.length;
      }
      trimDiffSets(ws, set);
    }
    const patches = set.patches;

    const out: Array<{ key: string; rank: number; title: string; entryCount: number; from: number; entries: DiffEntryView[] }> = [];
    let bytes = 0;
    let next: Cursor | null = null;
    for (const { ci, ei } of chosen) {
      const planned = plans[ci][ei];
      const file = fileOf.get(planned.path);
      const stat = stats.get(planned.path);
      const f = planned.fragment;
      const entry: DiffEntryView = {
        path: planned.path,
        ...(file?.oldPath ? { oldPath: file.oldPath } : {}),
        status: file?.status ?? 'modified',
        role: file?.role ?? 'other',
        ...(file?.language ? { language: file.language } : {}),
        ...(f ? { fragmentId: f.id, kind: f.kind, change: f.change, side: f.side, startLine: f.startLine, endLine: f.endLine, ...(f.symbolId ? { symbolId: f.symbolId } : {}) } : {}),
        ...(planned.why ? { why: planned.why } : {}),
        hunks: [],
      };
      const reason = collapsed.get(planned.path);
      if (reason) entry.collapsed = { reason, added: stat?.added ?? 0, deleted: stat?.deleted ?? 0 };
      else {
        const hunks = hunksOfEntry(planned, patches.get(planned.path) ?? []).map(toView);
        // A fragment whose hunks an earlier fragment of the reading order already showed (adjacent
        // definitions share a hunk), or the rest of a file with nothing left, has nothing to show.
        if (hunks.length === 0) continue;
        const sizeOf = (h: DiffHunkView) => h.header.length + 1 + h.lines.reduce((n, l) => n + l.length + 1, 0);
        const size = hunks.reduce((n, h) => n + sizeOf(h), 0);
        if (bytes > 0 && bytes + size > budget) {
          // Does not fit this page: it opens the next one.
          next = { head: c.headSha, cohort: ci, entry: ei };
          break;
        }
        let used = 0;
        for (const h of hunks) {
          // Alone over the budget: cut at a hunk boundary (at least one hunk) and say so.
          if (entry.hunks.length > 0 && used + sizeOf(h) > budget) {
            entry.truncated = true;
            break;
          }
          used += sizeOf(h);
          entry.hunks.push(h);
        }
        bytes += used;
      }
      const co = cohorts[ci];
      let group = out[out.length - 1];
      if (!group || group.key !== co.key) out.push((group = { key: co.key, rank: co.rank, title: co.title, entryCount: plans[ci].length, from: ei, entries: [] }));
      group.entries.push(entry);
      if (entry.truncated) {
        next = ei + 1 < plans[ci].length ? { head: c.headSha, cohort: ci, entry: ei + 1 } : ci + 1 < plans.length ? { head: c.headSha, cohort: ci + 1, entry: 0 } : null;
        break;
      }
    }
    if (!next && chosen.length) {
      const last = chosen[chosen.length - 1];
      if (last.ei + 1 < plans[last.ci].length) next = { head: c.headSha, cohort: last.ci, entry: last.ei + 1 };
      else if (last.ci + 1 < plans.length) next = { head: c.headSha, cohort: last.ci + 1, entry: 0 };
    }
    return { computed: true as const, baseSha: c.baseSha, headSha: c.headSha, position, context, bytes, cohorts: out, nextCursor: next ? encodeCursor(next) : null };
  } finally {
    if (opened) void opened.then((r) => r.close(), () => undefined);
  }
}

/** `review_studio.reviewFileLines`: unchanged lines of a changed file at base or head, to expand a diff's context. */
export async function readReviewFileLines(ws: WorkspaceHandle, input: ReviewFileLinesInput, asOf?: number) {
  const c = (await runQuery(cohortsQuery, ws, { repoId: input.repoId, prNumber: input.prNumber }, asOf)).value as Cohorts;
  if (!c.computed) throw new DomainError('not_computed', `prNumber: ${input.repoId}#${input.prNumber} has no review computation yet`);
  const path = normalizeRepoPath(input.path);
  const file = c.changedFiles.find((f) => f.path === path || f.oldPath === path);
  // Only the files the PR changed: the page expands context, it is not a browser of the repository.
  if (!file) throw new DomainError('file_not_changed', `path: "${path.slice(0, 200)}" is not a file this PR changed`);
  const commit = input.side === 'head' ? c.headSha : c.baseSha;
  const at = input.side === 'head' ? file.path : (file.oldPath ?? file.path);
  const blob = await withRepo(ws, input.repoId, (repo) => repo.readFileAt(commit, at));
  if (!blob) return { path: at, side: input.side, commit, exists: false as const, startLine: input.startLine, lines: [], totalLines: 0 };
  const all = blob.toString('utf8').split('\n');
  if (all[all.length - 1] === '') all.pop();
  const end = Math.min(input.endLine, input.startLine + MAX_EXPANDED_LINES - 1, all.length);
  return { path: at, side: input.side, commit, exists: true as const, startLine: input.startLine, lines: all.slice(input.startLine - 1, end), totalLines: all.length };
}
