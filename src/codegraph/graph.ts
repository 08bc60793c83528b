import * as path from 'node:path';
import { BOUNDS, clipId } from '../events/catalogue/bounds';
import type { CheckerForm, Definition, FileFacts, ImportBinding, ImportDecl, Reference, ReferenceKind } from './facts';
import type { CommitIndex, IndexedFile, TsPathConfig } from './indexer';
import { LANGUAGES } from './languages/languages';
import { dartModulePath } from './languages/lang-dart';
import { swiftModuleOf } from './languages/lang-swift';
import { psr4Candidates } from './languages/lang-php';
import { zigModulePath } from './languages/lang-zig';
import { ModuleBoundaries } from './build-modules';

export interface SymbolInfo {
  id: string;
  path: string;
  def: Definition;
}

/** Who resolved an edge: the syntactic resolver of this file, or TypeScript's checker (type-edges.ts). */
export type EdgeProvenance = 'syntax' | 'checker';

export interface Edge {
  /** Enclosing symbol id of the reference, or the file path for top-level code. */
  from: string;
  fromFile: string;
  /** Resolved target symbol id. */
  to: string;
  toFile: string;
  kind: ReferenceKind;
  line: number;
  provenance: EdgeProvenance;
  /** Checker edges only: the field of `to` that was read (`to` owns a declaration that is no definition of its own). */
  member?: string;
  /**
   * Checker edges only: how the reference names its target. `binding`: a plain identifier (an import, a
   * `require`, a chain of re-exports, a local alias); `namespace`: a property of a module object
   * (`commander.program`, `ns.twice`); `receiver`: a property of a value whose type the checker inferred
   * (`event.respond()`, `this.parse()`).
   */
  form?: CheckerForm;
}


export interface EdgeStats {
  resolved: number;
  /** Of `resolved`, the edges only TypeScript's checker found. */
  checker: number;
  nameMatch: number;
  unknown: number;
  external: number;
}

/** `path#Qualified.name`; an id longer than the recorded bound is clipped with a hash of the whole (distinct, stable). */
export const symbolId = (file: string, qname: string): string => clipId(`${file}#${qname}`, BOUNDS.symbolId);

/** The resolved code graph of one commit, built from its cached per-blob facts. */
export class CodeGraph {
  readonly symbols = new Map<string, SymbolInfo>();
  readonly defsByFile = new Map<string, SymbolInfo[]>();
  /** Resolved edges only (they are the only ones allowed to merge cohorts). */
  readonly edges: Edge[] = [];
  /** Name-matched references: from → candidate target ids (capped), kept for reporting. */
  readonly nameMatches: Array<{ from: string; fromFile: string; name: string; candidates: string[] }> = [];
  readonly stats: EdgeStats = { resolved: 0, checker: 0, nameMatch: 0, unknown: 0, external: 0 };
  private readonly edgeKeys = new Set<string>();
  private readonly outgoing = new Map<string, Edge[]>();
  private readonly incoming = new Map<string, Edge[]>();
  private readonly byName = new Map<string, string[]>();
  private readonly exportMemo = new Map<string, string | null>();
  private readonly dirFiles = new Map<string, string[]>();
  private readonly goModules: Array<{ dir: string; module: string }> = [];
  /** `<package>.<Type>` → the files declaring it (one per Gradle module at most, in tree order). */
  private readonly javaTypes = new Map<string, string[]>();
  private readonly javaPackages = new Map<string, string[]>();
  /** Swift modules: SwiftPM target key → its files, and module name → key. */
  private readonly swiftModules = new Map<string, string[]>();
  private readonly swiftModuleNames = new Map<string, string>();
  /** C# namespace → its files. */
  private readonly csNamespaces = new Map<string, string[]>();
  /** C# projects (.csproj) and Gradle modules: which files see which (build-modules.ts). */
  private readonly csProjects: ModuleBoundaries;
  private readonly gradleModules: ModuleBoundaries;
  /**
   * Every symbol id is its plain `path#qname` (none clipped, no `#` in a qualified name): then the id of
   * `(file, name)` can only be a definition of `file` named `name`, which lets `firstTopLevel` use an index.
   */
  private plainIds = true;
  private readonly topLevelIndexes = new Map<string[], TopLevelIndex>();

