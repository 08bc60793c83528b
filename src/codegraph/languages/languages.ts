import * as path from 'node:path';
import type { Node } from 'web-tree-sitter';
import type { FileFacts } from '../facts';
import type { ImportStyle } from '../import-facts';
import { extractFactsWithTypeScript } from '../typescript-parser';
import { DART_TAGS, dartRepairSource } from './lang-dart';
import { KOTLIN_TAGS, kotlinRepairSource } from './lang-kotlin';
import { SWIFT_TAGS, swiftPrepareSource } from './lang-swift';
import { ZIG_REFERENCE_TAGS } from './lang-zig';
import { PHP_EXTRA_TAGS } from './lang-php';
import { CSHARP_EXTRA_TAGS } from './lang-csharp';

/**
 * The grammars the code graph understands (SPEC §8.1): every grammar that loads in web-tree-sitter from
 * a registry package, plus Dart, Kotlin and Swift, whose registry packages ship C sources only: their wasm
 * is built from those sources by tools/build-grammars.js and committed in src/codegraph/languages/grammars/
 * (language-specific tags and import code in lang-<language>.ts). Each language uses its grammar's own `queries/tags.scm`, plus `extraTags` where the
 * upstream file under-reports, plus `sweepTypes`: the identifier node types a use of an imported binding
 * can have (tags.scm only reports calls, which would miss a function passed by reference or a type in
 * `extends`); those uses are found by scanning the text for the imported names, then checked on the tree.
 */

export interface LanguageSpec {
  id: string;
  /** npm package and file of the grammar wasm; package `.` is src/codegraph/grammars (built by tools/build-grammars.js). */
  wasm: [pkg: string, file: string];
  /** tags.scm files, concatenated in order ([pkg, file]). */
  tags: Array<[pkg: string, file: string]>;
  extraTags: string;
  sweepTypes: string[];
  imports: ImportStyle;
  /** File extensions (with dot) resolved by relative imports, in probe order. */
  moduleExtensions: string[];
  /** Another parser for texts on which the grammar produces ERROR nodes (e.g. TypeScript's own for TS/JS). */
  errorFallback?: (source: string, languageId: string) => FileFacts;
  /**
   * For a text with parse errors: the same text with constructs the grammar lacks (and the graph does not
   * need) blanked or moved, same length and offsets, for a second parse, whose tree is used only when it
   * has no errors; undefined when there is nothing to repair.
   */
  repairSource?: (source: string, root: Node) => string | undefined;
  /**
   * Like repairSource, but from the text alone and tried before the first parse (Swift: the grammar's error
   * recovery on the constructs it lacks takes seconds per file): the rewritten text's tree is used only when
   * it has no errors, else the original is parsed as usual. Undefined when there is nothing to rewrite.
   */
  prepareSource?: (source: string) => string | undefined;
}

const ECMA_EXTRA = `
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant))
(program (variable_declaration (variable_declarator name: (identifier) @name) @definition.constant))
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant))
(export_statement (variable_declaration (variable_declarator name: (identifier) @name) @definition.constant))
`;
const TS_EXTRA = `${ECMA_EXTRA}
(internal_module name: (_) @name) @definition.module
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(public_field_definition name: (property_identifier) @name value: [(arrow_function) (function_expression)]) @definition.method
(ambient_declaration (function_signature name: (identifier) @name) @definition.function)
(program (ambient_declaration (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant)))
(program (ambient_declaration (variable_declaration (variable_declarator name: (identifier) @name) @definition.constant)))
(export_statement (ambient_declaration (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant)))
(export_statement (ambient_declaration (variable_declaration (variable_declarator name: (identifier) @name) @definition.constant)))
(extends_clause value: (identifier) @name) @reference.class
`;
const JS_EXTRA = `${ECMA_EXTRA}
(field_definition property: (property_identifier) @name value: [(arrow_function) (function_expression)]) @definition.method
`;
const TS_SWEEP = ['identifier', 'type_identifier', 'shorthand_property_identifier'];
const C_CALLS = `(call_expression function: (identifier) @name) @reference.call`;

const TS_EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.js', '.jsx', '.mjs', '.cjs'];

