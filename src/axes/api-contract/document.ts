import * as path from 'node:path';
import type * as JsYaml from 'js-yaml';
import type * as Yaml from 'yaml';

/**
 * Loading API descriptions: parse one file (YAML or JSON), then every file it reaches through `$ref`,
 * so that the comparison afterwards is synchronous and pure. References are never expanded: a
 * `SpecDocuments` resolves one `$ref` at a time, on demand, which is what keeps cyclic and heavily
 * shared schemas linear in the size of the files.
 */

export type SpecFlavor = 'swagger-2.0' | 'openapi-3.0' | 'openapi-3.1';

/** A node of a loaded document and where it sits: the file and the JSON pointer inside it. */
export interface Loc {
  file: string;
  /** JSON pointer ("" is the document root). */
  ptr: string;
  node: unknown;
  /**
   * An empty schema standing in for one a side does not have (items missing on one side, …). All of them
   * are the same schema, so they share one identity when pairs are remembered: otherwise comparing a
   * recursive array with nothing would invent a new location (/items/items/…) at every level.
   */
  synthetic?: true;
}

export class SpecParseError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'SpecParseError';
  }
}

export type TextLoader = (filePath: string) => Promise<string | null>;

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const escapePointerSegment = (s: string): string => (s.includes('~') || s.includes('/') ? s.replace(/~/g, '~0').replace(/\//g, '~1') : s);
const unescapePointerSegment = (s: string): string => s.replace(/~1/g, '/').replace(/~0/g, '~');
export const childLoc = (loc: Loc, key: string | number, node?: unknown): Loc => ({
  file: loc.file,
  ptr: `${loc.ptr}/${escapePointerSegment(String(key))}`,
  node: node !== undefined ? node : isObject(loc.node) || Array.isArray(loc.node) ? (loc.node as Record<string, unknown>)[key as string] : undefined,
});

/** More aliases than any OpenAPI document needs: beyond it, the document goes to the parser that bounds them. */
const MAX_YAML_ALIASES = 1000;
const ALIAS_TOKEN = /(?:^|[\s[{,:-])\*[^\s,\]}]+/g;

/**
 * Parses one file's text. JSON goes through JSON.parse. YAML goes through js-yaml (core schema: YAML 1.2
 * scalars, no timestamps, no merge keys — what `yaml` reads by default), which parses 3–4 MB specs several
 * times faster than `yaml` and with far less memory, and whose errors name the line and column. `yaml` is
 * loaded only for a valid document with more aliases than any spec needs, which `yaml` bounds ("billion
 * laughs"). Never for invalid text: `yaml` keeps parsing past an error and records one per token, so a
 * spec of 64 KiB of `"` took it 1.9 s to word the error (and 256 KiB over 30 s), where js-yaml stops at
 * the first in 2 ms. Both parsers are loaded on first use, so a JSON-only run loads neither.
 */
export function parseSpecText(file: string, text: string): unknown {
  const trimmed = text.replace(/^\uFEFF/, '');
  if (file.toLowerCase().endsWith('.json')) {
    try {
      return JSON.parse(trimmed);
    } catch (err) {
      throw new SpecParseError(file, `invalid JSON: ${(err as Error).message}`);
    }
  }
  const jsYaml = require('js-yaml') as typeof JsYaml;
  let doc: unknown;
  try {
    doc = jsYaml.load(trimmed, { schema: jsYaml.CORE_SCHEMA, filename: file });
  } catch (err) {
    throw new SpecParseError(file, `invalid YAML: ${jsYamlReason(err as Error)}`);
  }
  if (aliasCount(trimmed) <= MAX_YAML_ALIASES) return doc;
  try {
    return slowYaml().parse(trimmed, { maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    throw new SpecParseError(file, `invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** js-yaml's reason and position ("bad indentation of a mapping entry (3:5)"), without its file name and excerpt. */
function jsYamlReason(err: Error): string {
  const e = err as Error & { reason?: string; mark?: { line: number; column: number } };
  if (e.reason && e.mark) return `${e.reason} at line ${e.mark.line + 1}, column ${e.mark.column + 1}`;
  return err.message.split('\n')[0];
}

const aliasCount = (text: string): number => (text.includes('*') ? (text.match(ALIAS_TOKEN)?.length ?? 0) : 0);
/**
 * Aliases need an anchor, and an anchor (`&name`) always follows whitespace, the start of a line or a flow
 * indicator: this pattern finds every real one (and some `&` in prose, which only costs the guard below).
 */
const ANCHOR_TOKEN = /(?:^|[\s[{,])&[^\s,\]}]/m;
const mayShareObjects = (file: string, text: string): boolean => !file.toLowerCase().endsWith('.json') && ANCHOR_TOKEN.test(text);

const slowYaml = () => require('yaml') as typeof Yaml;

/** Which flavour a root document is, or null when it is not an OpenAPI/Swagger document at all. */
export function detectFlavor(root: unknown): SpecFlavor | null {
  if (!isObject(root)) return null;
  if (typeof root.swagger === 'string' || typeof root.swagger === 'number') return String(root.swagger).startsWith('2') ? 'swagger-2.0' : null;
  if (typeof root.openapi === 'string') {
    if (root.openapi.startsWith('3.0')) return 'openapi-3.0';
    if (/^3\.[1-9]/.test(root.openapi)) return 'openapi-3.1';
  }
  return null;
}

/**
 * Every `$ref` string in a parsed tree, visiting each object once (YAML aliases can share or even cycle
 * objects, so the walk keeps a set of objects already seen).
 */
function collectRefs(root: unknown, mayShareObjects: boolean): Set<string> {
  const refs = new Set<string>();
  // JSON.parse never shares objects; only YAML aliases do. Skipping the set for JSON saves a set entry per
  // object of the document (millions for GitHub's description).
  const seen = mayShareObjects ? new Set<object>() : null;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (seen) {
      if (seen.has(v)) continue;
      seen.add(v);
    }
    if (Array.isArray(v)) {
      for (const item of v) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    const obj = v as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      const child = obj[k];
      if (k === '$ref' && typeof child === 'string') refs.add(child);
      else if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return refs;
}

const isExternalUrl = (ref: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(ref);

/** Resolves the file part of a reference relative to the referring file; null when it leaves the repository. */
function resolveRefFile(fromFile: string, filePart: string): string | null {
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), filePart));
  if (joined.startsWith('../') || joined === '..' || path.posix.isAbsolute(joined)) return null;
  return joined.replace(/^\.\//, '');
}

/** Bounds on what one spec may pull in (SPEC §16: sizes are bounded). */
export const MAX_SPEC_FILE_BYTES = 64 * 1024 * 1024;
export const MAX_SPEC_FILES = 1000;

export interface LoadedSpec {
  docs: SpecDocuments;
  flavor: SpecFlavor;
}

/**
 * Loads a spec and every file it references. Throws SpecParseError when the root or a referenced file
 * cannot be read or parsed; unresolvable pointers inside files are reported later, by the comparison.
 * `requireSpec: false` returns null for a parsable file that simply is not an OpenAPI document.
 */
export async function loadSpec(rootFile: string, load: TextLoader, opts: { requireSpec?: boolean } = {}): Promise<LoadedSpec | null> {
  const text = await load(rootFile);
  if (text === null) throw new SpecParseError(rootFile, 'file not found');
  if (text.length > MAX_SPEC_FILE_BYTES) throw new SpecParseError(rootFile, `file larger than ${MAX_SPEC_FILE_BYTES / 1024 / 1024} MiB`);
  // Only YAML aliases share objects in a parsed tree; a YAML file without any has none to guard against.
  const sharing = new Map<string, boolean>([[rootFile, mayShareObjects(rootFile, text)]]);
  const root = parseSpecText(rootFile, text);
  const flavor = detectFlavor(root);
  if (!flavor) {
    if (opts.requireSpec === false) return null;
    throw new SpecParseError(rootFile, 'not an OpenAPI 3.x or Swagger 2.0 document (no "openapi: 3.x" or "swagger: 2.0" at the top level)');
  }
  const docs = new Map<string, unknown>([[rootFile, root]]);
  const queue: string[] = [rootFile];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const ref of collectRefs(docs.get(file), sharing.get(file) === true)) {
      const filePart = ref.split('#')[0];
      if (filePart === '' || isExternalUrl(filePart)) continue;
      const target = resolveRefFile(file, decodeURIComponent(filePart));
      if (target === null) throw new SpecParseError(file, `$ref "${ref}" points outside the repository`);
      if (docs.has(target)) continue;
      if (docs.size >= MAX_SPEC_FILES) throw new SpecParseError(rootFile, `references more than ${MAX_SPEC_FILES} files`);
      const refText = await load(target);
      if (refText === null) throw new SpecParseError(file, `$ref "${ref}": referenced file ${target} not found`);
      if (refText.length > MAX_SPEC_FILE_BYTES) throw new SpecParseError(target, `file larger than ${MAX_SPEC_FILE_BYTES / 1024 / 1024} MiB`);
      sharing.set(target, mayShareObjects(target, refText));
      docs.set(target, parseSpecText(target, refText));
      queue.push(target);
    }
  }
  return { docs: new SpecDocuments(rootFile, docs, [...sharing.values()].some((shares) => shares)), flavor };
}

/** Parses a spec held entirely in memory (tests, fixtures): external refs must be in `files`. */
export async function loadSpecFromTexts(rootFile: string, files: Record<string, string>): Promise<LoadedSpec> {
  const loaded = await loadSpec(rootFile, async (f) => files[f] ?? null);
  return loaded!;
}

const MAX_REF_HOPS = 64;

/** The loaded files of one side of the comparison, with on-demand `$ref` resolution. */
export class SpecDocuments {
  /** Resolved references per referring file (no key strings to build on the hot path). */
  private readonly refCache = new Map<string, Map<string, Loc>>();
  /** Where a `$ref` node leads (the end of its chain), and the file it was read from. */
  private readonly derefCache = new Map<object, { file: string; target: Loc }>();
  /** References that could not be resolved, each as "file: $ref" (reported as a partial result). */
  readonly unresolved = new Set<string>();

  constructor(
    readonly rootFile: string,
    private readonly files: ReadonlyMap<string, unknown>,
    /**
     * Whether a parsed tree may hold one object at two places (YAML aliases). When not, every object has
     * one parent, and only `$ref`s lead to an object twice. Unknown means yes.
     */
    readonly sharesObjects = true,
  ) {}

  /** Every file loaded for this side: the spec and the files its `$ref`s reach. */
  get filePaths(): string[] {
    return [...this.files.keys()];
  }

  get root(): Loc {
    return { file: this.rootFile, ptr: '', node: this.files.get(this.rootFile) };
  }

  /**
   * Follows `$ref` chains until a non-reference node. An unresolvable or purely circular chain
   * (`A: {$ref: B}`, `B: {$ref: A}`) resolves to an empty node at the last location, recorded in
   * `unresolved`; it never loops.
   */
  deref(loc: Loc): Loc {
    const start = loc.node;
    if (!isObject(start) || typeof start.$ref !== 'string') return loc;
    // the same reference node is followed again and again (every pair, digest and view that reaches it):
    // its target is remembered per node, checked against the file it is read from (relative references)
    const known = this.derefCache.get(start);
    if (known !== undefined && known.file === loc.file) return known.target;
    const walked = this.chainEnd(loc);
    if ('end' in walked) {
      this.derefCache.set(start, { file: loc.file, target: walked.end });
      return walked.end;
    }
    if ('ref' in walked) this.unresolved.add(`${walked.at.file}: ${walked.ref}`);
    else this.unresolved.add(`${loc.file}${loc.ptr ? '#' + loc.ptr : ''}: $ref chain longer than ${MAX_REF_HOPS} hops (circular)`);
    return { ...walked.at, node: {} };
  }

  /** Walks the `$ref` chain from a reference node: where it ends, or where it stops (an unresolvable `ref`, or too many hops). */
  private chainEnd(loc: Loc): { end: Loc } | { at: Loc; ref: string } | { at: Loc } {
    let current = loc;
    for (let hop = 0; hop < MAX_REF_HOPS; hop++) {
      const ref = (current.node as { $ref: string }).$ref;
      const next = this.resolveRef(current.file, ref);
      if (!next) return { at: current, ref };
      current = next;
      if (!isObject(current.node) || typeof current.node.$ref !== 'string') return { end: current };
    }
    return { at: current };
  }

  /**
   * Where a `$ref` chain ends, like `deref`, but recording nothing: null when the chain is unresolvable or
   * circular (the caller then knows nothing about the node). Non-reference nodes are returned as they are.
   */
  follow(loc: Loc): Loc | null {
    const start = loc.node;
    if (!isObject(start) || typeof start.$ref !== 'string') return loc;
    const known = this.derefCache.get(start);
    if (known !== undefined && known.file === loc.file) return known.target;
    const walked = this.chainEnd(loc);
    return 'end' in walked ? walked.end : null;
  }

  private resolveRef(fromFile: string, ref: string): Loc | null {
    let perFile = this.refCache.get(fromFile);
    if (!perFile) {
      perFile = new Map();
      this.refCache.set(fromFile, perFile);
    }
    const cached = perFile.get(ref);
    if (cached) return cached;
    const hash = ref.indexOf('#');
    const filePart = hash === -1 ? ref : ref.slice(0, hash);
    const fragment = hash === -1 ? '' : ref.slice(hash + 1);
    if (isExternalUrl(filePart)) return null;
    const file = filePart === '' ? fromFile : resolveRefFile(fromFile, decodeURIComponent(filePart));
    if (file === null || !this.files.has(file)) return null;
    let pointer: string;
    try {
      pointer = decodeURIComponent(fragment);
    } catch {
      return null;
    }
    if (pointer !== '' && !pointer.startsWith('/')) return null; // anchors ($anchor / $id) are not supported
    let node: unknown = this.files.get(file);
    if (pointer !== '') {
      for (const raw of pointer.slice(1).split('/')) {
        const seg = unescapePointerSegment(raw);
        if (Array.isArray(node)) node = node[Number(seg)];
        else if (isObject(node) && Object.prototype.hasOwnProperty.call(node, seg)) node = node[seg];
        else return null;
      }
    }
    if (node === undefined) return null;
    const loc: Loc = { file, ptr: pointer, node };
    perFile.set(ref, loc);
    return loc;
  }
}

/** A pointer as shown in a change: "#/paths/..." for the spec file itself, "other.yaml#/..." for a referenced file. */
export function formatPointer(specFile: string, loc: Pick<Loc, 'file' | 'ptr'>): string {
  return `${loc.file === specFile ? '' : loc.file}#${loc.ptr}`;
}