  constructor(readonly index: CommitIndex) {
    this.goModules = [...index.goModules].sort((a, b) => b.module.length - a.module.length);
    this.csProjects = new ModuleBoundaries(index.csProjects ?? []);
    this.gradleModules = new ModuleBoundaries(index.gradleModules ?? []);
    for (const file of index.files.values()) {
      const infos: SymbolInfo[] = [];
      for (const def of file.facts.defs) {
        const info = { id: symbolId(file.path, def.qname), path: file.path, def };
        if (def.qname.includes('#') || info.id !== `${file.path}#${def.qname}`) this.plainIds = false;
        infos.push(info);
        this.symbols.set(info.id, info);
        const list = this.byName.get(def.name);
        if (list) list.push(info.id);
        else this.byName.set(def.name, [info.id]);
      }
      this.defsByFile.set(file.path, infos);
      const dir = path.posix.dirname(file.path);
      const siblings = this.dirFiles.get(dir);
      if (siblings) siblings.push(file.path);
      else this.dirFiles.set(dir, [file.path]);
      if (file.language === 'java' && file.facts.packageName) {
        const cls = path.posix.basename(file.path, '.java');
        this.addJavaType(`${file.facts.packageName}.${cls}`, file.path);
        const pkg = this.javaPackages.get(file.facts.packageName);
        if (pkg) pkg.push(file.path);
        else this.javaPackages.set(file.facts.packageName, [file.path]);
      }
      if (file.language === 'kotlin') this.addKotlinFile(file, infos);
      if (file.language === 'csharp') {
        const ns = file.facts.packageName ?? '';
        const files = this.csNamespaces.get(ns);
        if (files) files.push(file.path);
        else this.csNamespaces.set(ns, [file.path]);
      }
      if (file.language === 'swift') {
        const [key, name] = swiftModuleOf(file.path);
        const files = this.swiftModules.get(key);
        if (files) files.push(file.path);
        else this.swiftModules.set(key, [file.path]);
        if (name && !this.swiftModuleNames.has(name)) this.swiftModuleNames.set(name, key);
      }
    }
    for (const file of index.files.values()) this.resolveFile(file);
  }

  /**
   * Kotlin shares Java's package tables (the two interoperate within a package): every top-level
   * declaration is importable as `<package>.<name>`, whatever the file is called.
   */
  private addKotlinFile(file: IndexedFile, infos: SymbolInfo[]): void {
    const pkgName = file.facts.packageName ?? '';
    const pkg = this.javaPackages.get(pkgName);
    if (pkg) pkg.push(file.path);
    else this.javaPackages.set(pkgName, [file.path]);
    for (const s of infos) {
      const key = pkgName ? `${pkgName}.${s.def.name}` : s.def.name;
      if (s.def.parent === -1) this.addJavaType(key, file.path);
    }
  }

  private addJavaType(key: string, file: string): void {
    const files = this.javaTypes.get(key);
    if (!files) this.javaTypes.set(key, [file]);
    else if (!files.includes(file)) files.push(file);
  }

  /**
   * The module boundaries a file's lookups stay within: Gradle modules for Kotlin/Java, projects for C#;
   * a target `<prefix>:<module key>\0<name>` carries the requesting module so memoized lookups stay per module.
   */
  private boundariesOf(language: string): ModuleBoundaries | undefined {
    if (language === 'kotlin' || language === 'java') return this.gradleModules.size ? this.gradleModules : undefined;
    if (language === 'csharp') return this.csProjects.size ? this.csProjects : undefined;
    return undefined;
  }

  /** True when code of module `fromKey` may bind `s`: same module, or a visible one (C#: only `public` types cross a project). */
  private visibleSymbol(b: ModuleBoundaries | undefined, fromKey: string, s: SymbolInfo, language: string): boolean {
    if (!b || !b.sees(fromKey, s.path)) return !b;
    return language !== 'csharp' || fromKey === '' || b.moduleOf(s.path) === fromKey || s.def.exported;
  }

  private splitTarget(rest: string): [fromKey: string | undefined, name: string] {
    const cut = rest.indexOf('\0');
    return cut < 0 ? [undefined, rest] : [rest.slice(0, cut), rest.slice(cut + 1)];
  }

  outgoingOf(from: string): Edge[] {
    return this.outgoing.get(from) ?? [];
  }

  incomingOf(to: string): Edge[] {
    return this.incoming.get(to) ?? [];
  }

  /** Innermost definition of `file` containing `line`. */
  definitionAt(file: string, line: number): SymbolInfo | undefined {
    let best: SymbolInfo | undefined;
    for (const s of this.defsByFile.get(file) ?? []) {
      if (s.def.start <= line && line <= s.def.end && (!best || s.def.end - s.def.start <= best.def.end - best.def.start)) best = s;
    }
    return best;
  }

  /** True when some resolved edge goes from `from` (or a symbol nested in it) to `to` (or a symbol nested in it). */
  hasResolvedEdge(from: string, to: string): boolean {
    const [fromFile] = from.split('#');
    for (const e of this.edges) {
      if (e.fromFile !== fromFile) continue;
      if ((e.from === from || e.from.startsWith(`${from}.`)) && (e.to === to || e.to.startsWith(`${to}.`))) return true;
    }
    return false;
  }

