import type { Node, QueryCapture, Tree } from 'web-tree-sitter';
import type { LoadedGrammar } from './languages/grammar-runtime';
import type { Definition, FileFacts, ImportDecl, Reference, ReferenceKind } from './facts';
import { ecmaTags } from './ecma-tags';
import { extractImports } from './imports';
import { locateRanges, type Located } from './locate';
import { ancestorsOf, dartDefinitionEnd, dartQualifierOf, NamedSiblings, widgetbookUseCaseRefs } from './languages/lang-dart';
import { swiftQualifierOf } from './languages/lang-swift';

/** Parents whose first named child is the receiver/namespace of the member named by a later child. */
const MEMBER_PARENTS = new Set([
  'member_expression', 'selector_expression', 'qualified_type', 'attribute', 'method_invocation', 'nested_type_identifier',
  'call', 'field_expression', 'scoped_identifier', 'member_access_expression', 'member_call_expression', 'field_access',
  'scoped_call_expression', 'generic_type', 'navigation_expression',
]);
/** A member access right after an identifier: `.name`, `?.name`, `::name`. */
const MEMBER_AFTER = /^\s*(?:\?\.|\.|::)\s*([A-Za-z_$][\w$]*)/;
const SIMPLE_QUALIFIER = /^[A-Za-z_$][\w$]*((\.|::)[A-Za-z_$][\w$]*)*$/;
const REFERENCE_KINDS: Record<string, ReferenceKind> = { call: 'call', class: 'class', type: 'type', implementation: 'implementation', send: 'call', interface: 'type' };

/**
 * Tags-query matches start no deeper than this many nodes below the root. Unbounded, tree-sitter's query
 * cursor fell off a cliff on deep trees: 20,000 nested calls took Dart 17 s and Swift 11 s (10,000: under
 * 1 s). The deepest of ~2,900 files of 13 public repositories in 15 languages is 62 nodes deep, and their
 * facts are the same with this bound (bench: old and new extraction compared file by file).
 */
export const QUERY_OPTIONS = { maxStartDepth: 1000 };

/** Languages whose tags query is written out by hand (ecma-tags.ts). */
const ECMA_LANGUAGES = new Set(['typescript', 'tsx', 'javascript']);

interface CaptureRole { category: 'definition' | 'reference'; kind: string }
const CAPTURE_ROLES = new Map<string, CaptureRole | null>();
/** `definition.function` → { definition, function }; null for captures that are neither (memoized: a few names per grammar). */
function captureRole(name: string): CaptureRole | null {
  let r = CAPTURE_ROLES.get(name);
  if (r === undefined) {
    const category = name.startsWith('definition.') ? 'definition' : name.startsWith('reference.') ? 'reference' : undefined;
    r = category ? { category, kind: name.split('.')[1] } : null;
    CAPTURE_ROLES.set(name, r);
  }
  return r;
}

/** `end`: the node the definition runs to when it is not `node` itself (Dart bodies follow their signatures). */
interface RawDef { node: Node; nameNode: Node; kind: string; end?: Node; /** nameNode's text, when already known. */ name?: string }

export interface ExtractOptions {
  /** Run the tags query even where a hand-written walk replaces it (the reference the walk is tested against). */
  tagsByQuery?: boolean;
  /** Overrides PARSE_BUDGET_MS (tests). */
  parseBudgetMs?: number;
}

/**
 * How long the parses of one file may run before it is abandoned (no facts; the indexer lists it as
 * skipped). tree-sitter's error recovery is superlinear on some invalid input: JavaScript text nested 256
 * deep in a `.swift` file, 174 KB, took 76 s to parse (Kotlin, Dart: ~30 ms per KB), and anyone whose branch
 * is reviewed can commit one. Real files parse in far less (2,567 files of 13 public repositories in 15
 * languages: 11.5 s of extraction together), so the budget is a wide margin, and a file near it is rare
 * enough that the outcome — cached per blob like any facts — is in practice the same on every run.
 */
export const PARSE_BUDGET_MS = 20_000;

/**
 * What a parse on the server's own thread may take (the event loop waits for it): past this a file is
 * handed to a worker thread, which has the whole PARSE_BUDGET_MS — the same facts, off the event loop. A
 * 48 KB hostile `.swift` file in a PR held /health for 7 s per parse before.
 */
export const IN_THREAD_PARSE_MS = 250;

