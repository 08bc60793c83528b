import type * as TS from 'typescript-compiler-api';
import type { Definition, FileFacts, ImportDecl, Reference, ReferenceKind } from './facts';

/**
 * TypeScript's own parser as the fallback for TS/TSX/JS files on which tree-sitter-typescript 0.23.2 (the
 * newest published) produces ERROR nodes although the file is valid — generic call signatures in an
 * interface without semicolons, `true | false extends (…)` conditional types, `export type * from`.
 * Measured (docs/cohorts.md): 1 of 338 TypeScript-clean files in the evaluation repos, immer's central
 * public types file among them. Only those files come here, so index time is unchanged for the rest.
 *
 * The facts follow the tree-sitter extractor's conventions (src/codegraph/extract.ts with the tags.scm
 * of tree-sitter-javascript/-typescript and TS_EXTRA): the same definition kinds and lexical qualified
 * names, the same reference kinds and qualifiers, the same import bindings.
 */

let loaded: typeof TS | undefined;
/** The compiler module is 9 MB: loaded on the first file that needs it, once per thread. */
function ts(): typeof TS {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('typescript-compiler-api') as typeof TS;
  return loaded;
}

const SIMPLE_QUALIFIER = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/** Facts of one TS/TSX/JS text from TypeScript's parser; `hasErrors` only when TypeScript also reports syntax errors. */
export function extractFactsWithTypeScript(source: string, languageId: string): FileFacts {
  const t = ts();
  const kind = languageId === 'tsx' ? t.ScriptKind.TSX : languageId === 'javascript' ? t.ScriptKind.JSX : t.ScriptKind.TS;
  const sf = t.createSourceFile('file', source, t.ScriptTarget.Latest, true, kind);
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line + 1;

  const imports: ImportDecl[] = [];
  const exportAliases: Array<[string, string]> = [];
  for (const st of sf.statements) collectImport(t, st, imports, exportAliases);
  const aliasedLocals = new Set(exportAliases.map(([, local]) => local));
  const importedLocals = new Set<string>();
  for (const imp of imports) if (!imp.reexport) for (const b of imp.bindings) importedLocals.add(b.local);

  const defs: Definition[] = [];
  const byQname = new Map<string, number>();
  const refs: Reference[] = [];
  const seen = new Set<string>();
  const seenAnyKind = new Set<string>();
  const uses: Array<{ name: string; qualifier?: string; line: number; from: number }> = [];
  const push = (name: string, qualifier: string | undefined, k: ReferenceKind, line: number, from: number) => {
    const site = `${name}\0${qualifier ?? ''}\0${from}`;
    const key = `${site}\0${k}`;
    if (seen.has(key) || (k === 'use' && seenAnyKind.has(site))) return;
    seen.add(key);
    seenAnyKind.add(site);
    const ref: Reference = { name, kind: k, line, from };
    if (qualifier !== undefined) ref.qualifier = qualifier;
    refs.push(ref);
  };

  const defNodes: TS.Node[] = [];
  const occurrences = new Map<string, number>();
  /** Start of the innermost nameless scope (function value, object literal, class expression) below the enclosing definition; -1: none. */
  const anonymousScopeOf = (node: TS.Node, parent: number): number => {
    const stop = parent >= 0 ? defNodes[parent] : undefined;
    for (let n = node.parent; n && n !== stop && n !== sf; n = n.parent) {
      if (t.isArrowFunction(n) || t.isFunctionExpression(n) || t.isObjectLiteralExpression(n) || t.isClassExpression(n)) return n.pos;
    }
    return -1;
  };
  const define = (node: TS.Node, name: string, defKind: string, parent: number, exported: boolean): number => {
    const prefix = parent >= 0 ? defs[parent].qname : undefined;
    const lexical = prefix ? `${prefix}.${name}` : name;
    const start = lineOf(node.getStart(sf));
    const end = lineOf(node.end);
    const scopeKey = `${lexical}\0${anonymousScopeOf(node, parent)}`;
    const existing = byQname.get(scopeKey);
    if (existing !== undefined) {
      // Overloads, getter/setter pairs, declaration merging in one scope: one symbol spanning all of them.
      defs[existing].start = Math.min(defs[existing].start, start);
      defs[existing].end = Math.max(defs[existing].end, end);
      return existing;
    }
    // The same name in another nameless scope is another symbol, numbered by occurrence (extract.ts's rule).
    const occurrence = (occurrences.get(lexical) ?? 0) + 1;
    occurrences.set(lexical, occurrence);
    const qname = occurrence === 1 ? lexical : `${lexical}~${occurrence}`;
    defs.push({ name, qname, kind: defKind, start, end, exported, parent });
    defNodes.push(node);
    byQname.set(scopeKey, defs.length - 1);
    return defs.length - 1;
  };
  const hasModifier = (node: TS.Node, k: TS.SyntaxKind) => !!(t.canHaveModifiers(node) && t.getModifiers(node)?.some((m) => m.kind === k));
  const topExported = (node: TS.Node, name: string) => hasModifier(node, t.SyntaxKind.ExportKeyword) || aliasedLocals.has(name);
  const memberExported = (node: TS.Node, name: string, parent: number) =>
    parent >= 0 && defs[parent].exported && !hasModifier(node, t.SyntaxKind.PrivateKeyword) && !hasModifier(node, t.SyntaxKind.ProtectedKeyword) && !name.startsWith('#');
  const isFunctionValue = (n: TS.Node | undefined) => !!n && (t.isArrowFunction(n) || t.isFunctionExpression(n));
  const nameText = (n: TS.Node | undefined): string | undefined => (n && (t.isIdentifier(n) || t.isStringLiteral(n)) ? n.text : undefined);
  const qualifierOf = (expr: TS.Expression): string => {
    const text = expr.getText(sf);
    return text.length <= 200 && SIMPLE_QUALIFIER.test(text) ? text : '?';
  };

  /** The definition a node opens (its index), or undefined; `parent` is the enclosing definition. */
  const definitionOf = (node: TS.Node, parent: number): number | undefined => {
    const top = parent < 0;
    // Nested definitions are exported when their parent is (the tree-sitter path's rule).
    const exp = (name: string) => (top ? topExported(node, name) : memberExported(node, name, parent));
    if (t.isFunctionDeclaration(node) && node.name) return define(node, node.name.text, 'function', parent, exp(node.name.text));
    if (t.isClassDeclaration(node) && node.name) return define(node, node.name.text, 'class', parent, exp(node.name.text));
    if (t.isInterfaceDeclaration(node)) return define(node, node.name.text, 'interface', parent, exp(node.name.text));
    if (t.isTypeAliasDeclaration(node)) return define(node, node.name.text, 'type', parent, exp(node.name.text));
    if (t.isEnumDeclaration(node)) return define(node, node.name.text, 'enum', parent, exp(node.name.text));
    if (t.isModuleDeclaration(node) && t.isIdentifier(node.name)) return define(node, node.name.text, 'module', parent, exp(node.name.text));
    // tags.scm: `method_definition name: (property_identifier)` — not constructors, not `#private` names;
    // object-literal methods count too.
    if (t.isMethodDeclaration(node) || t.isMethodSignature(node) || t.isGetAccessorDeclaration(node) || t.isSetAccessorDeclaration(node)) {
      const name = t.isIdentifier(node.name) || t.isStringLiteral(node.name) ? node.name.text : undefined;
      if (name && name !== 'constructor') return define(node, name, 'method', parent, memberExported(node, name, parent));
    }
    if (t.isPropertyDeclaration(node) && parent >= 0 && isFunctionValue(node.initializer)) {
      const name = nameText(node.name);
      if (name) return define(node, name, 'method', parent, memberExported(node, name, parent));
    }
    if (t.isVariableDeclaration(node) && t.isIdentifier(node.name)) {
      const statement = node.parent?.parent;
      const atTop = !!statement && t.isVariableStatement(statement) && statement.parent === sf;
      const name = node.name.text;
      const exported = atTop ? topExported(statement!, name) : memberExported(node, name, parent);
      if (isFunctionValue(node.initializer)) return define(node, name, 'function', parent, exported);
      if (atTop) return define(node, name, 'constant', parent, exported);
    }
    if (t.isPropertyAssignment(node) && isFunctionValue(node.initializer) && t.isIdentifier(node.name)) return define(node, node.name.text, 'function', parent, memberExported(node, node.name.text, parent));
    if (t.isBinaryExpression(node) && node.operatorToken.kind === t.SyntaxKind.EqualsToken && isFunctionValue(node.right)) {
      const name = t.isIdentifier(node.left) ? node.left.text : t.isPropertyAccessExpression(node.left) && t.isIdentifier(node.left.name) ? node.left.name.text : undefined;
      if (name) return define(node, name, 'function', parent, memberExported(node, name, parent));
    }
    return undefined;
  };

  const isDeclarationName = (id: TS.Identifier): boolean => {
    const p = id.parent;
    if (!p) return false;
    if (t.isPropertyAccessExpression(p) && p.name === id) return true;
    if (t.isQualifiedName(p) && p.right === id) return true;
    if ((p as { name?: TS.Node }).name === id && !t.isShorthandPropertyAssignment(p)) return true;
    if (t.isPropertyAssignment(p) && p.name === id) return true;
    return false;
  };

  const visit = (node: TS.Node, parent: number): void => {
    if (t.isImportDeclaration(node) || t.isImportEqualsDeclaration(node) || (t.isExportDeclaration(node) && node.moduleSpecifier)) return;
    const opened = definitionOf(node, parent);
    const from = opened ?? parent;
    if (t.isCallExpression(node)) {
      const callee = node.expression;
      if (t.isIdentifier(callee) && callee.text !== 'require') push(callee.text, undefined, 'call', lineOf(callee.getStart(sf)), parent);
      else if (t.isPropertyAccessExpression(callee) && t.isIdentifier(callee.name)) push(callee.name.text, qualifierOf(callee.expression), 'call', lineOf(callee.name.getStart(sf)), parent);
    } else if (t.isNewExpression(node)) {
      const ctor = node.expression;
      if (t.isIdentifier(ctor)) push(ctor.text, undefined, 'class', lineOf(ctor.getStart(sf)), parent);
      else if (t.isPropertyAccessExpression(ctor)) push(ctor.name.text, qualifierOf(ctor.expression), 'class', lineOf(ctor.name.getStart(sf)), parent);
    } else if (t.isTypeReferenceNode(node)) {
      const n = node.typeName;
      if (t.isIdentifier(n)) push(n.text, undefined, 'type', lineOf(n.getStart(sf)), parent);
      else push(n.right.text, n.left.getText(sf), 'type', lineOf(n.right.getStart(sf)), parent);
    } else if (t.isHeritageClause(node)) {
      for (const h of node.types) {
        const e = h.expression;
        const k: ReferenceKind = node.token === t.SyntaxKind.ImplementsKeyword ? 'implementation' : 'class';
        if (t.isIdentifier(e)) push(e.text, undefined, k, lineOf(e.getStart(sf)), parent);
        else if (t.isPropertyAccessExpression(e)) push(e.name.text, qualifierOf(e.expression), k, lineOf(e.name.getStart(sf)), parent);
      }
    } else if (t.isIdentifier(node) && importedLocals.has(node.text) && !isDeclarationName(node)) {
      // A use of an imported binding anywhere (a value, `extends`, a generic argument, `{ shorthand }`).
      const p = node.parent;
      if (p && t.isPropertyAccessExpression(p) && p.expression === node) uses.push({ name: p.name.text, qualifier: node.text, line: lineOf(node.getStart(sf)), from: parent });
      else if (p && t.isQualifiedName(p) && p.left === node) uses.push({ name: p.right.text, qualifier: node.text, line: lineOf(node.getStart(sf)), from: parent });
      else uses.push({ name: node.text, line: lineOf(node.getStart(sf)), from: parent });
    }
    t.forEachChild(node, (c) => visit(c, from));
  };
  for (const st of sf.statements) visit(st, -1);
  // As in the tree-sitter path: tag references first, then the uses of imports they do not already cover.
  for (const u of uses) push(u.name, u.qualifier, 'use', u.line, u.from);

  const diagnostics = (sf as unknown as { parseDiagnostics?: unknown[] }).parseDiagnostics ?? [];
  return { defs, refs, imports, exportAliases, parser: 'typescript', ...(diagnostics.length ? { hasErrors: true } : {}) };
}