  /** Adds an edge TypeScript's checker resolved; false when the graph already has that (from, to) pair. */
  addCheckerEdge(e: Edge): boolean {
    if (this.edgeKeys.has(`${e.from}\0${e.to}`) || !this.symbols.has(e.to)) return false;
    this.addEdge(e);
    this.stats.checker++;
    return true;
  }

  private addEdge(e: Edge): void {
    this.edges.push(e);
    this.edgeKeys.add(`${e.from}\0${e.to}`);
    this.stats.resolved++;
    const o = this.outgoing.get(e.from);
    if (o) o.push(e);
    else this.outgoing.set(e.from, [e]);
    const i = this.incoming.get(e.to);
    if (i) i.push(e);
    else this.incoming.set(e.to, [e]);
  }

  private resolveFile(file: IndexedFile): void {
    const facts = file.facts;
    const bindings = new Map<string, { decl: ImportDecl; imported: string }>();
    for (const decl of facts.imports) if (!decl.reexport) for (const b of decl.bindings) bindings.set(b.local, { decl, imported: b.imported });
    const stars = facts.imports.filter((d) => d.star && !d.reexport);
    const infos = this.defsByFile.get(file.path) ?? [];
    const scope = new LocalScope(infos);
    const elsewhere = new Map<string, string[]>();
    const seen = new Set<string>();
    for (const ref of facts.refs) {
      const from = ref.from >= 0 ? infos[ref.from]?.id ?? file.path : file.path;
      const target = this.resolveReference(file, ref, bindings, stars, infos, scope);
      if (target === 'external') {
        this.stats.external++;
        continue;
      }
      if (typeof target === 'string') {
        if (target === from) continue; // recursion is not a dependency
        const key = `${from}\0${target}`;
        if (seen.has(key)) continue;
        seen.add(key);
        this.addEdge({ from, fromFile: file.path, to: target, toFile: this.symbols.get(target)!.path, kind: ref.kind, line: ref.line, provenance: 'syntax' });
        continue;
      }
      let candidates = elsewhere.get(ref.name);
      if (!candidates) elsewhere.set(ref.name, (candidates = this.definedElsewhere(ref.name, file.path, 5)));
      if (candidates.length) {
        this.stats.nameMatch++;
        this.nameMatches.push({ from, fromFile: file.path, name: ref.name, candidates: candidates.slice() });
      } else this.stats.unknown++;
    }
  }

  /**
   * The first `limit` ids (in `byName` order) of definitions named `name` whose id is not under `file`'s:
   * the scan stops there, so a name defined many times costs only the file's own definitions of it.
   */
  private definedElsewhere(name: string, file: string, limit: number): string[] {
    const found: string[] = [];
    for (const id of this.byName.get(name) ?? []) {
      if (id.startsWith(`${file}#`)) continue;
      found.push(id);
      if (found.length === limit) break;
    }
    return found;
  }

  /** A symbol id, 'external' (bound to a module outside the repo) or undefined (not resolvable). */
  private resolveReference(
    file: IndexedFile,
    ref: Reference,
    bindings: Map<string, { decl: ImportDecl; imported: string }>,
    stars: ImportDecl[],
    infos: SymbolInfo[],
    scope: LocalScope,
  ): string | 'external' | undefined {
    const q = ref.qualifier;
    if (q === undefined) {
      const b = bindings.get(ref.name);
      if (b) {
        const target = this.resolveModule(file, b.decl.source);
        if (!target) return 'external';
        // A required module used as a value is its `module.exports` (the `default` of imports.ts).
        if (b.imported === '*') return this.namespaceSelf(target, ref.name) ?? (b.decl.require ? this.resolveExport(target, 'default', 0) : undefined);
        return this.resolveExport(target, b.imported, 0);
      }
      const local = scope.topLevel(ref.name) ?? (ref.from >= 0 ? scope.visibleFrom(ref.name, ref.from) : undefined);
      if (local) return local.id;
      const pkgLocal = this.packageScope(file, ref.name);
      if (pkgLocal) return pkgLocal;
      for (const decl of stars) {
        const target = this.resolveModule(file, decl.source);
        if (!target) continue;
        const found = this.resolveExport(target, ref.name, 0);
        if (found) return found;
      }
      return undefined;
    }
    if (q === 'this' || q === 'self' || q === 'cls' || q === 'super') {
      for (let i = ref.from; i >= 0; i = infos[i].def.parent) {
        const owner = infos[i];
        if (!['class', 'interface', 'module', 'type', 'enum'].includes(owner.def.kind)) continue;
        const member = this.symbols.get(`${owner.id}.${ref.name}`);
        return member?.id;
      }
      return undefined;
    }
    const head = q.split(/\.|::/)[0];
    const b = bindings.get(q) ?? bindings.get(head);
    if (b) {
      // Rust `use crate::calc;` binds a module: `calc::g()` looks inside it.
      const asModule = file.language === 'rust' && b.imported !== '*' ? this.resolveModule(file, `${b.decl.source}::${b.imported}`) : undefined;
      if (asModule) return this.resolveExport(asModule, ref.name, 0);
      const target = this.resolveModule(file, b.decl.source);
      if (!target) return 'external';
      if (b.imported === '*') {
        const ownType = this.namespaceSelf(target, q);
        if (ownType) return this.symbols.get(`${ownType}.${ref.name}`)?.id ?? ownType;
        const exported = this.resolveExport(target, ref.name, 0);
        if (exported || !b.decl.require) return exported;
        // `x.name` on `module.exports = obj`: a member of obj when it has one, else obj itself.
        const value = this.resolveExport(target, 'default', 0);
        return value ? (this.symbols.get(`${value}.${ref.name}`)?.id ?? value) : undefined;
      }
      const owner = this.resolveExport(target, b.imported, 0);
      if (!owner) return undefined;
      return this.symbols.get(`${owner}.${ref.name}`)?.id ?? owner;
    }
    if (file.language === 'rust' && q.includes('::')) {
      const target = this.resolveModule(file, q);
      if (target) return this.resolveExport(target, ref.name, 0);
    }
    const ownerLocal = scope.topLevel(q) ?? (this.packageScope(file, q) ? this.symbols.get(this.packageScope(file, q)!) : undefined);
    if (ownerLocal) return this.symbols.get(`${ownerLocal.id}.${ref.name}`)?.id;
    // `Type.member` where Type comes in through an on-demand import (`import a.b.*`, `from x import *`).
    for (const decl of stars) {
      const target = this.resolveModule(file, decl.source);
      const owner = target ? this.resolveExport(target, q, 0) : undefined;
      if (owner) return this.symbols.get(`${owner}.${ref.name}`)?.id ?? owner;
    }
    return undefined;
  }