const ABANDONED_PARSE = 'parsing took longer than';
/** The parse was cancelled by the budget (as opposed to facts that are simply empty). */
export const isParseAbandoned = (f: FileFacts): boolean => !!f.abandoned?.startsWith(ABANDONED_PARSE);

/** `parser.parse` with a wall-clock budget (`deadline`, performance.now() time): 'abandoned' when cancelled (the parser is then reset for the next text). */
export function parseWithin(grammar: LoadedGrammar, text: string, deadline: number): Tree | null | 'abandoned' {
  let abandoned = false;
  // progressCallback is called every 100 parser operations; `true` cancels.
  const tree = grammar.parser.parse(text, null, { progressCallback: () => (abandoned ||= performance.now() > deadline) as unknown as void });
  if (!abandoned) return tree;
  tree?.delete();
  grammar.parser.reset();
  return 'abandoned';
}

/** One parse, one query pass: definitions, references and imports of one source text. */
export function extractFacts(grammar: LoadedGrammar, original: string, options: ExtractOptions = {}): FileFacts {
  const budget = options.parseBudgetMs ?? PARSE_BUDGET_MS;
  const deadline = performance.now() + budget;
  let abandoned = false;
  const parse = (text: string) => {
    if (abandoned) return null;
    const t = parseWithin(grammar, text, deadline);
    if (t !== 'abandoned') return t;
    abandoned = true;
    return null;
  };
  const gaveUp = (): FileFacts => ({ defs: [], refs: [], imports: [], exportAliases: [], abandoned: `${ABANDONED_PARSE} ${budget} ms` });
  let source = original;
  const prepared = grammar.spec.prepareSource?.(original);
  let tree = prepared !== undefined ? parse(prepared) : null;
  if (tree && !tree.rootNode.hasError) source = prepared!;
  else {
    tree?.delete();
    tree = parse(source);
  }
  if (abandoned) return gaveUp();
  if (!tree) return { defs: [], refs: [], imports: [], exportAliases: [] };
  const repaired = tree.rootNode.hasError && grammar.spec.repairSource ? grammar.spec.repairSource(source, tree.rootNode) : undefined;
  if (repaired !== undefined) {
    // The repaired text's tree replaces the original only when it parses cleanly.
    const second = parse(repaired);
    if (second && !second.rootNode.hasError) {
      tree.delete();
      tree = second;
      source = repaired;
    } else second?.delete();
  }
  if (tree.rootNode.hasError && grammar.spec.errorFallback) {
    let fallback: FileFacts | undefined;
    try {
      fallback = grammar.spec.errorFallback(source, grammar.spec.id);
    } catch (err) {
      // The TypeScript parser recurses per nesting level: 100,000 nested calls overflow the stack. The
      // tree-sitter tree (with its error nodes) then gives the facts, best-effort, as for other languages.
      if (!isStackOverflow(err)) throw err;
    }
    if (fallback) {
      tree.delete();
      return fallback;
    }
  }
  try {
    const root = tree.rootNode;
    const { imports, exportAliases, packageName, importRanges, topLevelDeclarations } = extractImports(grammar.spec.imports, root);
    const importedLocals = new Set<string>();
    for (const imp of imports) if (!imp.reexport) for (const b of imp.bindings) importedLocals.add(b.local.split('.')[0]);

    const rawDefs: RawDef[] = [];
    const rawRefs: Array<{ nameNode: Node; kind: ReferenceKind; name?: string; receiver?: Node }> = [];
    const handWritten = !options.tagsByQuery && topLevelDeclarations && ECMA_LANGUAGES.has(grammar.spec.id);
    if (handWritten) {
      const tags = ecmaTags(root, source, grammar.spec.id, topLevelDeclarations);
      for (const d of tags.defs) rawDefs.push(d);
      for (const r of tags.refs) rawRefs.push(r);
    }
    if (!handWritten) for (const match of grammar.query.matches(root, QUERY_OPTIONS)) {
      let nameNode: Node | undefined;
      let role: QueryCapture | undefined;
      let roleName: CaptureRole | undefined;
      for (const c of match.captures) {
        if (c.name === 'name') nameNode = c.node;
        else {
          const r = captureRole(c.name);
          if (r) {
            role = c;
            roleName = r;
          }
        }
      }
      if (!nameNode || !role || !roleName) continue;
      const { category, kind } = roleName;
      // C#: a namespace is the file's package, not a definition (see lang-csharp.ts).
      if (category === 'definition' && kind === 'module' && grammar.spec.id === 'csharp') continue;
      if (category === 'definition') rawDefs.push(grammar.spec.id === 'dart' ? { node: role.node, nameNode, kind, end: dartDefinitionEnd(role.node) } : { node: role.node, nameNode, kind });
      else {
        const refKind = REFERENCE_KINDS[kind];
        if (refKind) rawRefs.push({ nameNode, kind: refKind });
      }
    }

    // `const send = require('send')` binds a module (CommonJS, imports.ts): it defines nothing here. Kept as
    // a constant it shared its name with `res.send = function send …` below, one symbol spanning both.
    const importSpans = disjointRanges(importRanges);
    const ownDefs = importRanges.length ? rawDefs.filter((d) => !(d.kind === 'constant' && insideRanges(importSpans, d.node.startIndex))) : rawDefs;
    const defs = buildDefinitions(ownDefs, grammar.spec.id, new Set(exportAliases.map(([, local]) => local)), source);
    const starts = defs.map((d) => d.startIndex);
    const enclosing = (index: number): number => {
      let lo = 0;
      let hi = starts.length - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (starts[mid] <= index) {
          found = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      for (let i = found; i >= 0; i = defs[i].def.parent) if (defs[i].endIndex > index) return i;
      return -1;
    };

    const refs: Reference[] = [];
    const seen = new Set<string>();
    const seenAnyKind = new Set<string>();
    const push = (name: string, qualifier: string | undefined, kind: ReferenceKind, index: number, line: number) => {
      const from = enclosing(index);
      const site = `${name}\0${qualifier ?? ''}\0${from}`;
      const key = `${site}\0${kind}`;
      // A plain use adds nothing when the same site is already known as a call/type/class reference.
      if (seen.has(key) || (kind === 'use' && seenAnyKind.has(site))) return;
      seen.add(key);
      seenAnyKind.add(site);
      const ref: Reference = { name, kind, line, from };
      if (qualifier !== undefined) ref.qualifier = qualifier;
      refs.push(ref);
    };
    // A reference's qualifier comes from its name's parent (and, in Dart and Swift, the nodes above it): all
    // of them found by one walk down the tree (locate.ts) — `nameNode.parent` walks down from the root, so
    // asking it per reference was quadratic in the nesting depth.
    const located = handWritten ? null : locateRanges(root, rawRefs.map((r) => [r.nameNode.startIndex, r.nameNode.endIndex, r.nameNode.id] as const), MEMBER_PARENTS);
    const dartSiblings = grammar.spec.id === 'dart' ? new NamedSiblings() : undefined;
    const qualifierOf = (nameNode: Node, at: Located | null): string | undefined => {
      const ancestors = at?.ancestors ?? ancestorsOf(nameNode, 3);
      if (dartSiblings) return dartQualifierOf(ancestors, dartSiblings);
      if (grammar.spec.id === 'swift') return swiftQualifierOf(ancestors);
      return at ? qualifierOfLocated(at, source) : ancestors[0] && MEMBER_PARENTS.has(ancestors[0].type) ? receiverQualifier(ancestors[0], nameNode) : undefined;
    };
    for (let k = 0; k < rawRefs.length; k++) {
      const { nameNode, kind, name, receiver } = rawRefs[k];
      // Hand-written ECMAScript tags know a member call's receiver; their other references have none (qualifierOf's parents are never theirs).
      const qualifier = handWritten ? (receiver ? receiverQualifier(receiver, nameNode) : undefined) : qualifierOf(nameNode, located![k]);
      push(name ?? nameNode.text, qualifier, kind, nameNode.startIndex, nameNode.startPosition.row + 1);
    }
    if (grammar.spec.id === 'dart') for (const u of widgetbookUseCaseRefs(root)) push(u.member, u.node.text, 'call', u.node.startIndex, u.node.startPosition.row + 1);
    for (const use of usesOfImports(root, source, importedLocals, grammar.spec.sweepTypes, importSpans)) {
      // `ns.member` / `pkg::item`: the binding qualifies the member (the text says so without asking the tree).
      const member = MEMBER_AFTER.exec(source.slice(use.end, use.end + 200));
      if (member) push(member[1], use.name, 'use', use.index, use.line);
      else push(use.name, undefined, 'use', use.index, use.line);
    }
    return { defs: defs.map((d) => d.def), refs, imports, exportAliases, ...(packageName ? { packageName } : {}), ...(root.hasError ? { hasErrors: true } : {}) };
  } catch (err) {
    // Any recursion left that a hostile file nests past the stack: this file is skipped (the indexer says
    // why), not the whole index failed with `internal`.
    if (isStackOverflow(err)) return { defs: [], refs: [], imports: [], exportAliases: [], abandoned: 'nested too deeply to extract (the call stack overflowed)' };
    throw err;
  } finally {
    tree.delete();
  }
}

const isStackOverflow = (err: unknown): boolean => err instanceof RangeError && /call stack/i.test(err.message);

/**
 * Uses of imported names anywhere in the file (values, `extends`, generic arguments, …). Scanning the text
 * and asking the tree only at the hits costs far less than capturing every identifier of the file; the
 * hits are located by one forward cursor walk (locate.ts), not one search from the root each.
 */
function usesOfImports(root: Node, source: string, names: Set<string>, types: string[], importRanges: ReadonlyArray<[number, number]>): Array<{ name: string; index: number; end: number; line: number }> {
  if (!names.size || !types.length) return [];
  const hits = occurrencesOf(source, names).filter(([start]) => !insideRanges(importRanges, start));
  const found = locateRanges(root, hits.map(([start, name]) => [start, start + name.length] as const));
  const out: Array<{ name: string; index: number; end: number; line: number }> = [];
  hits.forEach(([start, name], i) => {
    const node = found[i];
    const end = start + name.length;
    if (node && node.start === start && node.end === end && types.includes(node.type)) out.push({ name, index: start, end, line: node.row + 1 });
  });
  return out;
}

const WORD_NAME = /^[\w$]+$/;
const isWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36;

/**
 * Where the names occur as whole words (not after a word character or `$`, nor after a member dot `x.name`;
 * a spread `...name` is a use), in text order. Names made of `[\w$]` only (every ECMAScript import, most
 * others) are found with indexOf per name and the boundaries checked by hand: the regex alternation of all
 * names, with its look-behinds tried at every offset, cost more than the rest of the sweep. Two occurrences
 * of such names never overlap (each is a whole word), so the sorted union is what the regex finds. Other
 * names (non-ASCII letters, `::`) take that regex.
 */
function occurrencesOf(source: string, names: Set<string>): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  if (![...names].every((n) => WORD_NAME.test(n))) {
    const alternatives = [...names].map((n) => n.replace(/[$.*+?^{}()|[\]\\]/g, '\\$&')).join('|');
    const pattern = new RegExp(`(?<![\\w$])(?<![^.]\\.)(?:${alternatives})(?![\\w$])`, 'g');
    for (let m = pattern.exec(source); m; m = pattern.exec(source)) out.push([m.index, m[0]]);
    return out;
  }
  // One pass over the words of the text (a whole-word occurrence of such a name is a maximal run of word
  // characters): searching the text once per name cost names × text — a file importing thousands of
  // names took ~50 s per MiB.
  const n = source.length;
  let longest = 0;
  for (const name of names) longest = Math.max(longest, name.length);
  for (let i = 0; i < n; ) {
    if (!isWordChar(source.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < n && isWordChar(source.charCodeAt(end))) end++;
    if (end - i <= longest) {
      const word = source.slice(i, end);
      if (names.has(word) && !(i >= 2 && source.charCodeAt(i - 1) === 46 && source.charCodeAt(i - 2) !== 46)) out.push([i, word]);
    }
    i = end;
  }
  return out;
}

/** `receiverQualifier` of a located name's parent, from what the cursor walk recorded. */
function qualifierOfLocated(name: Located | null, source: string): string | undefined {
  if (!name || !name.parentType || !MEMBER_PARENTS.has(name.parentType)) return undefined;
  const first = name.parentFirstNamed;
  if (!first || first[0] === name.start) return undefined;
  const text = source.slice(first[0], first[1]);
  return text.length <= 200 && SIMPLE_QUALIFIER.test(text) ? text : '?';
}

/** The text of `parent`'s first named child when it is not `nameNode` itself: `?` when it is not a plain dotted name. */
function receiverQualifier(parent: Node, nameNode: Node): string | undefined {
  const first = parent.firstNamedChild;
  if (!first || first.startIndex === nameNode.startIndex) return undefined;
  const text = first.text;
  return text.length <= 200 && SIMPLE_QUALIFIER.test(text) ? text : '?';
}

/** `ranges` sorted by start with overlapping ones merged, for insideRanges. */
function disjointRanges(ranges: ReadonlyArray<[number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const [s, e] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const last = out[out.length - 1];
    if (last && s < last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** Whether `index` is inside one of `ranges` (disjointRanges): a binary search, not a scan per hit (n import statements × n hits was quadratic). */
function insideRanges(ranges: ReadonlyArray<[number, number]>, index: number): boolean {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid][0] <= index) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && index < ranges[lo - 1][1];
}

interface BuiltDef { def: Definition; startIndex: number; endIndex: number }

/**
 * C/C++ tags.scm captures the function *declarator* (name and parameters) as the definition; the body
 * (where its calls are) belongs to the enclosing function_definition.
 */
function widenDeclarator(r: RawDef): RawDef {
  if (r.node.type !== 'function_declarator') return r;
  let n: Node | null = r.node.parent;
  for (let i = 0; n && i < 4; i++, n = n.parent) if (n.type === 'function_definition') return { ...r, node: n };
  return r;
}

function buildDefinitions(rawDefs: RawDef[], languageId: string, aliasedLocals: Set<string>, source: string): BuiltDef[] {
  const raw = languageId === 'c' || languageId === 'cpp' ? rawDefs.map(widenDeclarator) : rawDefs;
  const endOf = (r: RawDef) => (r.end ?? r.node).endIndex;
  raw.sort((a, b) => a.node.startIndex - b.node.startIndex || endOf(b) - endOf(a));
  const out: BuiltDef[] = [];
  /**
   * Lexical qname → its definitions (one per anonymous scope, in order). Scopes are computed only when a
   * name repeats: walking up the tree for every definition costs as much as the rest of the extraction.
   */
  const byQname = new Map<string, Array<{ index: number; node: Node; enclosing: BuiltDef | undefined; scope?: number }>>();
  const scopesByQname = new Map<string, { byScope: Map<number, number>; counted: number }>();
  const implTypes = new Map<number, string | undefined>();
  const stack: number[] = [];
  for (const r of raw) {
    const name = r.name ?? r.nameNode.text;
    if (!name || name.length > 200 || /\s/.test(name)) continue;
    while (stack.length && out[stack[stack.length - 1]].endIndex <= r.node.startIndex) stack.pop();
    // The same node captured twice (e.g. an arrow-function const is both a function and a constant): keep the first.
    const top = stack.length ? out[stack[stack.length - 1]] : undefined;
    if (top && top.startIndex === r.node.startIndex && top.endIndex === endOf(r) && top.def.name === name) {
      if (top.def.kind === 'constant') top.def.kind = r.kind;
      continue;
    }
    const parent = stack.length ? stack[stack.length - 1] : -1;
    const prefix = qualifierPrefix(r, languageId, implTypes, source) ?? (parent >= 0 ? out[parent].def.qname : undefined);
    const lexical = prefix ? `${prefix}.${name}` : name;
    const start = r.node.startPosition.row + 1;
    const end = (r.end ?? r.node).endPosition.row + 1;
    const enclosingDef = parent >= 0 ? out[parent] : undefined;
    const same = byQname.get(lexical);
    let existing: number | undefined;
    if (same) {
      const scope = anonymousScopeOf(r.node, enclosingDef, languageId);
      // Each earlier definition's scope is computed once and kept by scope (one definition per scope: a
      // second one merges into it): comparing with every earlier one per definition was quadratic in a
      // name repeated across scopes (`(() => { function f() {} })();` × n: ~5 s per MiB).
      let scoped = scopesByQname.get(lexical);
      if (!scoped) scopesByQname.set(lexical, (scoped = { byScope: new Map(), counted: 0 }));
      for (; scoped.counted < same.length; scoped.counted++) {
        const o = same[scoped.counted];
        o.scope ??= anonymousScopeOf(o.node, o.enclosing, languageId);
        scoped.byScope.set(o.scope, o.index);
      }
      existing = scoped.byScope.get(scope);
    }
    if (existing !== undefined) {
      // Overloads, property getter/setter pairs, redeclarations in one scope: one symbol spanning all of them.
      const e = out[existing];
      e.def.start = Math.min(e.def.start, start);
      e.def.end = Math.max(e.def.end, end);
      e.endIndex = Math.max(e.endIndex, endOf(r));
      continue;
    }
    // The same name in another anonymous scope (`delay: …` in the options object of each test callback) is
    // another symbol: numbered by occurrence (`delay~2`), never one symbol spanning the file.
    const occurrence = (same?.length ?? 0) + 1;
    const qname = occurrence === 1 ? lexical : `${lexical}~${occurrence}`;
    const parentDef = parent >= 0 ? out[parent].def : undefined;
    const def: Definition = { name, qname, kind: r.kind, start, end, exported: isExported(r, languageId, parentDef, aliasedLocals, source, name), parent };
    const entry = { index: out.length, node: r.node, enclosing: enclosingDef };
    if (same) same.push(entry);
    else byQname.set(lexical, [entry]);
    out.push({ def, startIndex: r.node.startIndex, endIndex: endOf(r) });
    stack.push(out.length - 1);
  }
  return out;
}

/**
 * Nodes that open a nameless scope: a definition inside one is not reachable by its lexical name from
 * outside, so two same-named definitions in two of them are two symbols (not overloads). Object literals
 * and anonymous classes count for ECMAScript only (`object`/`class` mean other things elsewhere).
 */
const ANONYMOUS_SCOPES = new Set(['arrow_function', 'function_expression', 'generator_function', 'func_literal', 'closure_expression', 'lambda_expression', 'anonymous_function', 'lambda_literal', 'anonymous_function_creation_expression']);
const ECMA_ANONYMOUS_SCOPES = new Set(['object', 'class', 'function']);

/** Start of the innermost nameless scope between a definition and its enclosing definition (-1: none). */
function anonymousScopeOf(node: Node, enclosing: BuiltDef | undefined, languageId: string): number {
  const ecma = languageId === 'typescript' || languageId === 'tsx' || languageId === 'javascript';
  for (let n = node.parent; n; n = n.parent) {
    // Ancestors start no later than their children: at the enclosing definition's start we have reached it.
    if (enclosing && n.startIndex <= enclosing.startIndex) return -1;
    if (ANONYMOUS_SCOPES.has(n.type) || (ecma && ECMA_ANONYMOUS_SCOPES.has(n.type))) return n.startIndex;
  }
  return -1;
}

/** Go methods and Rust impl items are qualified by their receiver type, not by lexical nesting. */
function qualifierPrefix(r: RawDef, languageId: string, implTypes: Map<number, string | undefined>, source: string): string | undefined {
  if (languageId === 'go' && r.node.type === 'method_declaration') {
    const receiver = r.node.childForFieldName('receiver');
    const typeNode = receiver?.descendantsOfType('type_identifier')[0];
    return typeNode?.text;
  }
  if (languageId === 'rust') {
    for (let p = r.node.parent; p; p = p.parent) {
      if (p.type === 'impl_item') {
        // Per impl block, once (its type's text, generics and all, was copied for each of its methods).
        if (!implTypes.has(p.id)) {
          const t = p.childForFieldName('type');
          const lt = t ? source.indexOf('<', t.startIndex) : -1;
          implTypes.set(p.id, t ? source.slice(t.startIndex, lt >= 0 && lt < t.endIndex ? lt : t.endIndex) : undefined);
        }
        return implTypes.get(p.id);
      }
    }
  }
  return undefined;
}

function isExported(r: RawDef, languageId: string, parent: Definition | undefined, aliasedLocals: Set<string>, source: string, name: string): boolean {
  // The text between the definition's start and its name holds the modifiers (`pub`, `public`, `static`, …).
  const head = source.slice(r.node.startIndex, Math.max(r.node.startIndex, r.nameNode.startIndex));
  switch (languageId) {
    case 'typescript':
    case 'tsx':
    case 'javascript': {
      if (parent) return parent.exported && !/\b(private|protected)\b/.test(head) && !name.startsWith('#');
      for (let n: Node | null = r.node; n && n.type !== 'program'; n = n.parent) if (n.type === 'export_statement') return true;
      return aliasedLocals.has(name);
    }
    case 'python':
      return (!parent || parent.exported) && !(name.startsWith('_') && !name.endsWith('__'));
    case 'go':
      return /^[A-Z]/.test(name);
    case 'java':
    case 'csharp':
      return /\bpublic\b/.test(head) && (!parent || parent.exported);
    case 'php':
      return !/\b(private|protected)\b/.test(head) && (!parent || parent.exported);
    case 'dart':
      return !name.startsWith('_') && (!parent || parent.exported);
    case 'kotlin':
    case 'swift':
      return !/\b(private|fileprivate)\b/.test(head) && (!parent || parent.exported);
    case 'rust':
    case 'zig':
      return /\bpub\b/.test(head) && (!parent || parent.exported);
    case 'c':
    case 'cpp':
      return !parent && !/\bstatic\b/.test(head);
    default:
      return !parent || parent.exported;
  }
}

export type { ImportDecl };
