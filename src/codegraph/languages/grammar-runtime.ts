import * as fs from 'node:fs';
import * as path from 'node:path';
import { Language, Parser, Query } from 'web-tree-sitter';
import { DomainError } from '../../domain-error';
import { LANGUAGES, LanguageSpec } from './languages';

export interface LoadedGrammar {
  spec: LanguageSpec;
  language: Language;
  parser: Parser;
  /** tags.scm (+ extensions), compiled once per process. */
  query: Query;
}

let initialized: Promise<void> | undefined;
const grammars = new Map<string, Promise<LoadedGrammar>>();

/** Grammars built from C sources by tools/build-grammars.js live in src/codegraph/languages/grammars (also when running from dist/). */
function localGrammarsDir(): string {
  const beside = path.join(__dirname, 'grammars');
  return fs.existsSync(beside) ? beside : path.resolve(__dirname, '..', '..', '..', '..', 'src', 'codegraph', 'languages', 'grammars');
}

function packageDir(pkg: string): string {
  if (pkg === '.') return localGrammarsDir();
  return path.dirname(require.resolve(`${pkg}/package.json`));
}

export function wasmPathOf(spec: LanguageSpec): string {
  return path.join(packageDir(spec.wasm[0]), spec.wasm[1]);
}

export function tagsSourceOf(spec: LanguageSpec): string {
  const upstream = spec.tags.map(([pkg, file]) => fs.readFileSync(path.join(packageDir(pkg), file), 'utf8'));
  return [...upstream, spec.extraTags].join('\n');
}

/**
 * The tags query without its doc-comment parts: upstream tags.scm files (JavaScript, Go, Ruby) prefix
 * definitions with `(comment)* @doc .` plus `#strip!` / `#select-adjacent!` / `#set-adjacent!` directives
 * on @doc. Doc comments are never used, and the quantified sibling makes the query engine try every run of
 * comments before a definition (one extra match per comment); without it each definition is matched once.
 * The definition and name captures are the same.
 */
export function withoutDocCaptures(source: string): string {
  return source
    .replace(/\(comment\)\*\s*@doc\s*\.\s*/g, '')
    .replace(/\(#(?:strip|select-adjacent|set-adjacent)! @doc[^)\n]*\)/g, '');
}

export function initTreeSitter(): Promise<void> {
  initialized ??= Parser.init();
  return initialized;
}

/** Loads (once per process) the grammar, its parser and its compiled tags query. */
export function loadGrammar(languageId: string): Promise<LoadedGrammar> {
  let g = grammars.get(languageId);
  if (!g) {
    g = (async () => {
      const spec = LANGUAGES[languageId];
      if (!spec) throw new DomainError('unknown_language', `language: no grammar named "${languageId}"`);
      await initTreeSitter();
      // Bytes, not a path: with a path web-tree-sitter uses a dynamic import() that jest's VM cannot run.
      const language = await Language.load(fs.readFileSync(wasmPathOf(spec)));
      const parser = new Parser();
      parser.setLanguage(language);
      const query = new Query(language, withoutDocCaptures(tagsSourceOf(spec)));
      return { spec, language, parser, query };
    })();
    grammars.set(languageId, g);
  }
  return g;
}