  /** Java `import a.b.C` binds C to the file; a bare use of C means its top-level type. */
  private namespaceSelf(target: string, name: string): string | undefined {
    if (target.startsWith('dir:') || target.startsWith('pkg:') || target.startsWith('swift:') || target.startsWith('csns:')) return undefined;
    return this.symbols.get(symbolId(target, name))?.id;
  }

  /** Go package scope and Java package-private scope: definitions of sibling files. */
  private packageScope(file: IndexedFile, name: string): string | undefined {
    if (file.language === 'kotlin') return this.topLevelIn(this.javaPackages.get(file.facts.packageName ?? '') ?? [], name, file.path, this.fileFilter(file));
    if (file.language === 'swift') return this.topLevelIn(this.swiftModules.get(swiftModuleOf(file.path)[0]) ?? [], name, file.path);
    if (file.language === 'csharp') {
      // The file's namespace, then each enclosing one (`A.B` sees `A`'s types).
      const parts = (file.facts.packageName ?? '').split('.').filter(Boolean);
      for (let i = parts.length; i >= 0; i--) {
        const found = this.topLevelIn(this.csNamespaces.get(parts.slice(0, i).join('.')) ?? [], name, file.path, this.fileFilter(file));
        if (found) return found;
      }
      return undefined;
    }
    if (file.language === 'php') {
      const ns = file.facts.packageName;
      for (const candidate of psr4Candidates(ns ? `${ns}\\${name}` : name, this.index.psr4Roots ?? [])) {
        const s = candidate !== file.path ? this.symbols.get(symbolId(candidate, name)) : undefined;
        if (s && s.def.parent === -1) return s.id;
      }
      return undefined;
    }
    if (file.language !== 'go' && file.language !== 'java') return undefined;
    return this.topLevelIn(this.dirFiles.get(path.posix.dirname(file.path)) ?? [], name, file.path);
  }

  private topLevelIn(files: string[], name: string, except?: string, visible?: (s: SymbolInfo) => boolean): string | undefined {
    return this.firstTopLevel(files, name, (f, s) => f !== except && (!visible || visible(s)));
  }

  /**
   * The top-level symbol `name` of the first of `files` that `accept`s it. A package's files are indexed
   * by their top-level names once, so that each reference costs its matches rather than the package's
   * size; a short list, or a lookup the index cannot answer exactly (see `plainIds`), is scanned.
   */
  private firstTopLevel(files: string[], name: string, accept: (file: string, s: SymbolInfo) => boolean): string | undefined {
    if (files.length > 8 && this.plainIds && !name.includes('#')) {
      let index = this.topLevelIndexes.get(files);
      if (!index) this.topLevelIndexes.set(files, (index = this.topLevelIndex(files)));
      if (index.longestPath + 1 + name.length <= BOUNDS.symbolId) {
        for (const { file, s } of index.byName.get(name) ?? []) if (accept(file, s)) return s.id;
        return undefined;
      }
    }
    for (const f of files) {
      const s = this.symbols.get(symbolId(f, name));
      if (s && s.def.parent === -1 && accept(f, s)) return s.id;
    }
    return undefined;
  }

