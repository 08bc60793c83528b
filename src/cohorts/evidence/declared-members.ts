import { parseUnifiedDiff } from '../../git/unified-diff';
// String literals (shared-identifiers' blankStrings) are blanked before names are read.
import { blankStrings, KEYWORDS } from './shared-identifiers';
import { type EditSides, undocumentedChangedLines } from './similar-edits';

/**
 * The `declared-member` signal: a hand-written declaration file and the JavaScript it declares (`index.d.ts`
 * beside `index.js`, sindresorhus's and execa's layout) are one piece of work when both change the same
 * member: the declaration adds `s(templates, …): …` to a type and the implementation sets `$.s = $.sync`; the
 * declaration adds `lines?: boolean` and the implementation reads `options.lines`. Nothing resolves between the
 * two: the implementation never imports its own typings, and the checker binds a JavaScript caller to the
 * declaration, not to the code.
 *
 * The pair is fixed by the file names (same directory, same stem, `.d.ts` ↔ `.js`, `.d.mts` ↔ `.mjs`,
 * `.d.cts` ↔ `.cjs`); the evidence is a name both changed code lines hold:
 * - on the declaration's side, a member it declares: a property or method signature opening the line
 *   (`readonly lines?: boolean`, `s(`, `pipe<T>(`), or a declared function, variable, class, type or interface;
 * - on the implementation's side, a member it touches: a property access (`options.lines`, `$.s`), an object key
 *   (`lines: true`), a destructured name (`const {lines} = options`), or an exported declaration.
 * Only code lines count: comment and doc lines (`doc-lines.ts`, which also knows sindresorhus's `/** … *\/`
 * blocks whose lines carry no leading `*`) and string literals say nothing about what the code declares.
 * - and the implementation starts or stops naming it: absent from its text at base (a new member: `$.s`) or at
 *   head (a removed one: `nodeOptions`). A member it names on both sides (an option every code path reads,
 *   `ignore`) ties any two edits near it together, and a declaration that only moves its members (a reordered
 *   interface) names every one of them.
 * Measured on execa, immer and four sindresorhus/chalk packages (docs/cohorts.md).
 */

/** The implementation a declaration file describes, when it is among `changed`: same directory, same stem. */
export function implementationOf(declaration: string, changed: ReadonlySet<string>): string | undefined {
  const m = /^(.*)\.d\.([cm]?)ts$/.exec(declaration);
  if (!m) return undefined;
  const candidate = `${m[1]}.${m[2]}js`;
  return changed.has(candidate) ? candidate : undefined;
}

/** Longest code line read: a minified or generated line says nothing a reviewer reads. */
const MAX_LINE = 1_000;
const NAME = '[A-Za-z_$][\\w$]*';
const MODIFIERS = '(?:(?:readonly|static|declare|export|default|public|private|protected|abstract|async|get|set)\\s+)*';
/** A property or method signature opening a line: `readonly lines?: boolean`, `s(`, `pipe<T>(`. */
const SIGNATURE = new RegExp(`^${MODIFIERS}(${NAME})\\??\\s*[:(<]`);
/** A declared function, variable, class, type, interface, enum or namespace. */
const DECLARATION = new RegExp(`(?:^|\\s)(?:function\\*?|const|let|var|class|interface|type|enum|namespace)\\s+(${NAME})`, 'g');
const MEMBER_ACCESS = new RegExp(`\\??\\.\\s*(${NAME})`, 'g');
const KEY = new RegExp(`(?:^|[\\s{,(])(${NAME})\\??\\s*:(?!:)`, 'g');
const DESTRUCTURED = /\{([^{}]*)\}\s*=(?!=)/g;

/** The identifiers a text holds, whole words (one linear pass). */
const wordsOf = (text: string): Set<string> => new Set(text.match(/[A-Za-z_$][\w$]*/g) ?? []);

const NOT_A_MEMBER = /^(?:function|const|let|var|class|interface|type|enum|namespace|if|for|while|switch|return|new|typeof|catch|constructor|super|await|yield|delete|throw|case|default|else|do|try|import|export)$/;

const usable = (name: string): boolean => !KEYWORDS.has(name) && name !== '$' && name !== '_';

/** The members a declaration file's changed code line declares. */
export function declaredNamesOf(line: string, into: Set<string> = new Set()): Set<string> {
  if (line.length > MAX_LINE) return into;
  const text = blankStrings(line.trim());
  const sig = SIGNATURE.exec(text);
  if (sig && usable(sig[1]) && !NOT_A_MEMBER.test(sig[1])) into.add(sig[1]);
  for (const m of text.matchAll(DECLARATION)) if (usable(m[1])) into.add(m[1]);
  return into;
}

/** The members an implementation's changed code line touches. */
export function touchedNamesOf(line: string, into: Set<string> = new Set()): Set<string> {
  if (line.length > MAX_LINE) return into;
  const text = blankStrings(line.trim());
  for (const m of text.matchAll(MEMBER_ACCESS)) if (usable(m[1])) into.add(m[1]);
  for (const m of text.matchAll(KEY)) if (usable(m[1])) into.add(m[1]);
  for (const m of text.matchAll(DESTRUCTURED)) for (const n of m[1].matchAll(new RegExp(NAME, 'g'))) if (usable(n[0])) into.add(n[0]);
  for (const m of text.matchAll(DECLARATION)) if (usable(m[1])) into.add(m[1]);
  return into;
}

