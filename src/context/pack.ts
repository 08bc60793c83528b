import type { CodeGraph, Edge, SymbolInfo } from '../codegraph/graph';
import { isTestPath } from '../codegraph/file-roles';
import type { ApiContractComputation } from '../axes/types';
import type { CohortData } from '../events/catalogue/compute';
import type { HistoryEntry } from './history-fold';
import { hunksTouching, TextHunk } from './patches';
import type { Clue, ClueCandidate, ContextPack, PackFragment, TruncatedEntry } from './pack-types';

/** What the pure builder reads: all of it already loaded (src/context/materials.ts) or recorded in events. */
export interface PackInputs {
  cohort: CohortData;
  headSha: string;
  baseSha: string;
  graph: CodeGraph;
  hunks: ReadonlyMap<string, readonly TextHunk[]>;
  /** Head file lines; undefined when not loaded. */
  lines(path: string): readonly string[] | undefined;
  docs: ReadonlyArray<{ path: string; text: string }>;
  nameMatchesByFrom: ReadonlyMap<string, ReadonlyArray<{ name: string; candidates: number }>>;
  history(symbolId: string): HistoryEntry[];
  apiContract?: ApiContractComputation;
}

/**
 * Tiers: lower is more certain and is kept whole first. Own diff (0), then contract changes and what
 * earlier reviews concluded on the same symbols, then direct callers and callees, then the tests that
 * call the code, then owner and used types, project facts, tests reaching it indirectly, and docs.
 */
const TIER = { fragment: 0, spec: 1, history: 1, caller: 2, callee: 3, test: 4, owner: 5, used: 6, project: 7, reachingTest: 8, doc: 9 } as const;

const SIGNATURE_MAX_LINES = 4;
const SIGNATURE_MAX_CHARS = 400;
/** Lines either side of a reference made by top-level code (no enclosing definition to show). */
const TOP_LEVEL_WINDOW = 5;
/** Names shorter than this are too common to find in prose; their docs are not searched. */
const MIN_DOC_NAME = 4;
const DOC_MENTIONS_PER_FILE = 3;

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** The head-side changed symbols of the cohort: the only ones the head graph can say anything about. */
function headSymbols(cohort: CohortData, graph: CodeGraph): SymbolInfo[] {
  const out: SymbolInfo[] = [];
  for (const f of cohort.fragments) {
    if (f.side !== 'head' || !f.symbolId) continue;
    const s = graph.symbols.get(f.symbolId);
    if (s) out.push(s);
  }
  return out;
}

const ownerOf = (graph: CodeGraph, s: SymbolInfo): SymbolInfo | undefined => (s.def.parent >= 0 ? graph.defsByFile.get(s.path)?.[s.def.parent] : undefined);

/** Head files a pack of `cohort` may quote: read them (ensureTexts) before building. */
export function neededPaths(cohort: CohortData, graph: CodeGraph): Set<string> {
  const paths = new Set<string>();
  for (const s of headSymbols(cohort, graph)) {
    paths.add(s.path);
    for (const e of graph.incomingOf(s.id)) paths.add(e.fromFile);
    for (const e of graph.outgoingOf(s.id)) paths.add(e.toFile);
  }
  for (const t of cohort.blastRadius.tests) paths.add(t);
  return paths;
}

function slice(lines: readonly string[] | undefined, start: number, end: number): string {
  if (!lines) return '';
  return lines.slice(Math.max(0, start - 1), Math.min(lines.length, end)).join('\n');
}

/** The header of a definition: up to the line that opens its body (`{`, `:` or `=>`), at most a few lines. */
export function signatureOf(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (const line of lines) {
    out.push(line);
    // A `{` anywhere, or a line ending in `:` or `=>` (as /[{:]\s*$|=>\s*\{?\s*$|\{/, whose `=>\s*\{?\s*$`
    // retried a run of spaces from each of its characters: quadratic in the line).
    const end = line.trimEnd();
    if (line.includes('{') || end.endsWith(':') || end.endsWith('=>') || out.length >= SIGNATURE_MAX_LINES) break;
  }
  const sig = out.join('\n');
  return sig.length > SIGNATURE_MAX_CHARS ? `${sig.slice(0, SIGNATURE_MAX_CHARS)}…` : sig;
}