  /** Per qualified name, in `files` order, each file whose symbol of that id is top-level (what the scan would find). */
  private topLevelIndex(files: string[]): TopLevelIndex {
    const index: TopLevelIndex = { byName: new Map(), longestPath: 0 };
    for (const file of files) {
      index.longestPath = Math.max(index.longestPath, file.length);
      for (const { def } of this.defsByFile.get(file) ?? []) {
        const s = this.symbols.get(symbolId(file, def.qname));
        if (!s || s.def.parent !== -1) continue;
        const list = index.byName.get(def.qname);
        if (!list) index.byName.set(def.qname, [{ file, s }]);
        else if (list[list.length - 1].file !== file) list.push({ file, s });
      }
    }
    return index;
  }

  /** The visibility test of `file`'s module boundaries (undefined: none apply). */
  private fileFilter(file: IndexedFile): ((s: SymbolInfo) => boolean) | undefined {
    const b = this.boundariesOf(file.language);
    if (!b) return undefined;
    const key = b.moduleOf(file.path);
    return (s) => this.visibleSymbol(b, key, s, file.language);
  }

  private keyFilter(language: string, fromKey: string | undefined): ((s: SymbolInfo) => boolean) | undefined {
    const b = this.boundariesOf(language);
    if (!b || fromKey === undefined) return undefined;
    return (s) => this.visibleSymbol(b, fromKey, s, language);
  }

  /** Exported symbol `name` of module `target` (a file path, or `dir:<path>` for a Go package), following re-exports. */
  resolveExport(target: string, name: string, depth: number): string | undefined {
    const memoKey = `${target}\0${name}`;
    const memo = this.exportMemo.get(memoKey);
    if (memo !== undefined) return memo ?? undefined;
    if (depth > 12) return undefined;
    this.exportMemo.set(memoKey, null); // cycle guard
    const found = this.lookupExport(target, name, depth);
    this.exportMemo.set(memoKey, found ?? null);
    return found;
  }

  private lookupExport(target: string, name: string, depth: number): string | undefined {
    if (target.startsWith('dir:')) return this.firstTopLevel(this.dirFiles.get(target.slice(4)) ?? [], name, (f) => f.endsWith('.go'));
    if (target.startsWith('csns:')) {
      const [fromKey, ns] = this.splitTarget(target.slice(5));
      return this.topLevelIn(this.csNamespaces.get(ns) ?? [], name, undefined, this.keyFilter('csharp', fromKey));
    }
    if (target.startsWith('swift:')) return this.topLevelIn(this.swiftModules.get(target.slice(6)) ?? [], name);
    if (target.startsWith('pkg:')) {
      const [fromKey, pkg] = this.splitTarget(target.slice(4));
      return this.topLevelIn(this.javaPackages.get(pkg) ?? [], name, undefined, this.keyFilter('kotlin', fromKey));
    }
    const file = this.index.files.get(target);
    if (!file) return undefined;
    // (Not named `exports`: compiled to CommonJS, that name would hide the module's own exports, symbolId.)
    const table = this.moduleExports(file);
    const local = table.aliasOf.get(name) ?? name;
    const own = this.symbols.get(symbolId(target, local));
    if (own && own.def.parent === -1) return own.id;
    // ES modules re-export only what `export … from` / `export { imported }` names; Python modules expose their imports.
    const importsExported = file.language === 'python' || file.language === 'rust' || local !== name || table.aliasedLocals.has(local);
    const candidates = inDeclarationOrder(table.reexportsOf.get(name) ?? [], (importsExported && table.importsOf.get(local)) || []);
    for (const { decl, binding } of candidates) {
      if (binding.imported === '*') continue;
      const next = this.resolveModule(file, decl.source);
      if (next) {
        const found = this.resolveExport(next, binding.imported, depth + 1);
        if (found) return found;
      }
    }
    for (const decl of table.starExports) {
      const next = this.resolveModule(file, decl.source);
      if (!next) continue;
      const found = this.resolveExport(next, name, depth + 1);
      if (found) return found;
    }
    return undefined;
  }

  private readonly moduleExportsMemo = new Map<string, ModuleExports>();

  /**
   * `file`'s export aliases and import bindings indexed once, for `lookupExport`, which runs once per
   * (module, name): scanning them on each call made a module's lookups cost names × imports × aliases.
   */
  private moduleExports(file: IndexedFile): ModuleExports {
    let table = this.moduleExportsMemo.get(file.path);
    if (!table) this.moduleExportsMemo.set(file.path, (table = new ModuleExports(file.facts, file.language)));
    return table;
  }

  private readonly moduleMemo = new Map<string, string | null>();