/**
 * A member a source's changed code line declares in a type or class body: a property or field
 * (`_headers: Headers`, `readonly _internals?: Internals`) or a method that opens its body or states its return type
 * (`unstable_onInit(store) {`, `close(): Promise<void>`). A call opening a line (`before(() => {`, `setup(options);`)
 * declares nothing: an arrow, or no body and no return type, tells them apart.
 */
export function memberDeclarationOf(line: string): string | undefined {
  if (line.length > MAX_LINE) return undefined;
  const text = blankStrings(line.trim());
  const sig = SIGNATURE.exec(text);
  if (!sig || !usable(sig[1]) || NOT_A_MEMBER.test(sig[1]) || text.includes('=>')) return undefined;
  const rest = text.slice(sig.index + sig[0].length - 1);
  if (rest[0] === ':') return sig[1];
  return /\)\s*(?::[^=]*)?\{\s*$/.test(rest) || /\)\s*:\s*[^=;]+;?$/.test(rest) ? sig[1] : undefined;
}

/** The members a changed code line reads or writes through a property access (`event.response._headers`). */
export function accessedMembersOf(line: string, into: Set<string> = new Set()): Set<string> {
  if (line.length > MAX_LINE) return into;
  for (const m of blankStrings(line.trim()).matchAll(MEMBER_ACCESS)) if (usable(m[1])) into.add(m[1]);
  return into;
}

/** Per changed file, the members its changed code lines declare (sources) and access (`member-use`). */
export interface ChangedMembers {
  declared: Set<string>;
  accessed: Set<string>;
}

/** Per modified file of `sides` among `paths`, the members its changed code lines declare and access. */
export function changedMembersOf(patch: string, sides: ReadonlyMap<string, EditSides>, paths: ReadonlySet<string>): Map<string, ChangedMembers> {
  const out = new Map<string, ChangedMembers>();
  for (const f of parseUnifiedDiff(patch)) {
    const side = sides.get(f.path);
    if (!side || !paths.has(f.path)) continue;
    const entry: ChangedMembers = { declared: new Set(), accessed: new Set() };
    for (const line of changedCodeLines(f.hunks, side)) {
      const d = memberDeclarationOf(line);
      if (d) entry.declared.add(d);
      accessedMembersOf(line, entry.accessed);
    }
    if (entry.declared.size || entry.accessed.size) out.set(f.path, entry);
  }
  return out;
}

/** Changed code lines (added at head, removed at base) of a modified file, comment and doc lines left out. */
function changedCodeLines(hunks: ReadonlyArray<{ oldStart: number; newStart: number; text: string }>, side: EditSides): string[] {
  return [...undocumentedChangedLines(hunks, side)].map((l) => l.text).filter((text) => !/^\s*(?:\/\/|\/\*|\*)/.test(text));
}

export interface DeclaredMemberPair {
  declaration: string;
  implementation: string;
  /** Members both change, sorted. */
  names: string[];
}

/**
 * The declaration ↔ implementation pairs of a change whose changed code lines share a member, from the patch and
 * both sides' texts of the modified files (`sides`: the same map `similar-edit` reads).
 */
export function declaredMemberPairs(patch: string, sides: ReadonlyMap<string, EditSides>): DeclaredMemberPair[] {
  const changed = new Set(sides.keys());
  const wanted = new Map<string, string>();
  for (const p of [...changed].sort()) {
    const impl = implementationOf(p, changed);
    if (impl) wanted.set(p, impl);
  }
  if (!wanted.size) return [];
  const involved = new Set([...wanted.keys(), ...wanted.values()]);
  const names = new Map<string, Set<string>>();
  for (const f of parseUnifiedDiff(patch)) {
    const side = sides.get(f.path);
    if (!side || !involved.has(f.path)) continue;
    const into = new Set<string>();
    const read = wanted.has(f.path) ? declaredNamesOf : touchedNamesOf;
    for (const line of changedCodeLines(f.hunks, side)) read(line, into);
    names.set(f.path, into);
  }
  const out: DeclaredMemberPair[] = [];
  for (const [declaration, implementation] of wanted) {
    const declared = names.get(declaration);
    const touched = names.get(implementation);
    if (!declared || !touched) continue;
    const impl = sides.get(implementation)!;
    const [before, after] = [wordsOf(impl.baseText), wordsOf(impl.headText)];
    // A member the implementation starts or stops naming: one it named before and still names (`ignore`, an option
    // every code path reads) is shared by any two edits near it (measured on globby and immer: docs/cohorts.md).
    const shared = [...declared].filter((n) => touched.has(n) && !(before.has(n) && after.has(n))).sort();
    if (shared.length) out.push({ declaration, implementation, names: shared });
  }
  return out;
}