const TEST_TITLE = /^\s*(?:it|test|specify|describe|context)(?:\.\w+)?\s*\(\s*(['"`])(.*?)\1|^\s*def (test_\w+)|^\s*func (Test\w+)|^\s*(?:@Test\b.*)$/;

/** The titles of the tests in `lines` (a test file's signature: what it checks, without the bodies). */
function testOutline(lines: readonly string[], from = 1, to = lines.length): string {
  const out: string[] = [];
  for (let i = from - 1; i < Math.min(to, lines.length); i++) if (TEST_TITLE.test(lines[i])) out.push(`L${i + 1}: ${lines[i].trim()}`.slice(0, 200));
  return out.join('\n');
}

/** The `it(...)`/`test(...)` block around `line`, or a window when there is none. */
function testBlockAround(lines: readonly string[], line: number): [number, number] {
  for (let s = line; s >= 1 && s >= line - 200; s--) {
    const m = /^(\s*)(?:it|test|specify)(?:\.\w+)?\s*\(/.exec(lines[s - 1] ?? '');
    if (!m) continue;
    const indent = m[1];
    for (let e = Math.max(s, line); e <= lines.length && e <= s + 400; e++) {
      const t = lines[e - 1];
      if (e > s && t.startsWith(indent) && /^[})\]]/.test(t.slice(indent.length))) return [s, e];
    }
    break;
  }
  return [Math.max(1, line - TOP_LEVEL_WINDOW), Math.min(lines.length, line + TOP_LEVEL_WINDOW)];
}

function mergeRanges(ranges: Array<[number, number]>): Array<[number, number]> {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else out.push([...r]);
  }
  return out;
}

function historyContent(h: HistoryEntry): { whole: string; signature: string } {
  const outcome = h.status === 'dismissed' || h.status === 'resolved' ? `${h.status} by ${h.closedBy}${h.closedReason ? `: ${h.closedReason}` : ''}` : `still ${h.status}`;
  const head = `PR #${h.prNumber} round ${h.round} · ${h.priority} ${h.kind} (${h.category}) by ${h.author} · ${outcome}`;
  return { whole: `${head}\n${h.title}\n${h.body}`, signature: `${head}\n${h.title}` };
}