  /** Resolves a module specifier to an indexed file (or `dir:<path>` for a Go package); undefined when outside the repo. */
  resolveModule(file: IndexedFile, source: string): string | undefined {
    const key = `${file.path}\0${source}`;
    const memo = this.moduleMemo.get(key);
    if (memo !== undefined) return memo ?? undefined;
    const found = this.lookupModule(file, source);
    this.moduleMemo.set(key, found ?? null);
    return found;
  }

  private has(p: string): boolean {
    return this.index.files.has(p);
  }

  private probe(base: string, extensions: string[], indexNames: string[]): string | undefined {
    const norm = path.posix.normalize(base);
    if (norm.startsWith('..')) return undefined;
    if (this.has(norm)) return norm;
    // `require('..')` from a folder's child: the root's index (`./index` is `index`).
    if (norm === '.' || norm === './') {
      for (const idx of indexNames) for (const ext of extensions) if (this.has(`${idx}${ext}`)) return `${idx}${ext}`;
      return undefined;
    }
    // TypeScript's ESM style imports `./x.js` meaning `./x.ts`.
    const stripped = norm.replace(/\.(js|jsx|mjs|cjs)$/, '');
    for (const ext of extensions) if (this.has(stripped + ext)) return stripped + ext;
    for (const idx of indexNames) for (const ext of extensions) if (this.has(`${norm}/${idx}${ext}`)) return `${norm}/${idx}${ext}`;
    return undefined;
  }

  private readonly configOfFile = new Map<string, TsPathConfig | null>();
  private readonly pathPatterns = new Map<TsPathConfig, PathPatterns>();

  /** The nearest tsconfig above `filePath` (the first listed of equally near ones). */
  private tsPathConfigOf(filePath: string): TsPathConfig | undefined {
    let config = this.configOfFile.get(filePath);
    if (config === undefined) {
      config = this.index.tsPathConfigs.filter((c) => c.dir === '' || filePath.startsWith(`${c.dir}/`)).sort((a, b) => b.dir.length - a.dir.length)[0] ?? null;
      this.configOfFile.set(filePath, config);
    }
    return config ?? undefined;
  }

  /**
   * Non-relative specifiers through the nearest tsconfig's `paths`, then its `baseUrl`; package imports stay external.
   * The patterns are tried in the order the tsconfig lists them, the first whose targets exist winning; a
   * specifier's answer depends only on the tsconfig and the extensions, so it is kept for every file sharing them.
   */
  private mappedModule(filePath: string, source: string, extensions: string[]): string | undefined {
    const config = this.tsPathConfigOf(filePath);
    if (!config) return undefined;
    let patterns = this.pathPatterns.get(config);
    if (!patterns) this.pathPatterns.set(config, (patterns = new PathPatterns(config.paths)));
    const key = `${extensions.join('|')}\0${source}`;
    const memo = patterns.resolved.get(key);
    if (memo !== undefined) return memo ?? undefined;
    const found = this.mapThroughPaths(config, patterns, source, extensions);
    patterns.resolved.set(key, found ?? null);
    return found;
  }

  private mapThroughPaths(config: TsPathConfig, patterns: PathPatterns, source: string, extensions: string[]): string | undefined {
    for (const { at, captured } of patterns.matching(source)) {
      for (const t of config.paths[at].targets) {
        const found = this.probe(t.replace('*', captured), extensions, ['index']);
        if (found) return found;
      }
    }
    return config.baseUrl !== undefined ? this.probe(config.baseUrl ? `${config.baseUrl}/${source}` : source, extensions, ['index']) : undefined;
  }

  /**
   * Rust module paths: `crate::a::b` from the crate root (the nearest directory up with lib.rs or
   * main.rs), `self::`/`super::` from the file's own module, `a::b` (2018 uniform paths) as `self::a::b`.
   * Each segment is `<dir>/<seg>.rs` or `<dir>/<seg>/mod.rs`; undefined when a segment is not a module.
   */
  private rustModule(filePath: string, source: string): string | undefined {
    const segs = source.split('::').filter(Boolean);
    const dir = path.posix.dirname(filePath);
    const base = path.posix.basename(filePath, '.rs');
    const ownDir = ['mod', 'lib', 'main'].includes(base) ? dir : `${dir}/${base}`;
    let at: string;
    let file: string | undefined;
    if (segs[0] === 'crate') {
      let d = dir;
      while (d !== '.' && d !== '' && !this.has(`${d}/lib.rs`) && !this.has(`${d}/main.rs`)) d = path.posix.dirname(d);
      at = d;
      file = this.has(`${d}/lib.rs`) ? `${d}/lib.rs` : this.has(`${d}/main.rs`) ? `${d}/main.rs` : undefined;
      segs.shift();
    } else {
      at = ownDir;
      file = filePath;
      while (segs[0] === 'self' || segs[0] === 'super') {
        if (segs.shift() === 'super') {
          at = path.posix.dirname(at);
          file = this.probe(at, ['.rs'], ['mod']) ?? (this.has(`${at}/lib.rs`) ? `${at}/lib.rs` : undefined);
        }
      }
    }
    for (const seg of segs) {
      file = this.probe(`${at}/${seg}`, ['.rs'], ['mod']);
      if (!file) return undefined;
      at = `${at}/${seg}`;
    }
    return file;
  }