export const LANGUAGES: Record<string, LanguageSpec> = {
  typescript: {
    id: 'typescript',
    errorFallback: extractFactsWithTypeScript,
    wasm: ['tree-sitter-typescript', 'tree-sitter-typescript.wasm'],
    tags: [['tree-sitter-javascript', 'queries/tags.scm'], ['tree-sitter-typescript', 'queries/tags.scm']],
    extraTags: TS_EXTRA,
    sweepTypes: TS_SWEEP,
    imports: 'ecmascript',
    moduleExtensions: TS_EXTENSIONS,
  },
  tsx: {
    id: 'tsx',
    errorFallback: extractFactsWithTypeScript,
    wasm: ['tree-sitter-typescript', 'tree-sitter-tsx.wasm'],
    tags: [['tree-sitter-javascript', 'queries/tags.scm'], ['tree-sitter-typescript', 'queries/tags.scm']],
    extraTags: TS_EXTRA,
    sweepTypes: TS_SWEEP,
    imports: 'ecmascript',
    moduleExtensions: TS_EXTENSIONS,
  },
  javascript: {
    id: 'javascript',
    errorFallback: extractFactsWithTypeScript,
    wasm: ['tree-sitter-javascript', 'tree-sitter-javascript.wasm'],
    tags: [['tree-sitter-javascript', 'queries/tags.scm']],
    extraTags: JS_EXTRA,
    sweepTypes: ['identifier', 'shorthand_property_identifier'],
    imports: 'ecmascript',
    moduleExtensions: ['.js', '.jsx', '.mjs', '.cjs', '.ts', '.tsx'],
  },
  python: {
    id: 'python',
    wasm: ['tree-sitter-python', 'tree-sitter-python.wasm'],
    tags: [['tree-sitter-python', 'queries/tags.scm']],
    extraTags: '',
    sweepTypes: ['identifier'],
    imports: 'python',
    moduleExtensions: ['.py', '.pyi'],
  },
  go: {
    id: 'go',
    wasm: ['tree-sitter-go', 'tree-sitter-go.wasm'],
    tags: [['tree-sitter-go', 'queries/tags.scm']],
    extraTags: `
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.constant))
`,
    sweepTypes: ['identifier', 'package_identifier', 'type_identifier'],
    imports: 'go',
    moduleExtensions: ['.go'],
  },
  java: {
    id: 'java',
    wasm: ['tree-sitter-java', 'tree-sitter-java.wasm'],
    tags: [['tree-sitter-java', 'queries/tags.scm']],
    extraTags: `
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(constructor_declaration name: (identifier) @name) @definition.method
(type_identifier) @name @reference.type
`,
    sweepTypes: ['identifier', 'type_identifier'],
    imports: 'java',
    moduleExtensions: ['.java'],
  },
  rust: {
    id: 'rust',
    wasm: ['tree-sitter-rust', 'tree-sitter-rust.wasm'],
    tags: [['tree-sitter-rust', 'queries/tags.scm']],
    extraTags: `(type_item name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant`,
    sweepTypes: ['identifier', 'type_identifier'],
    imports: 'rust',
    moduleExtensions: ['.rs'],
  },
  ruby: {
    id: 'ruby',
    wasm: ['tree-sitter-ruby', 'tree-sitter-ruby.wasm'],
    tags: [['tree-sitter-ruby', 'queries/tags.scm']],
    extraTags: '',
    sweepTypes: [],
    imports: 'ruby',
    moduleExtensions: ['.rb'],
  },
  c: {
    id: 'c',
    wasm: ['tree-sitter-c', 'tree-sitter-c.wasm'],
    tags: [['tree-sitter-c', 'queries/tags.scm']],
    extraTags: C_CALLS,
    sweepTypes: [],
    imports: 'include',
    moduleExtensions: ['.h', '.c'],
  },
  cpp: {
    id: 'cpp',
    wasm: ['tree-sitter-cpp', 'tree-sitter-cpp.wasm'],
    tags: [['tree-sitter-cpp', 'queries/tags.scm']],
    extraTags: C_CALLS,
    sweepTypes: [],
    imports: 'include',
    moduleExtensions: ['.h', '.hpp', '.hh', '.cpp', '.cc'],
  },
  csharp: {
    id: 'csharp',
    wasm: ['tree-sitter-c-sharp', 'tree-sitter-c_sharp.wasm'],
    tags: [['tree-sitter-c-sharp', 'queries/tags.scm']],
    extraTags: CSHARP_EXTRA_TAGS,
    sweepTypes: [],
    imports: 'csharp',
    moduleExtensions: ['.cs'],
  },
  php: {
    id: 'php',
    wasm: ['tree-sitter-php', 'tree-sitter-php.wasm'],
    tags: [['tree-sitter-php', 'queries/tags.scm']],
    extraTags: PHP_EXTRA_TAGS,
    sweepTypes: [],
    imports: 'php',
    moduleExtensions: ['.php'],
  },
  zig: {
    id: 'zig',
    wasm: ['@tree-sitter-grammars/tree-sitter-zig', 'tree-sitter-zig.wasm'],
    // The zig grammar package ships no tags.scm; this is the equivalent.
    tags: [],
    extraTags: `
(function_declaration name: (identifier) @name) @definition.function
(variable_declaration (identifier) @name [(struct_declaration) (enum_declaration) (union_declaration)]) @definition.class
(call_expression function: (identifier) @name) @reference.call
${ZIG_REFERENCE_TAGS}`,
    sweepTypes: [],
    imports: 'zig',
    moduleExtensions: ['.zig'],
  },
  dart: {
    id: 'dart',
    wasm: ['.', 'tree-sitter-dart.wasm'],
    tags: [],
    extraTags: DART_TAGS,
    repairSource: dartRepairSource,
    sweepTypes: [],
    imports: 'dart',
    moduleExtensions: ['.dart'],
  },
  kotlin: {
    id: 'kotlin',
    wasm: ['.', 'tree-sitter-kotlin.wasm'],
    tags: [],
    extraTags: KOTLIN_TAGS,
    repairSource: kotlinRepairSource,
    sweepTypes: [],
    imports: 'kotlin',
    moduleExtensions: ['.kt', '.kts'],
  },
  swift: {
    id: 'swift',
    wasm: ['.', 'tree-sitter-swift.wasm'],
    tags: [],
    extraTags: SWIFT_TAGS,
    prepareSource: swiftPrepareSource,
    sweepTypes: [],
    imports: 'swift',
    moduleExtensions: ['.swift'],
  },
};

