import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { CohortData } from '../events/catalogue/compute';
import { BOUNDS, clipId, clipText } from '../events/catalogue/bounds';
import type { CodeGraph } from '../codegraph/graph';
import { DEFAULT_BLAST_DEPTH } from '../codegraph/impact';
import { isTestPath } from '../codegraph/file-roles';
import { ancestors } from './cite';
import type { FormationFile, FormationInput, Link } from './types';

/** Dependents listed per cohort (files and symbols each); beyond it the list is marked truncated. */
export const MAX_LISTED_DEPENDENTS = 200;
/** Symbols named in one reading-order step's explanation; the rest are counted. */
export const MAX_NAMES_IN_WHY = 8;

/** Files formation put together, with the reference links among them and the reason in words. */
export interface Group {
  files: FormationFile[];
  grouping: 'semantic' | 'path';
  reason?: string;
  links: Link[];
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

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

/** A group as the recorded cohort: key, title, anchors, blast radius, reading order (rank and dependency clues set by the caller). */
export function toCohort(g: Group, input: FormationInput): CohortData {
  const anchors = anchorsOf(g);
  const key = keyOf(g, anchors);
  const files = g.files.map((f) => f.path).sort();
  const fragments = g.files.flatMap((f) => f.fragments);
  const blastRadius = blastRadiusOf(g, input);
  const readingOrder = readingOrderOf(g);
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
    clues: [],
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
