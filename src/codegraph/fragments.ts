import { BOUNDS, clipId, clipText } from '../events/catalogue/bounds';
import type { FragmentData } from '../events/catalogue/compute';
import type { FileHunks } from './diff-hunks';
import type { CodeGraph, SymbolInfo } from './graph';

export const RESIDUAL = '<residual>';

/** Innermost definition per line (1-based), smaller definitions overwriting the ones that contain them. */
function innermostByLine(defs: SymbolInfo[]): Array<SymbolInfo | undefined> {
  const byLine: Array<SymbolInfo | undefined> = [];
  const sorted = [...defs].sort((a, b) => b.def.end - b.def.start - (a.def.end - a.def.start));
  for (const s of sorted) for (let l = s.def.start; l <= s.def.end; l++) byLine[l] = s;
  return byLine;
}

/**
 * Maps one file's hunks onto definitions (SPEC §8.2): head lines onto head definitions, removed lines onto
 * base definitions (a definition missing from the head is `deleted`); lines no definition covers form one
 * residual fragment.
 */
export function fragmentsOf(
  file: { path: string; oldPath?: string; status: string },
  hunks: FileHunks | undefined,
  head: CodeGraph | undefined,
  base: CodeGraph | undefined,
  /** Comment/docstring/blank lines of each side (doc-lines.ts); `docOnly` receives the symbol ids whose changed lines are all such. */
  doc?: { head?: Set<number>; base?: Set<number>; docOnly: Set<string> },
): FragmentData[] {
  const headPath = file.path;
  const basePath = file.oldPath ?? file.path;
  const headDefs = file.status === 'deleted' ? [] : head?.defsByFile.get(headPath) ?? [];
  const baseDefs = file.status === 'added' ? [] : base?.defsByFile.get(basePath) ?? [];
  const baseQnames = new Set(baseDefs.map((s) => s.def.qname));
  const headQnames = new Set(headDefs.map((s) => s.def.qname));
  const headLines = innermostByLine(headDefs);
  const baseLines = innermostByLine(baseDefs);
  const fragments = new Map<string, FragmentData>();
  let residual: { side: 'head' | 'base'; start: number; end: number } | undefined;
  const addResidual = (side: 'head' | 'base', line: number) => {
    if (!residual) residual = { side, start: line, end: line };
    else if (residual.side === side) {
      residual.start = Math.min(residual.start, line);
      residual.end = Math.max(residual.end, line);
    } else if (side === 'head') residual = { side, start: line, end: line };
  };
  const addDef = (s: SymbolInfo, side: 'head' | 'base', change: FragmentData['change']) => {
    if (fragments.has(s.def.qname)) return;
    fragments.set(s.def.qname, { id: s.id, path: side === 'head' ? headPath : basePath, symbolId: s.id, kind: clipText(s.def.kind, BOUNDS.kind), side, change, startLine: s.def.start, endLine: s.def.end });
  };
  /**
   * qnames with a changed line that is code (not a comment, docstring or blank line), and their lexical
   * ancestors: a class that gains a method changed, even when its own lines changed are comments.
   */
  const substantive = new Set<string>();
  const markSubstantive = (qname: string) => {
    for (let q = qname; q; q = q.includes('.') ? q.slice(0, q.lastIndexOf('.')) : '') substantive.add(q);
  };
  for (const h of hunks?.hunks ?? []) {
    for (let l = h.newStart; l < h.newStart + h.newCount; l++) {
      const s = headLines[l];
      if (s) {
        addDef(s, 'head', baseQnames.has(s.def.qname) ? 'modified' : 'added');
        if (!doc?.head?.has(l)) markSubstantive(s.def.qname);
      } else addResidual('head', l);
    }
    for (let l = h.oldStart; l < h.oldStart + h.oldCount; l++) {
      const s = baseLines[l];
      if (!s) {
        addResidual('base', l);
        continue;
      }
      if (!doc?.base?.has(l)) markSubstantive(s.def.qname);
      if (headQnames.has(s.def.qname)) {
        const now = headDefs.find((x) => x.def.qname === s.def.qname)!;
        addDef(now, 'head', 'modified');
      } else addDef(s, 'base', 'deleted');
    }
  }
  if (doc?.head && doc.base) for (const [qname, fr] of fragments) if (fr.change === 'modified' && !substantive.has(qname) && fr.symbolId) doc.docOnly.add(fr.symbolId);
  const out = [...fragments.values()].sort((a, b) => a.startLine - b.startLine || a.id.localeCompare(b.id));
  if (residual) {
    const r = residual as { side: 'head' | 'base'; start: number; end: number };
    out.push({ id: clipId(`${r.side === 'head' ? headPath : basePath}#${RESIDUAL}`, BOUNDS.fragmentId), path: r.side === 'head' ? headPath : basePath, kind: 'residual', side: r.side, change: file.status === 'added' ? 'added' : file.status === 'deleted' ? 'deleted' : 'modified', startLine: Math.max(1, r.start), endLine: Math.max(1, r.end) });
  }
  return out;
}