/** Every fact the ledger can hand over for the cohort, each with its whole text and signature. Pure. */
export function clueCandidates(inp: PackInputs): ClueCandidate[] {
  const { cohort, graph } = inp;
  const own = headSymbols(cohort, graph);
  const ownIds = new Set(cohort.fragments.map((f) => f.symbolId).filter((s): s is string => !!s));
  const seen = new Set<string>();
  const out: ClueCandidate[] = [];
  const add = (c: ClueCandidate) => {
    const key = `${c.relation}\0${c.kind}\0${c.ref}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(c);
  };
  const defText = (s: SymbolInfo) => slice(inp.lines(s.path), s.def.start, s.def.end);

  // Contract changes of the PR (spec): recorded by the computation, certain.
  const bySpec = new Map<string, string[]>();
  for (const ch of inp.apiContract?.changes ?? []) {
    const list = bySpec.get(ch.specPath) ?? [];
    list.push(`${ch.severity} ${ch.direction} ${ch.ruleId}${ch.operation ? ` ${ch.operation}` : ''}: ${ch.message}`);
    bySpec.set(ch.specPath, list);
  }
  for (const [specPath, lines] of [...bySpec].sort(([a], [b]) => a.localeCompare(b))) {
    add({ relation: 'project', kind: 'spec', ref: specPath, whole: lines.join('\n'), signature: `${lines.length} contract change(s), ${lines.filter((l) => l.startsWith('breaking') || l.startsWith('warning')).length} breaking or warning`, tier: TIER.spec });
  }

  // History: earlier reviews' nodes on the same symbol ids (base-side deleted symbols included).
  for (const symbolId of [...ownIds].sort()) {
    for (const h of inp.history(symbolId)) {
      const { whole, signature } = historyContent(h);
      add({ relation: 'self', kind: 'history', ref: `${h.streamId}/${h.nodeId}`, whole, signature, tier: TIER.history });
    }
  }

  // Callers and callees over resolved edges only (the graph keeps name-matches apart and never here).
  const testSites = new Map<string, Edge[]>();
  for (const s of own) {
    for (const e of graph.incomingOf(s.id)) {
      if (ownIds.has(e.from)) continue;
      if (isTestPath(e.fromFile)) {
        const list = testSites.get(e.fromFile) ?? [];
        list.push(e);
        testSites.set(e.fromFile, list);
        continue;
      }
      const caller = graph.symbols.get(e.from);
      if (caller) {
        const text = defText(caller);
        add({ relation: 'caller', kind: 'link', ref: caller.id, whole: text, signature: signatureOf(text), tier: TIER.caller });
      } else {
        const lines = inp.lines(e.fromFile);
        const whole = slice(lines, e.line - TOP_LEVEL_WINDOW, e.line + TOP_LEVEL_WINDOW);
        add({ relation: 'caller', kind: 'link', ref: `${e.fromFile}:L${e.line}`, whole, signature: slice(lines, e.line, e.line), tier: TIER.caller });
      }
    }
  }
  for (const s of own) {
    for (const e of graph.outgoingOf(s.id)) {
      if (ownIds.has(e.to) || e.to === s.id) continue;
      const target = graph.symbols.get(e.to);
      if (!target) continue;
      const text = defText(target);
      const relation = e.kind === 'call' ? 'callee' : 'used';
      add({ relation, kind: 'link', ref: target.id, whole: text, signature: signatureOf(text), tier: relation === 'callee' ? TIER.callee : TIER.used });
    }
  }

  // The tests that call the changed code: the test blocks around each call site.
  for (const [file, edges] of [...testSites].sort(([a], [b]) => a.localeCompare(b))) {
    const lines = inp.lines(file) ?? [];
    const ranges = mergeRanges(edges.map((e) => (graph.symbols.has(e.from) ? [graph.symbols.get(e.from)!.def.start, graph.symbols.get(e.from)!.def.end] : testBlockAround(lines, e.line))));
    const whole = ranges.map(([a, b]) => `// ${file}:L${a}-${b}\n${slice(lines, a, b)}`).join('\n');
    const signature = ranges.map(([a, b]) => testOutline(lines, a, b)).filter(Boolean).join('\n') || ranges.map(([a, b]) => `${file}:L${a}-${b}`).join('\n');
    add({ relation: 'caller', kind: 'case', ref: file, whole, signature, tier: TIER.test });
  }

  // Owners (the class or module definition a changed member lives in): its header matters most.
  for (const s of own) {
    const owner = ownerOf(graph, s);
    if (!owner || ownIds.has(owner.id)) continue;
    const text = defText(owner);
    add({ relation: 'owner', kind: 'link', ref: owner.id, whole: text, signature: signatureOf(text), tier: TIER.owner });
  }

  // Project facts: dependency diffs of the same component, attached by the computation.
  for (const c of cohort.clues) {
    const changes = (c.dependencyChanges ?? []).map((d) => `${d.name}: ${d.change}${d.from ? ` ${d.from}` : ''}${d.to ? ` → ${d.to}` : ''}${d.major ? ' (major)' : ''}${d.group ? ` [${d.group}]` : ''}`);
    const whole = [c.note ?? `${c.kind} ${c.path}`, ...changes].join('\n');
    const kind = c.kind === 'spec' ? 'spec' : c.kind === 'docs' ? 'doc' : 'project';
    add({ relation: 'project', kind, ref: c.path, whole, signature: c.note ?? `${c.kind} ${c.path}`, tier: TIER.project });
  }

  // Tests that reach the cohort only through its dependents: outline first, whole file when it fits.
  for (const t of cohort.blastRadius.tests) {
    if (testSites.has(t)) continue;
    const lines = inp.lines(t);
    if (!lines) continue;
    add({ relation: 'caller', kind: 'case', ref: t, whole: lines.join('\n'), signature: testOutline(lines) || t, tier: TIER.reachingTest });
  }

  // Docs that name a changed symbol (in code formatting, as a call, or qualified): textual mentions, never code identity.
  const names = [...new Map(own.filter((s) => s.def.name.length >= MIN_DOC_NAME).map((s) => [s.def.name, s])).values()];
  const mentions = names.map((s) => {
    const n = escapeRe(s.def.name);
    const qualified = s.def.qname.includes('.') ? `|\\b${escapeRe(s.def.qname)}\\b` : '';
    // In code formatting = inside one pair of consecutive backticks. Checked per segment, not as
    // /`[^`]*\bname\b[^`]*`/: on a doc line of a backtick and 256 KiB of "name name …" (PR content)
    // that RegExp backtracks quadratically — seconds per line, with the server's event loop held.
    const word = new RegExp(`\\b${n}\\b`);
    const call = new RegExp(`\\b${n}\\s*\\(${qualified}`);
    return { name: s.def.name, re: { test: (line: string) => call.test(line) || line.split('`').slice(1, -1).some((seg) => word.test(seg)) } };
  });
  // A name of word characters is mentioned only where it is a whole word, so a doc's words (read once)
  // say which names to look for in it; `doc.text.includes(name)` per name and doc cost names × bytes of
  // docs (a changed file of thousands of functions against up to 2,000 docs of 256 KiB).
  const plain = mentions.filter((m) => /^\w+$/.test(m.name));
  const other = mentions.filter((m) => !/^\w+$/.test(m.name));
  for (const doc of inp.docs) {
    const words = plain.length ? new Set(doc.text.match(/\w+/g)) : undefined;
    const candidates = [...plain.filter((m) => words!.has(m.name)), ...other.filter((m) => doc.text.includes(m.name))];
    if (!candidates.length) continue;
    const lines = doc.text.split('\n');
    const hits: number[] = [];
    for (let i = 0; i < lines.length && hits.length < DOC_MENTIONS_PER_FILE; i++) if (candidates.some((m) => m.re.test(lines[i]))) hits.push(i + 1);
    if (!hits.length) continue;
    const ranges = mergeRanges(hits.map((l) => paragraphAround(lines, l)));
    const whole = ranges.map(([a, b]) => slice(lines, a, b)).join('\n…\n');
    add({ relation: 'self', kind: 'doc', ref: `${doc.path}:L${hits[0]}`, whole, signature: hits.map((l) => `L${l}: ${lines[l - 1].trim()}`.slice(0, 200)).join('\n'), tier: TIER.doc });
  }
  return out;
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function paragraphAround(lines: readonly string[], line: number): [number, number] {
  let a = line;
  let b = line;
  while (a > 1 && lines[a - 2].trim() !== '' && line - a < 10) a--;
  while (b < lines.length && lines[b].trim() !== '' && b - line < 10) b++;
  return [a, b];
}

/** The cohort's own diff, one entry per fragment; a hunk shared by several fragments is shown once. */
function fragmentDiffs(inp: PackInputs): Array<{ fragment: PackFragment; diff: string }> {
  const shown = new Map<TextHunk, string>();
  return inp.cohort.fragments.map((f) => {
    const hunks = hunksTouching(inp.hunks.get(f.path) ?? [], f.side, f.startLine, f.endLine);
    const fresh = hunks.filter((h) => !shown.has(h));
    for (const h of fresh) shown.set(h, f.id);
    const diff = fresh.length ? fresh.map((h) => h.text).join('\n') : hunks.length ? `(shown with ${shown.get(hunks[0])})` : '';
    const { id, path, symbolId, kind, side, change, startLine, endLine } = f;
    return { fragment: { id, path, ...(symbolId ? { symbolId } : {}), kind, side, change, startLine, endLine }, diff };
  });
}

/**
 * Fits the facts into `budgetBytes` (fragment diffs plus clue refs and contents, UTF-8 bytes). Everything
 * starts whole; while over budget, the least certain clue is degraded — to its signature, then to a
 * pointer (`ref` only) — before the next more certain one, and fragment diffs (the own change) go last.
 * Then whatever budget is left is handed back, most certain first (whole if it fits, else signature), so
 * no degraded fact could have been given more from the unused budget. Nothing is dropped: every fact not
 * handed over whole is listed in `truncated`.
 */
export function buildContextPack(inp: PackInputs, budgetBytes: number): ContextPack {
  const frags = fragmentDiffs(inp);
  const candidates = clueCandidates(inp)
    .map((c, i) => ({ c, i }))
    .sort((a, b) => a.c.tier - b.c.tier || a.i - b.i)
    .map((x) => x.c);
  const wholeSize = candidates.map((c) => bytes(c.ref) + bytes(c.whole));
  const sigSize = candidates.map((c) => (c.signature ? bytes(c.ref) + bytes(c.signature) : Infinity));
  const pointerSize = candidates.map((c) => bytes(c.ref));
  const forms: Array<'whole' | 'signature' | 'pointer'> = candidates.map(() => 'whole');
  const fragWhole = frags.map((f) => bytes(f.fragment.id) + bytes(f.diff));
  const fragPointer = frags.map((f) => bytes(f.fragment.id));
  const fragForms: Array<'whole' | 'pointer'> = frags.map(() => 'whole');
  let total = wholeSize.reduce((n, x) => n + x, 0) + fragWhole.reduce((n, x) => n + x, 0);
  // Least certain first, each clue all the way down (signature, then pointer) before a more certain one
  // is touched: a more certain fact never holds less than a less certain one.
  for (let i = candidates.length - 1; i >= 0 && total > budgetBytes; i--) {
    if (sigSize[i] < wholeSize[i]) {
      total -= wholeSize[i] - sigSize[i];
      forms[i] = 'signature';
      if (total <= budgetBytes) break;
    }
    total -= (forms[i] === 'signature' ? sigSize[i] : wholeSize[i]) - pointerSize[i];
    forms[i] = 'pointer';
  }
  for (let i = frags.length - 1; i >= 0 && total > budgetBytes; i--) {
    if (fragWhole[i] === fragPointer[i]) continue;
    total -= fragWhole[i] - fragPointer[i];
    fragForms[i] = 'pointer';
  }
  // One large certain fact (a whole class as caller) can force every less certain one down before it is
  // degraded itself, leaving budget unused: hand what is left back, most certain first.
  for (let i = 0; i < frags.length; i++) {
    if (fragForms[i] === 'pointer' && total - fragPointer[i] + fragWhole[i] <= budgetBytes) {
      total += fragWhole[i] - fragPointer[i];
      fragForms[i] = 'whole';
    }
  }
  for (let i = 0; i < candidates.length; i++) {
    if (forms[i] === 'whole') continue;
    const current = forms[i] === 'signature' ? sigSize[i] : pointerSize[i];
    if (total - current + wholeSize[i] <= budgetBytes) {
      total += wholeSize[i] - current;
      forms[i] = 'whole';
    } else if (forms[i] === 'pointer' && sigSize[i] < wholeSize[i] && total - current + sigSize[i] <= budgetBytes) {
      total += sigSize[i] - current;
      forms[i] = 'signature';
    }
  }
  const truncated: TruncatedEntry[] = [];
  const fragments: PackFragment[] = frags.map(({ fragment, diff }, i) => {
    if (fragForms[i] === 'whole') return diff ? { ...fragment, diff } : fragment;
    truncated.push({ ref: fragment.id, what: 'fragment', relation: 'self', form: 'pointer', wholeBytes: fragWhole[i] });
    return fragment;
  });
  const counts = { whole: 0, signature: 0, pointer: 0 };
  const clues: Clue[] = candidates.map((c, i) => {
    const form = forms[i];
    counts[form]++;
    const base = { relation: c.relation, kind: c.kind, ref: c.ref };
    if (form === 'whole') return { ...base, content: c.whole, form };
    truncated.push({ ref: c.ref, what: 'clue', relation: c.relation, kind: c.kind, form, wholeBytes: wholeSize[i] });
    return form === 'signature' ? { ...base, content: c.signature!, form } : { ...base, form };
  });
  const unresolved: ContextPack['unresolved'] = [];
  for (const f of inp.cohort.fragments) {
    if (!f.symbolId || f.side !== 'head') continue;
    for (const m of inp.nameMatchesByFrom.get(f.symbolId) ?? []) unresolved.push({ from: f.symbolId, name: m.name, candidates: m.candidates });
  }
  return {
    cohortKey: inp.cohort.key,
    title: inp.cohort.title,
    headSha: inp.headSha,
    baseSha: inp.baseSha,
    budgetBytes,
    usedBytes: total,
    overBudget: total > budgetBytes,
    fragments,
    clues,
    truncated,
    unresolved,
    counts,
  };
}