  private lookupModule(file: IndexedFile, source: string): string | undefined {
    const spec = LANGUAGES[file.language];
    const dir = path.posix.dirname(file.path);
    switch (spec.imports) {
      case 'ecmascript':
        if (!source.startsWith('.')) return this.mappedModule(file.path, source, spec.moduleExtensions);
        return this.probe(path.posix.join(dir, source), spec.moduleExtensions, ['index']);
      case 'ruby':
        return this.probe(path.posix.join(dir, source), spec.moduleExtensions, []);
      case 'include':
        return this.probe(path.posix.join(dir, source), [], []) ?? this.probe(source, [], []);
      case 'python': {
        const dots = /^\.*/.exec(source)![0].length;
        const rest = source.slice(dots).split('.').filter(Boolean).join('/');
        if (dots > 0) {
          let base = dir;
          for (let i = 1; i < dots; i++) base = path.posix.dirname(base);
          return this.probe(rest ? path.posix.join(base, rest) : base, ['.py', '.pyi'], ['__init__']) ?? (rest ? undefined : this.probe(`${base}/__init__`, ['.py'], []));
        }
        const roots = new Set<string>(['', 'src', 'lib']);
        for (let d = dir; d !== '.' && d !== ''; d = path.posix.dirname(d)) roots.add(d);
        for (const root of roots) {
          const found = this.probe(root ? `${root}/${rest}` : rest, ['.py', '.pyi'], ['__init__']);
          if (found) return found;
        }
        return undefined;
      }
      case 'go':
        for (const m of this.goModules) {
          if (source === m.module || source.startsWith(`${m.module}/`)) {
            const rel = source.slice(m.module.length).replace(/^\//, '');
            const target = path.posix.join(m.dir || '.', rel);
            const norm = target === '.' ? '.' : path.posix.normalize(target);
            return this.dirFiles.has(norm) ? `dir:${norm}` : undefined;
          }
        }
        return undefined;
      case 'dart': {
        const p = dartModulePath(file.path, source, this.index.dartPackages ?? []);
        return p && this.has(p) ? p : undefined;
      }
      case 'csharp': {
        if (!this.csNamespaces.has(source)) return undefined;
        const b = this.boundariesOf('csharp');
        return b ? `csns:${b.moduleOf(file.path)}\0${source}` : `csns:${source}`;
      }
      case 'php':
        return psr4Candidates(source, this.index.psr4Roots ?? []).find((p) => this.has(p));
      case 'zig': {
        const p = zigModulePath(file.path, source);
        return p && this.has(p) ? p : undefined;
      }
      case 'swift': {
        const key = this.swiftModuleNames.get(source);
        return key !== undefined ? `swift:${key}` : undefined;
      }
      case 'kotlin':
      case 'java': {
        // A type (`import a.b.C`) of a module the file sees, else a package (`import a.b.*`).
        const b = this.boundariesOf(file.language);
        const from = b?.moduleOf(file.path);
        const types = this.javaTypes.get(source);
        const type = b ? types?.find((f) => b.sees(from!, f)) : types?.[0];
        if (type) return type;
        if (types?.length && b) return undefined;
        if (!this.javaPackages.has(source)) return undefined;
        return b ? `pkg:${from}\0${source}` : `pkg:${source}`;
      }
      case 'rust':
        return this.rustModule(file.path, source);
      default:
        return undefined;
    }
  }
}

/**
 * A file's definitions indexed by name once, so that resolving each of its references is a map lookup
 * rather than a scan of the whole file: per name, the position in `infos` of the first definition under
 * each parent (-1: top level).
 */
class LocalScope {
  private readonly firstByParent = new Map<string, Map<number, number>>();

  constructor(private readonly infos: SymbolInfo[]) {
    infos.forEach((s, at) => {
      let byParent = this.firstByParent.get(s.def.name);
      if (!byParent) this.firstByParent.set(s.def.name, (byParent = new Map()));
      if (!byParent.has(s.def.parent)) byParent.set(s.def.parent, at);
    });
  }

  /** The file's first top-level definition named `name`. */
  topLevel(name: string): SymbolInfo | undefined {
    const at = this.firstByParent.get(name)?.get(-1);
    return at === undefined ? undefined : this.infos[at];
  }

