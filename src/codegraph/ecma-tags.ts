import type { Node } from 'web-tree-sitter';
import type { ReferenceKind } from './facts';

/**
 * The tags query of TypeScript, TSX and JavaScript (upstream tags.scm of tree-sitter-javascript and
 * tree-sitter-typescript without their doc-comment parts, plus languages.ts's TS_EXTRA / JS_EXTRA), written
 * out by hand. The query engine walks every node of the tree trying every pattern (it cost as much as a
 * third of the parse on rxjs); here one `descendantsOfType` walk in wasm hands back only the nodes a
 * pattern can start at, and each is checked with a few field look-ups. Same definitions and references,
 * references in the order the query returned them (by the node its last step matched), so the facts are
 * byte-identical (test/codegraph/facts-golden.test.ts, ecma-tags.test.ts compares both on real sources).
 * The query (`grammar.query`) stays the reference: `ECMA_TAGS_BY_QUERY=1` uses it instead.
 */

export interface EcmaRawDef {
  node: Node;
  nameNode: Node;
  kind: string;
  /** nameNode's text when it was read off the source (see wordAt). */
  name?: string;
}
export interface EcmaRawRef {
  nameNode: Node;
  kind: ReferenceKind;
  name?: string;
  /** The receiver text of a member call (`qualifierOf`'s answer, known here without asking for the parent). */
  receiver?: Node;
  /** Start of the node the query's last step matched: the order the query returns its matches in. */
  order: number;
}

const ANCHORS_JS = [
  'method_definition', 'class', 'class_declaration', 'function_expression', 'function_declaration', 'generator_function',
  'generator_function_declaration', 'lexical_declaration', 'variable_declaration', 'assignment_expression', 'pair',
  'call_expression', 'new_expression', 'export_statement',
];
/** TypeScript's tags.scm and TS_EXTRA. */
const ANCHORS_TS_ONLY = [
  'function_signature', 'method_signature', 'abstract_method_signature', 'abstract_class_declaration', 'module',
  'interface_declaration', 'type_annotation', 'internal_module', 'type_alias_declaration', 'enum_declaration',
  'public_field_definition', 'extends_clause',
];
/** JS_EXTRA. */
const ANCHORS_JS_ONLY = ['field_definition'];
const FUNCTION_VALUES = new Set(['arrow_function', 'function_expression']);
const FUNCTION_NODES = new Set(['function_expression', 'function_declaration', 'generator_function', 'generator_function_declaration']);
/** `export default x = <one of these>` (tree-sitter-javascript's tags.scm). */
const EXPORTED_ASSIGNMENT_VALUES = new Set(['number', 'string', 'identifier', 'undefined', 'null', 'new_expression', 'binary_expression', 'call_expression']);

interface FieldIds {
  name: number;
  value: number;
  left: number;
  right: number;
  property: number;
  key: number;
  function: number;
  arguments: number;
  constructor: number;
}
const fieldIdsByLanguage = new WeakMap<object, FieldIds>();
function fieldIds(root: Node): FieldIds {
  const language = root.tree.language;
  let ids = fieldIdsByLanguage.get(language);
  if (!ids) {
    const id = (f: string) => language.fields.indexOf(f);
    ids = { name: id('name'), value: id('value'), left: id('left'), right: id('right'), property: id('property'), key: id('key'), function: id('function'), arguments: id('arguments'), constructor: id('constructor') };
    fieldIdsByLanguage.set(language, ids);
  }
  return ids;
}

const child = (n: Node, field: number): Node | null => (field < 0 ? null : n.childForFieldId(field));

const isWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36;
/**
 * The text of an identifier-like node (identifier, property_identifier, type_identifier) read off the source:
 * the run of ASCII word characters at its start, unless a non-ASCII letter or an escape continues it (then
 * the node's own text). `.text` asks wasm for the node's end: one call per name saved.
 */
function wordAt(n: Node, source: string): string {
  const start = n.startIndex;
  let end = start;
  while (end < source.length && isWordChar(source.charCodeAt(end))) end++;
  const next = end < source.length ? source.charCodeAt(end) : 0;
  return end === start || next > 127 || next === 92 ? n.text : source.slice(start, end);
}

/**
 * Definitions and references of one error-free ECMAScript tree, as the tags query reports them.
 * `topLevelDeclarations`: start offsets of the root's lexical/variable declarations (`(program (lexical_declaration …))`).
 */