function collectImport(t: typeof TS, st: TS.Statement, imports: ImportDecl[], exportAliases: Array<[string, string]>): void {
  if (t.isImportDeclaration(st) && t.isStringLiteral(st.moduleSpecifier)) {
    const decl: ImportDecl = { source: st.moduleSpecifier.text, bindings: [] };
    const clause = st.importClause;
    if (clause?.name) decl.bindings.push({ local: clause.name.text, imported: 'default' });
    const nb = clause?.namedBindings;
    if (nb && t.isNamespaceImport(nb)) decl.bindings.push({ local: nb.name.text, imported: '*' });
    else if (nb && t.isNamedImports(nb)) for (const s of nb.elements) decl.bindings.push({ local: s.name.text, imported: (s.propertyName ?? s.name).text });
    imports.push(decl);
  } else if (t.isImportEqualsDeclaration(st) && t.isExternalModuleReference(st.moduleReference) && t.isStringLiteral(st.moduleReference.expression)) {
    imports.push({ source: st.moduleReference.expression.text, bindings: [{ local: st.name.text, imported: '*' }] });
  } else if (t.isExportDeclaration(st)) {
    const clause = st.exportClause;
    if (st.moduleSpecifier && t.isStringLiteral(st.moduleSpecifier)) {
      const decl: ImportDecl = { source: st.moduleSpecifier.text, bindings: [], reexport: true };
      if (!clause) decl.star = true;
      else if (t.isNamespaceExport(clause)) decl.bindings.push({ local: clause.name.text, imported: '*' });
      else for (const s of clause.elements) decl.bindings.push({ local: s.name.text, imported: (s.propertyName ?? s.name).text });
      imports.push(decl);
    } else if (clause && t.isNamedExports(clause)) {
      for (const s of clause.elements) exportAliases.push([s.name.text, (s.propertyName ?? s.name).text]);
    }
  } else if (t.isExportAssignment(st) && !st.isExportEquals && t.isIdentifier(st.expression)) {
    exportAliases.push(['default', st.expression.text]);
  } else if ((t.isFunctionDeclaration(st) || t.isClassDeclaration(st)) && st.name && t.getModifiers(st)?.some((m) => m.kind === t.SyntaxKind.DefaultKeyword)) {
    exportAliases.push(['default', st.name.text]);
  }
}