const BY_EXTENSION: Record<string, string> = {
  '.ts': 'typescript', '.mts': 'typescript', '.cts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript', '.jsx': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript',
  '.py': 'python', '.pyi': 'python',
  '.go': 'go',
  '.rs': 'rust',
  '.java': 'java',
  '.rb': 'ruby',
  '.c': 'c', '.h': 'c',
  '.cc': 'cpp', '.cpp': 'cpp', '.cxx': 'cpp', '.hpp': 'cpp', '.hh': 'cpp', '.hxx': 'cpp',
  '.cs': 'csharp',
  '.php': 'php',
  '.zig': 'zig',
  '.dart': 'dart',
  '.kt': 'kotlin', '.kts': 'kotlin',
  '.swift': 'swift',
};

/** Extensions of source code in languages we have no grammar for: listed as such, never grouped semantically. */
const UNSUPPORTED_SOURCE: Record<string, string> = {
  '.scala': 'scala', '.m': 'objective-c',
  '.mm': 'objective-c', '.lua': 'lua', '.pl': 'perl', '.pm': 'perl', '.r': 'r', '.jl': 'julia', '.ex': 'elixir',
  '.exs': 'elixir', '.erl': 'erlang', '.hs': 'haskell', '.ml': 'ocaml', '.fs': 'fsharp', '.clj': 'clojure',
  '.groovy': 'groovy', '.sh': 'shell', '.bash': 'shell', '.ps1': 'powershell', '.vue': 'vue', '.svelte': 'svelte',
  '.elm': 'elm', '.nim': 'nim', '.cr': 'crystal', '.v': 'v', '.sol': 'solidity', '.cob': 'cobol', '.f90': 'fortran',
};

export function languageOf(filePath: string): string | undefined {
  return BY_EXTENSION[extensionOf(filePath)];
}

/** Display names of the languages files are recognised in but grouped by path (no grammar). */
export const UNSUPPORTED_LANGUAGE_NAMES: Record<string, string> = {
  scala: 'Scala', 'objective-c': 'Objective-C', lua: 'Lua', perl: 'Perl', r: 'R', julia: 'Julia', elixir: 'Elixir',
  erlang: 'Erlang', haskell: 'Haskell', ocaml: 'OCaml', fsharp: 'F#', clojure: 'Clojure', groovy: 'Groovy',
  shell: 'Shell', powershell: 'PowerShell', vue: 'Vue', svelte: 'Svelte', elm: 'Elm', nim: 'Nim', crystal: 'Crystal',
  v: 'V', solidity: 'Solidity', cobol: 'COBOL', fortran: 'Fortran',
};

/** Every language id UNSUPPORTED_SOURCE names. */
export const unsupportedLanguageIds = (): string[] => [...new Set(Object.values(UNSUPPORTED_SOURCE))];

export function unsupportedLanguageOf(filePath: string): string | undefined {
  return UNSUPPORTED_SOURCE[extensionOf(filePath)];
}

function extensionOf(filePath: string): string {
  const base = path.posix.basename(filePath).toLowerCase();
  if (base.endsWith('.d.ts')) return '.ts';
  return path.posix.extname(base);
}