  /**
   * The file's first definition named `name` declared beside the definition at `from` or beside one of its
   * ancestors (what code nested there sees): the earliest over those parents of the first definition under each.
   */
  visibleFrom(name: string, from: number): SymbolInfo | undefined {
    const byParent = this.firstByParent.get(name);
    if (!byParent) return undefined;
    let first: number | undefined;
    for (let i = from; i >= 0; i = this.infos[i].def.parent) {
      const at = byParent.get(this.infos[i].def.parent);
      if (at !== undefined && (first === undefined || at < first)) first = at;
    }
    return first === undefined ? undefined : this.infos[first];
  }
}

/** `firstTopLevel`'s index of a list of files: top-level name → the files defining it, with the symbol. */
interface TopLevelIndex {
  byName: Map<string, Array<{ file: string; s: SymbolInfo }>>;
  longestPath: number;
}

/** An import binding that may carry a module's export onward, with the position of its declaration. */
interface Forwarded {
  at: number;
  decl: ImportDecl;
  binding: ImportBinding;
}

/** What `lookupExport` asks of one module's facts, indexed once (each keeps the facts' order). */
class ModuleExports {
  /** `export { local as exported }`: the local of the first alias per exported name. */
  readonly aliasOf = new Map<string, string>();
  /** Every local some alias exports. */
  readonly aliasedLocals = new Set<string>();
  /** Per local name, the `export … from` declarations binding it, each with its first binding of that name. */
  readonly reexportsOf = new Map<string, Forwarded[]>();
  /** The same for plain imports (exported when aliased, and by Python and Rust modules). */
  readonly importsOf = new Map<string, Forwarded[]>();
  /** Declarations whose every export the module exports too (`export *`; Python, Rust, C star imports). */
  readonly starExports: ImportDecl[];

  constructor(facts: FileFacts, language: string) {
    for (const [exported, local] of facts.exportAliases) {
      if (!this.aliasOf.has(exported)) this.aliasOf.set(exported, local);
      this.aliasedLocals.add(local);
    }
    facts.imports.forEach((decl, at) => {
      const byLocal = decl.reexport ? this.reexportsOf : this.importsOf;
      const bound = new Set<string>();
      for (const binding of decl.bindings) {
        if (bound.has(binding.local)) continue;
        bound.add(binding.local);
        const list = byLocal.get(binding.local);
        if (list) list.push({ at, decl, binding });
        else byLocal.set(binding.local, [{ at, decl, binding }]);
      }
    });
    this.starExports = facts.imports.filter((decl) => decl.star && (decl.reexport || ['python', 'rust', 'c', 'cpp'].includes(language)));
  }
}

/** Two lists of forwarded bindings, each in declaration order, merged into one in declaration order. */
function inDeclarationOrder(a: Forwarded[], b: Forwarded[]): Forwarded[] {
  if (!b.length) return a;
  if (!a.length) return b;
  const merged: Forwarded[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) merged.push(j >= b.length || (i < a.length && a[i].at < b[j].at) ? a[i++] : b[j++]);
  return merged;
}

/**
 * A tsconfig's `paths` indexed once: exact patterns by their text, wildcard ones by the text before their `*`,
 * so a specifier looks up only the groups of its own prefixes (one per distinct prefix length) instead of
 * testing every pattern. Also keeps each specifier's answer (`resolved`, filled by the graph).
 */
class PathPatterns {
  private readonly exact = new Map<string, number[]>();
  private readonly byPrefix = new Map<string, number[]>();
  /** The distinct lengths of the wildcard patterns' prefixes, ascending. */
  private readonly prefixLengths: number[];
  readonly resolved = new Map<string, string | null>();

  constructor(private readonly paths: TsPathConfig['paths']) {
    const lengths = new Set<number>();
    paths.forEach(({ pattern }, at) => {
      const star = pattern.indexOf('*');
      const key = star < 0 ? pattern : pattern.slice(0, star);
      const groups = star < 0 ? this.exact : this.byPrefix;
      const group = groups.get(key);
      if (group) group.push(at);
      else groups.set(key, [at]);
      if (star >= 0) lengths.add(star);
    });
    this.prefixLengths = [...lengths].sort((a, b) => a - b);
  }

  /** The patterns `source` matches, in the tsconfig's order, each with what its `*` captured ('' for an exact one). */
  matching(source: string): Array<{ at: number; captured: string }> {
    const found: Array<{ at: number; captured: string }> = [];
    for (const at of this.exact.get(source) ?? []) found.push({ at, captured: '' });
    for (const length of this.prefixLengths) {
      if (length > source.length) break;
      for (const at of this.byPrefix.get(source.slice(0, length)) ?? []) {
        const { pattern } = this.paths[at];
        const star = pattern.indexOf('*');
        if (source.endsWith(pattern.slice(star + 1)) && source.length >= pattern.length - 1) found.push({ at, captured: source.slice(star, source.length - (pattern.length - star - 1)) });
      }
    }
    return found.sort((a, b) => a.at - b.at);
  }
}