export function ecmaTags(root: Node, source: string, languageId: string, topLevelDeclarations: Set<number>): { defs: EcmaRawDef[]; refs: EcmaRawRef[] } {
  const ts = languageId === 'typescript' || languageId === 'tsx';
  const f = fieldIds(root);
  const defs: EcmaRawDef[] = [];
  const refs: EcmaRawRef[] = [];
  const declarators = (decl: Node, topLevel: boolean, exported: boolean) => {
    for (const d of decl.namedChildren) {
      if (d.type !== 'variable_declarator') continue;
      const name = child(d, f.name);
      if (!name || name.type !== 'identifier') continue;
      const value = child(d, f.value);
      const text = wordAt(name, source);
      if (value && FUNCTION_VALUES.has(value.type)) defs.push({ node: d, nameNode: name, kind: 'function', name: text });
      if (topLevel || exported) defs.push({ node: d, nameNode: name, kind: 'constant', name: text });
    }
  };
  const anchors = root.descendantsOfType(ts ? [...ANCHORS_JS, ...ANCHORS_TS_ONLY] : [...ANCHORS_JS, ...ANCHORS_JS_ONLY]);
  for (const n of anchors) {
    const type = n.type;
    switch (type) {
      case 'call_expression': {
        const fn = child(n, f.function);
        if (!fn) break;
        const fnType = fn.type;
        if (fnType === 'identifier') {
          const name = wordAt(fn, source);
          if (name !== 'require') refs.push({ nameNode: fn, kind: 'call', name, order: fn.startIndex });
        } else if (fnType === 'member_expression') {
          const property = child(fn, f.property);
          if (!property || property.type !== 'property_identifier') break;
          const args = child(n, f.arguments);
          if (!args || !args.isNamed) break;
          refs.push({ nameNode: property, kind: 'call', name: wordAt(property, source), receiver: fn, order: args.startIndex });
        }
        break;
      }
      case 'new_expression': {
        const ctor = child(n, f.constructor);
        if (ctor && ctor.isNamed) refs.push({ nameNode: ctor, kind: 'class', order: ctor.startIndex });
        break;
      }
      case 'type_annotation':
        for (const c of n.namedChildren) if (c.type === 'type_identifier') refs.push({ nameNode: c, kind: 'type', name: wordAt(c, source), order: c.startIndex });
        break;
      case 'extends_clause': {
        const value = child(n, f.value);
        if (value && value.type === 'identifier') refs.push({ nameNode: value, kind: 'class', name: wordAt(value, source), order: value.startIndex });
        break;
      }
      case 'method_definition': {
        const name = child(n, f.name);
        if (!name || name.type !== 'property_identifier') break;
        const text = wordAt(name, source);
        if (text !== 'constructor') defs.push({ node: n, nameNode: name, kind: 'method', name: text });
        break;
      }
      case 'class':
      case 'class_declaration': {
        const name = child(n, f.name);
        if (name && name.isNamed) defs.push({ node: n, nameNode: name, kind: 'class' });
        break;
      }
      case 'lexical_declaration':
      case 'variable_declaration':
        declarators(n, topLevelDeclarations.has(n.startIndex), false);
        break;
      case 'assignment_expression': {
        const right = child(n, f.right);
        if (!right || !FUNCTION_VALUES.has(right.type)) break;
        const left = child(n, f.left);
        if (!left) break;
        const leftType = left.type;
        if (leftType === 'identifier') defs.push({ node: n, nameNode: left, kind: 'function', name: wordAt(left, source) });
        else if (leftType === 'member_expression') {
          const property = child(left, f.property);
          if (property && property.type === 'property_identifier') defs.push({ node: n, nameNode: property, kind: 'function', name: wordAt(property, source) });
        }
        break;
      }
      case 'pair': {
        const value = child(n, f.value);
        if (!value || !FUNCTION_VALUES.has(value.type)) break;
        const key = child(n, f.key);
        if (key && key.type === 'property_identifier') defs.push({ node: n, nameNode: key, kind: 'function', name: wordAt(key, source) });
        break;
      }
      case 'export_statement': {
        const value = child(n, f.value);
        if (value && value.type === 'assignment_expression') {
          const left = child(value, f.left);
          const right = child(value, f.right);
          if (left && left.type === 'identifier' && right && EXPORTED_ASSIGNMENT_VALUES.has(right.type)) defs.push({ node: n, nameNode: left, kind: 'constant', name: wordAt(left, source) });
        }
        for (const c of n.namedChildren) {
          const t = c.type;
          if (t === 'lexical_declaration' || t === 'variable_declaration') declarators(c, false, true);
          else if (t === 'ambient_declaration') {
            // `export declare const execa: …` (hand-written typings).
            const inner = c.firstNamedChild;
            if (inner && (inner.type === 'lexical_declaration' || inner.type === 'variable_declaration')) declarators(inner, false, true);
          }
        }
        break;
      }
      case 'public_field_definition':
      case 'field_definition': {
        const value = child(n, f.value);
        if (!value || !FUNCTION_VALUES.has(value.type)) break;
        const name = child(n, type === 'field_definition' ? f.property : f.name);
        if (name && name.type === 'property_identifier') defs.push({ node: n, nameNode: name, kind: 'method', name: wordAt(name, source) });
        break;
      }
      case 'function_signature': {
        const name = child(n, f.name);
        if (name && name.type === 'identifier') defs.push({ node: n, nameNode: name, kind: 'function', name: wordAt(name, source) });
        break;
      }
      case 'method_signature':
      case 'abstract_method_signature': {
        const name = child(n, f.name);
        if (name && name.type === 'property_identifier') defs.push({ node: n, nameNode: name, kind: 'method', name: wordAt(name, source) });
        break;
      }
      case 'abstract_class_declaration':
      case 'interface_declaration':
      case 'type_alias_declaration': {
        const name = child(n, f.name);
        if (name && name.type === 'type_identifier') defs.push({ node: n, nameNode: name, kind: type === 'abstract_class_declaration' ? 'class' : type === 'interface_declaration' ? 'interface' : 'type', name: wordAt(name, source) });
        break;
      }
      case 'module':
      case 'internal_module': {
        const name = child(n, f.name);
        if (name && (type === 'internal_module' ? name.isNamed : name.type === 'identifier')) defs.push({ node: n, nameNode: name, kind: 'module' });
        break;
      }
      case 'enum_declaration': {
        const name = child(n, f.name);
        if (name && name.type === 'identifier') defs.push({ node: n, nameNode: name, kind: 'enum', name: wordAt(name, source) });
        break;
      }
      default:
        if (FUNCTION_NODES.has(type)) {
          const name = child(n, f.name);
          if (name && name.type === 'identifier') defs.push({ node: n, nameNode: name, kind: 'function', name: wordAt(name, source) });
        }
    }
  }
  // Stable: references that end on the same node keep their order (only the two `new` patterns do).
  refs.sort((a, b) => a.order - b.order);
  return { defs, refs };
}
