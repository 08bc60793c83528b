import type { Node } from 'web-tree-sitter';
import { spendGroupedSource, type ImportFacts } from '../import-facts';

/**
 * PHP (SPEC §8.1): `use A\B\C;` (with `as`, and group uses `use A\B\{C, D as E};`) binds a class by its
 * fully qualified name; the class's file is found through composer.json's PSR-4 `autoload` /
 * `autoload-dev` prefixes (`"App\\": "src/"` puts `App\Models\User` in `src/Models/User.php`). Classes of
 * the file's own namespace are found the same way without a `use`.
 */
export const PHP_EXTRA_TAGS = `
(object_creation_expression (name) @name) @reference.class
(object_creation_expression (qualified_name (name) @name)) @reference.class
(named_type (name) @name) @reference.type
(base_clause (name) @name) @reference.class
`;

export interface Psr4Root {
  /** Directory of the composer.json ("" for the root). */
  dir: string;
  /** Namespace prefix without the trailing backslash (`App`), "" for the global fallback. */
  prefix: string;
  /** Repo-relative directories. */
  paths: string[];
}

export function phpImports(root: Node, out: ImportFacts): void {
  for (const n of root.namedChildren) {
    if (n.type === 'namespace_definition') {
      const name = n.childForFieldName('name')?.text;
      if (name && out.packageName === undefined) out.packageName = name.replace(/^\\/, '');
      continue;
    }
    if (n.type !== 'namespace_use_declaration') continue;
    // `use function …` / `use const …` name functions and constants, not autoloaded classes.
    if (n.children.some((c) => c.type === 'function' || c.type === 'const')) continue;
    out.importRanges.push([n.startIndex, n.endIndex]);
    const group = n.childForFieldName('body');
    const prefix = group ? n.namedChildren.find((c) => c.type === 'namespace_name')?.text : undefined;
    const clauses = (group ?? n).namedChildren.filter((c) => c.type === 'namespace_use_clause');
    for (const c of clauses) {
      const target = c.namedChildren.find((x) => x.type === 'qualified_name' || x.type === 'name');
      // A group's paths repeat its prefix per clause: bounded per file (import-facts.ts).
      if (!target || (prefix !== undefined && !spendGroupedSource(out, prefix.length + target.text.length))) continue;
      const fqn = (prefix ? `${prefix}\\${target.text}` : target.text).replace(/^\\/, '');
      const alias = c.childForFieldName('alias')?.text;
      const last = fqn.slice(fqn.lastIndexOf('\\') + 1);
      out.imports.push({ source: fqn, bindings: [{ local: alias ?? last, imported: last }] });
    }
  }
}

/** PSR-4 roots of one composer.json text. */
export function psr4RootsOf(composerPath: string, text: string): Psr4Root[] {
  let json: { autoload?: { 'psr-4'?: Record<string, string | string[]> }; 'autoload-dev'?: { 'psr-4'?: Record<string, string | string[]> } };
  try {
    json = JSON.parse(text);
  } catch {
    return [];
  }
  const dir = composerPath.includes('/') ? composerPath.slice(0, composerPath.lastIndexOf('/')) : '';
  const out: Psr4Root[] = [];
  for (const section of [json.autoload?.['psr-4'], json['autoload-dev']?.['psr-4']]) {
    for (const [prefix, target] of Object.entries(section ?? {})) {
      const paths = (Array.isArray(target) ? target : [target]).filter((t): t is string => typeof t === 'string').map((t) => [dir, t.replace(/^\.\/|\/$/g, '')].filter(Boolean).join('/'));
      // Trailing backslashes dropped by hand (/\\+$/ is quadratic on a run of them).
      let end = prefix.length;
      while (end > 0 && prefix[end - 1] === '\\') end--;
      out.push({ dir, prefix: prefix.slice(0, end).replace(/^\\/, ''), paths });
    }
  }
  return out;
}

/** Candidate files of a fully qualified class name under the PSR-4 roots, longest prefix first. */
export function psr4Candidates(fqn: string, roots: Psr4Root[]): string[] {
  const out: string[] = [];
  const byPrefix = rootsByPrefix(roots);
  // The roots whose prefix is the name or a namespace of it, longest prefix first (the order of a sort of
  // all roots by prefix length, which this replaces: sorting and scanning every root per name looked up
  // was roots × lookups — a composer.json of thousands of prefixes, ~1 min per MiB).
  const prefixes = [fqn];
  for (let i = fqn.lastIndexOf('\\'); i > 0; i = fqn.lastIndexOf('\\', i - 1)) prefixes.push(fqn.slice(0, i));
  prefixes.push('');
  for (const prefix of prefixes) {
    for (const r of byPrefix.get(prefix) ?? []) {
      const rest = (r.prefix ? fqn.slice(r.prefix.length + 1) : fqn).split('\\').join('/');
      if (!rest) continue;
      for (const p of r.paths) out.push(p ? `${p}/${rest}.php` : `${rest}.php`);
    }
  }
  return out;
}

const ROOTS_BY_PREFIX = new WeakMap<Psr4Root[], Map<string, Psr4Root[]>>();
/** A tree's PSR-4 roots by prefix, each list in the roots' order; built once per roots array. */
function rootsByPrefix(roots: Psr4Root[]): Map<string, Psr4Root[]> {
  let m = ROOTS_BY_PREFIX.get(roots);
  if (!m) {
    m = new Map();
    for (const r of roots) {
      const list = m.get(r.prefix);
      if (list) list.push(r);
      else m.set(r.prefix, [r]);
    }
    ROOTS_BY_PREFIX.set(roots, m);
  }
  return m;
}
