import type { Node } from 'web-tree-sitter';
import type { ImportDecl } from './facts';
import { MAX_IMPORT_SOURCE_CHARS, spendGroupedSource, type ImportFacts, type ImportStyle } from './import-facts';
import { dartImports } from './languages/lang-dart';
import { kotlinImports } from './languages/lang-kotlin';
import { swiftImports } from './languages/lang-swift';
import { csharpImports } from './languages/lang-csharp';
import { phpImports } from './languages/lang-php';
import { zigImports } from './languages/lang-zig';


function unquote(text: string): string {
  return text.replace(/^[`'"<]|[`'">]$/g, '');
}

/** Import declarations are top level in every language we resolve, so only the root's children are read. */
export function extractImports(style: ImportStyle, root: Node): ImportFacts {
  const out: ImportFacts = { imports: [], exportAliases: [], importRanges: [] };
  switch (style) {
    case 'ecmascript': {
      // A cursor over the top level: only import/export statements become Node objects (most of a file's
      // top-level statements are neither, and marshalling every one of them costs more than the imports).
      const cursor = root.walk();
      const declarations = new Set<number>();
      out.topLevelDeclarations = declarations;
      try {
        if (cursor.gotoFirstChild()) {
          do {
            const type = cursor.nodeType;
            if (type === 'import_statement' || type === 'export_statement') ecmascript(cursor.currentNode, out);
            else if (type === 'lexical_declaration' || type === 'variable_declaration') {
              declarations.add(cursor.startIndex);
              // `const x = require('./x')` also binds a module (CommonJS): the binding resolves first.
              commonjsDeclaration(cursor.currentNode, out);
            } else if (type === 'expression_statement') commonjsStatement(cursor.currentNode, out);
            else if (type === 'ambient_declaration') {
              // `declare const console: Console` (a script-mode .d.ts of runtime globals): a top-level variable too.
              const inner = cursor.currentNode.firstNamedChild;
              if (inner && (inner.type === 'lexical_declaration' || inner.type === 'variable_declaration')) declarations.add(inner.startIndex);
            }
          } while (cursor.gotoNextSibling());
        }
      } finally {
        cursor.delete();
      }
      break;
    }
    case 'python':
      for (const n of root.namedChildren) python(n, out);
      break;
    case 'go':
      for (const n of root.namedChildren) go(n, out);
      break;
    case 'java':
      for (const n of root.namedChildren) java(n, out);
      break;
    case 'rust':
      for (const n of root.namedChildren) rust(n, out);
      break;
    case 'include':
      for (const n of root.descendantsOfType('preproc_include')) {
        const p = n.childForFieldName('path');
        if (p && p.type === 'string_literal') out.imports.push({ source: unquote(p.text), bindings: [], star: true });
      }
      break;
    case 'ruby':
      for (const n of root.namedChildren) {
        if (n.type !== 'call') continue;
        const method = n.childForFieldName('method')?.text;
        const arg = n.childForFieldName('arguments')?.namedChildren[0];
        if (method === 'require_relative' && arg?.type === 'string') out.imports.push({ source: `./${unquote(arg.text)}`, bindings: [], star: true });
      }
      break;
    case 'dart':
      dartImports(root, out);
      break;
    case 'kotlin':
      kotlinImports(root, out);
      break;
    case 'swift':
      swiftImports(root, out);
      break;
    case 'csharp':
      csharpImports(root, out);
      break;
    case 'php':
      phpImports(root, out);
      break;
    case 'zig':
      zigImports(root, out);
      break;
    default:
      break;
  }
  return out;
}

function ecmascript(n: Node, out: ImportFacts): void {
  if (n.type === 'import_statement') {
    const source = n.childForFieldName('source');
    if (!source) return;
    out.importRanges.push([n.startIndex, n.endIndex]);
    const decl: ImportDecl = { source: unquote(source.text), bindings: [] };
    const clause = n.namedChildren.find((c) => c.type === 'import_clause');
    for (const c of clause?.namedChildren ?? []) {
      if (c.type === 'identifier') decl.bindings.push({ local: c.text, imported: 'default' });
      else if (c.type === 'namespace_import') {
        const id = c.namedChildren.find((x) => x.type === 'identifier');
        if (id) decl.bindings.push({ local: id.text, imported: '*' });
      } else if (c.type === 'named_imports') {
        for (const s of c.namedChildren) {
          if (s.type !== 'import_specifier') continue;
          const name = s.childForFieldName('name')?.text;
          const alias = s.childForFieldName('alias')?.text;
          if (name) decl.bindings.push({ local: alias ?? unquote(name), imported: unquote(name) });
        }
      }
    }
    // `import x = require('y')` (TypeScript): a whole-module binding.
    const req = n.namedChildren.find((c) => c.type === 'import_require_clause');
    if (req) {
      const id = req.namedChildren.find((x) => x.type === 'identifier');
      if (id) decl.bindings.push({ local: id.text, imported: '*' });
    }
    out.imports.push(decl);
    return;
  }
  if (n.type !== 'export_statement') return;
  // One marshal of the children answers what most export statements are (`export function …`): no
  // `from` string, no clause, no `default`; the field look-ups run only when one of those is there.
  const children = n.children;
  const source = children.some((c) => c.type === 'string') ? n.childForFieldName('source') : null;
  const clause = children.find((c) => c.type === 'export_clause');
  if (source) {
    out.importRanges.push([n.startIndex, n.endIndex]);
    const decl: ImportDecl = { source: unquote(source.text), bindings: [], reexport: true };
    const ns = n.namedChildren.find((c) => c.type === 'namespace_export');
    if (ns) {
      const id = ns.namedChildren[0];
      if (id) decl.bindings.push({ local: unquote(id.text), imported: '*' });
    } else if (clause) {
      for (const s of clause.namedChildren) {
        if (s.type !== 'export_specifier') continue;
        const name = s.childForFieldName('name')?.text;
        const alias = s.childForFieldName('alias')?.text;
        if (name) decl.bindings.push({ local: unquote(alias ?? name), imported: unquote(name) });
      }
    } else decl.star = true;
    out.imports.push(decl);
    return;
  }
  if (clause) {
    out.importRanges.push([n.startIndex, n.endIndex]);
    for (const s of clause.namedChildren) {
      if (s.type !== 'export_specifier') continue;
      const name = s.childForFieldName('name')?.text;
      const alias = s.childForFieldName('alias')?.text;
      if (name) out.exportAliases.push([unquote(alias ?? name), unquote(name)]);
    }
    return;
  }
  if (!children.some((c) => c.type === 'default')) return;
  const value = n.childForFieldName('value');
  if (value?.type === 'identifier') out.exportAliases.push(['default', value.text]);
  const declaration = n.childForFieldName('declaration');
  if (declaration) {
    const name = declaration.childForFieldName('name')?.text;
    if (name) out.exportAliases.push(['default', name]);
  }
}

/**
 * CommonJS (Node's rules): `require('<specifier>')` resolves like an import (`./x` → x.js, x/index.js);
 * what it returns is `module.exports`. A require binding is the whole module (`*`): `x.name` looks up the
 * export `name` (`exports.name = …`), a bare `x` the module's `module.exports = <x>` (its `default`).
 */
function requireOf(n: Node | null): string | undefined {
  if (!n || n.type !== 'call_expression') return undefined;
  const fn = n.childForFieldName('function');
  if (!fn || fn.type !== 'identifier' || fn.text !== 'require') return undefined;
  const arg = n.childForFieldName('arguments')?.namedChildren[0];
  if (!arg || arg.type !== 'string') return undefined;
  return unquote(arg.text);
}

/** `const x = require('m')`, `const { a, b: c } = require('m')`, `var y = require('m').y`. */
function commonjsDeclaration(n: Node, out: ImportFacts): void {
  let all = true;
  let any = false;
  for (const d of n.namedChildren) {
    if (d.type !== 'variable_declarator') continue;
    const name = d.childForFieldName('name');
    let value = d.childForFieldName('value');
    // `var app = exports = module.exports = {}`: `app` is the module's export.
    if (name?.type === 'identifier' && value?.type === 'assignment_expression' && assignsModuleExports(value)) {
      out.exportAliases.push(['default', name.text]);
      all = false;
      continue;
    }
    let member: string | undefined;
    if (value?.type === 'member_expression') {
      const property = value.childForFieldName('property');
      member = property?.type === 'property_identifier' ? property.text : undefined;
      value = member ? value.childForFieldName('object') : null;
    }
    const source = requireOf(value);
    if (!source || !name) {
      all = false;
      continue;
    }
    any = true;
    const decl: ImportDecl = { source, bindings: [], require: true };
    if (name.type === 'identifier') decl.bindings.push({ local: name.text, imported: member ?? '*' });
    else if (name.type === 'object_pattern' && !member) {
      for (const p of name.namedChildren) {
        if (p.type === 'shorthand_property_identifier_pattern') decl.bindings.push({ local: p.text, imported: p.text });
        else if (p.type === 'pair_pattern') {
          const key = p.childForFieldName('key');
          const local = p.childForFieldName('value');
          if (key && local?.type === 'identifier') decl.bindings.push({ local: local.text, imported: unquote(key.text) });
        }
      }
    }
    out.imports.push(decl);
  }
  if (any) out.importRanges.push([n.startIndex, n.endIndex]);
}

/** Whether an assignment chain ends in `module.exports = …` (possibly via `exports = module.exports = …`). */
function assignsModuleExports(n: Node): boolean {
  for (let a: Node | null = n; a?.type === 'assignment_expression'; a = a.childForFieldName('right')) if (isModuleExports(a.childForFieldName('left'))) return true;
  return false;
}

function isModuleExports(n: Node | null): boolean {
  return n?.type === 'member_expression' && n.childForFieldName('object')?.text === 'module' && n.childForFieldName('property')?.text === 'exports';
}

/** `exports.x = …` / `module.exports.x = …`: the export's name, else undefined. */
function exportsMember(n: Node | null): string | undefined {
  if (n?.type !== 'member_expression') return undefined;
  const object = n.childForFieldName('object');
  const property = n.childForFieldName('property');
  if (property?.type !== 'property_identifier') return undefined;
  if (object?.type === 'identifier' && object.text === 'exports') return property.text;
  if (isModuleExports(object)) return property.text;
  return undefined;
}

/**
 * What a value assigned to an export names here: an identifier, a named class; a function is the
 * assignment's own definition (ecma-tags.ts names `exports.x = function …` x and `module.exports = function …`
 * `exports`, at the top level), so `fallback`.
 */
function localOf(value: Node, fallback: string): string {
  if (value.type === 'identifier') return value.text;
  if (value.type === 'class') {
    const name = value.childForFieldName('name');
    if (name) return name.text;
  }
  return fallback;
}

/** Top-level `require('m');`, `module.exports = …`, `exports.x = …`. */
function commonjsStatement(n: Node, out: ImportFacts): void {
  const e = n.firstNamedChild;
  if (!e) return;
  const side = requireOf(e);
  if (side) {
    out.importRanges.push([n.startIndex, n.endIndex]);
    out.imports.push({ source: side, bindings: [], require: true });
    return;
  }
  if (e.type !== 'assignment_expression') return;
  // The value at the end of `a = b = c`.
  let value: Node | null = e;
  while (value?.type === 'assignment_expression') value = value.childForFieldName('right');
  if (!value) return;
  const member = exportsMember(e.childForFieldName('left'));
  if (member) {
    const source = requireOf(value);
    if (source) {
      out.importRanges.push([n.startIndex, n.endIndex]);
      out.imports.push({ source, bindings: [{ local: member, imported: '*' }], reexport: true, require: true });
    } else out.exportAliases.push([member, localOf(value, member)]);
    return;
  }
  if (!assignsModuleExports(e)) return;
  const source = requireOf(value);
  if (source) {
    // `module.exports = require('./lib/x')`: this module is that one.
    out.importRanges.push([n.startIndex, n.endIndex]);
    out.imports.push({ source, bindings: [], reexport: true, star: true, require: true });
    return;
  }
  if (value.type === 'object') {
    // `module.exports = { a, b: c }`
    for (const p of value.namedChildren) {
      if (p.type === 'shorthand_property_identifier') out.exportAliases.push([p.text, p.text]);
      else if (p.type === 'pair') {
        const key = p.childForFieldName('key');
        const v = p.childForFieldName('value');
        if (key && v) out.exportAliases.push([unquote(key.text), localOf(v, unquote(key.text))]);
      }
    }
    return;
  }
  out.exportAliases.push(['default', localOf(value, 'exports')]);
}

function python(n: Node, out: ImportFacts): void {
  if (n.type === 'import_statement') {
    out.importRanges.push([n.startIndex, n.endIndex]);
    for (const c of n.childrenForFieldName('name')) {
      if (c.type === 'aliased_import') {
        const name = c.childForFieldName('name')?.text;
        const alias = c.childForFieldName('alias')?.text;
        if (name && alias) out.imports.push({ source: name, bindings: [{ local: alias, imported: '*' }] });
      } else out.imports.push({ source: c.text, bindings: [{ local: c.text, imported: '*' }] });
    }
  } else if (n.type === 'import_from_statement') {
    out.importRanges.push([n.startIndex, n.endIndex]);
    const mod = n.childForFieldName('module_name');
    if (!mod) return;
    const decl: ImportDecl = { source: mod.text.replace(/\s+/g, ''), bindings: [] };
    if (n.namedChildren.some((c) => c.type === 'wildcard_import')) decl.star = true;
    for (const c of n.childrenForFieldName('name')) {
      if (c.type === 'aliased_import') {
        const name = c.childForFieldName('name')?.text;
        const alias = c.childForFieldName('alias')?.text;
        if (name && alias) decl.bindings.push({ local: alias, imported: name });
      } else decl.bindings.push({ local: c.text, imported: c.text });
    }
    out.imports.push(decl);
  } else if (n.type === 'future_import_statement') out.importRanges.push([n.startIndex, n.endIndex]);
}

function go(n: Node, out: ImportFacts): void {
  if (n.type === 'package_clause') {
    out.packageName = n.namedChildren[0]?.text;
    return;
  }
  if (n.type !== 'import_declaration') return;
  out.importRanges.push([n.startIndex, n.endIndex]);
  for (const spec of n.descendantsOfType('import_spec')) {
    const p = spec.childForFieldName('path');
    if (!p) continue;
    const source = unquote(p.text);
    const name = spec.childForFieldName('name')?.text;
    if (name === '_') continue;
    if (name === '.') out.imports.push({ source, bindings: [], star: true });
    else {
      // Without an alias the binding is the package's declared name; the last path segment is the
      // convention (major-version suffixes like /v2 are skipped).
      const segments = source.split('/');
      let last = segments[segments.length - 1];
      if (/^v\d+$/.test(last) && segments.length > 1) last = segments[segments.length - 2];
      out.imports.push({ source, bindings: [{ local: name ?? last.replace(/^go-|[-.]go$/g, '').replace(/[^\w]/g, '_'), imported: '*' }] });
    }
  }
}

function java(n: Node, out: ImportFacts): void {
  if (n.type === 'package_declaration') {
    out.packageName = n.namedChildren[0]?.text;
    return;
  }
  if (n.type !== 'import_declaration') return;
  out.importRanges.push([n.startIndex, n.endIndex]);
  const text = n.text.replace(/^import\s+/, '').replace(/;\s*$/, '').trim();
  const isStatic = text.startsWith('static ');
  const name = text.replace(/^static\s+/, '').replace(/\s+/g, '');
  if (name.endsWith('.*')) {
    out.imports.push({ source: name.slice(0, -2), bindings: [], star: true });
    return;
  }
  const dot = name.lastIndexOf('.');
  const last = name.slice(dot + 1);
  if (isStatic) out.imports.push({ source: name.slice(0, dot), bindings: [{ local: last, imported: last }] });
  else out.imports.push({ source: name, bindings: [{ local: last, imported: '*' }] });
}

/** `use a::b::c;`, `use a::{b, c as d};`, `use a::*;` and `mod m;` (a child module in scope as `m`). */
function rust(n: Node, out: ImportFacts): void {
  if (n.type === 'mod_item') {
    const name = n.childForFieldName('name')?.text;
    if (name && !n.childForFieldName('body')) out.imports.push({ source: `self::${name}`, bindings: [{ local: name, imported: '*' }] });
    return;
  }
  if (n.type !== 'use_declaration') return;
  out.importRanges.push([n.startIndex, n.endIndex]);
  const arg = n.childForFieldName('argument');
  if (!arg) return;
  const add = (prefix: string, item: Node) => {
    if (prefix.length > MAX_IMPORT_SOURCE_CHARS) return;
    if (item.type === 'use_as_clause') {
      const p = item.childForFieldName('path')?.text;
      const alias = item.childForFieldName('alias')?.text;
      if (p && alias) bind(prefix, p, alias);
    } else if (item.type === 'self') {
      const segs = prefix.split('::');
      out.imports.push({ source: prefix, bindings: [{ local: segs[segs.length - 1], imported: '*' }] });
    } else if (item.type === 'identifier' || item.type === 'scoped_identifier') bind(prefix, item.text, undefined);
    else if (item.type === 'use_wildcard') {
      const inner = item.namedChildren[0]?.text;
      if (inner && spendGroupedSource(out, prefix.length + inner.length)) out.imports.push({ source: prefix ? `${prefix}::${inner}` : inner, bindings: [], star: true });
    } else if (item.type === 'scoped_use_list') {
      const p = item.childForFieldName('path')?.text ?? '';
      const list = item.childForFieldName('list');
      for (const c of list?.namedChildren ?? []) add(prefix ? `${prefix}::${p}` : p, c);
    }
  };
  const bind = (prefix: string, p: string, alias: string | undefined) => {
    if (!spendGroupedSource(out, prefix.length + p.length)) return;
    const full = prefix ? `${prefix}::${p}` : p;
    const cut = full.lastIndexOf('::');
    if (cut < 0) return; // `use serde;`: an external crate
    const name = full.slice(cut + 2);
    out.imports.push({ source: full.slice(0, cut), bindings: [{ local: alias ?? name, imported: name }] });
  };
  add('', arg);
}
