/**
 * The language list of README.md and docs/cohorts.md, rendered from the registry (languages.ts), the grammar
 * packages installed and the pins of tools/build-grammars.js (src/codegraph/languages/grammars/pins.json), so the
 * documented languages can never drift from the ones the code graph loads. `--check` exits 1 when stale.
 *   node -r ./tools/ts-register.js src/codegraph/languages/language-docs.ts [--check]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LANGUAGES, UNSUPPORTED_LANGUAGE_NAMES } from './languages';

const ROOT = path.join(__dirname, '..', '..', '..');
export const README = path.join(ROOT, 'README.md');
export const COHORTS_DOC = path.join(ROOT, 'docs', 'cohorts.md');
const GENERATED = 'generated from src/codegraph/languages/languages.ts by src/codegraph/languages/language-docs.ts; do not edit';
export const TABLE_BEGIN = `<!-- languages-table:begin (${GENERATED}) -->`;
export const TABLE_END = '<!-- languages-table:end -->';
export const LIST_BEGIN = `<!-- languages-list:begin (${GENERATED}) -->`;
export const LIST_END = '<!-- languages-list:end -->';

interface GrammarPin { language: string; pkg: string; version: string }

/** One row of the table: the registry ids it covers and how their cross-file references resolve. */
export interface LanguageDoc { ids: string[]; label: string; resolution: string }

export const LANGUAGE_DOCS: LanguageDoc[] = [
  { ids: ['typescript', 'tsx', 'javascript'], label: 'TypeScript, TSX, JavaScript', resolution: "relative imports, re-exports, tsconfig `paths`/`baseUrl` (TypeScript's own parser where tree-sitter finds errors)" },
  { ids: ['python'], label: 'Python', resolution: 'relative and absolute module imports' },
  { ids: ['go'], label: 'Go', resolution: 'go.mod module paths, package scope' },
  { ids: ['rust'], label: 'Rust', resolution: '`use` / `mod` through the crate tree' },
  { ids: ['java'], label: 'Java', resolution: 'type and on-demand imports, package scope' },
  { ids: ['ruby'], label: 'Ruby', resolution: '`require_relative`' },
  { ids: ['c', 'cpp'], label: 'C, C++', resolution: 'quoted `#include`' },
  { ids: ['csharp'], label: 'C#', resolution: 'namespaces (`using A.B;`, `using X = A.B.C;`, the file\'s own and enclosing namespaces) within the file\'s project (the nearest `.csproj` up) and the projects reached through `<ProjectReference>` (transitively); only `public` types cross a project; a same-name type of an unreferenced project never binds. No `.csproj`: one project' },
  { ids: ['php'], label: 'PHP', resolution: '`use` (plain, aliased, grouped) through composer.json PSR-4 `autoload`/`autoload-dev`; the file\'s own namespace through PSR-4' },
  { ids: ['zig'], label: 'Zig', resolution: '`@import("path.zig")` as a namespace or `@import(…).Decl`; `std` and build.zig modules stay external' },
  { ids: ['dart'], label: 'Dart', resolution: '`package:<name>/…` through each `pubspec.yaml`\'s `name` (→ `<dir>/lib/…`), relative URIs, `export`, `part`; `dart:` and pub packages stay external. Widgetbook `@UseCase(type: W)` links to `W.build`' },
  { ids: ['kotlin'], label: 'Kotlin', resolution: 'by package: `import a.b.C`, `import a.b.*`, aliases, same-package declarations (shares Java\'s package tables), within the file\'s Gradle module (`settings.gradle(.kts)` `include`, moved `projectDir`s) and the modules its build script names as `project(":m")` or `projects.m` dependencies, plus their `api` ones; Java files keep the same boundaries. No settings file: one module' },
  { ids: ['swift'], label: 'Swift', resolution: 'by module: the files of one SwiftPM target (`Sources/<T>/`, `Tests/<T>/`) see each other; `import T` opens target T; Swift files outside SwiftPM targets are one app module (Xcode projects are not read)' },
];

function grammarOf(id: string): string {
  const spec = LANGUAGES[id];
  const [pkg] = spec.wasm;
  if (pkg === '.') {
    const pins = JSON.parse(fs.readFileSync(path.join(__dirname, 'grammars', 'pins.json'), 'utf8')) as GrammarPin[];
    const pin = pins.find((p) => p.language === id);
    if (!pin) throw new Error(`${id}: a built grammar without a pin in src/codegraph/languages/grammars/pins.json`);
    return `built from ${pin.pkg} ${pin.version}'s C sources`;
  }
  const version = (JSON.parse(fs.readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
  return `${pkg} ${version} (its wasm)`;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|');

export function renderLanguageTable(): string {
  const lines = [TABLE_BEGIN, '', '| Language | Grammar (web-tree-sitter 0.27) | Cross-file resolution |', '|---|---|---|'];
  for (const row of LANGUAGE_DOCS) {
    const grammars = [...new Set(row.ids.map(grammarOf))].join('; ');
    lines.push(`| ${row.label} | ${cell(grammars)} | ${cell(row.resolution)} |`);
  }
  lines.push('', `Path grouping (no grammar; listed with that reason): ${pathGroupedNames().join(', ')}, and every other language.`, '', TABLE_END);
  return lines.join('\n');
}

export function pathGroupedNames(): string[] {
  return [...new Set(Object.values(UNSUPPORTED_LANGUAGE_NAMES))].sort((a, b) => a.localeCompare(b));
}

export function renderLanguageList(): string {
  const labels = LANGUAGE_DOCS.flatMap((r) => r.label.split(', '));
  const list = `${labels.slice(0, -1).join(', ')} and ${labels[labels.length - 1]}`;
  // Indented: the list sits inside a README bullet.
  return `${LIST_BEGIN}\n  Semantic cohorts (a grammar and resolved cross-file imports): ${list}. Path grouping, with the\n  reason: every other language (${pathGroupedNames().join(', ')}, …).\n  ${LIST_END}`;
}

/** Replaces the block from the begin marker (matched by its first words, `<!-- name:begin`) through the end one. */
function replaceBetween(doc: string, begin: string, end: string, body: string, file: string): string {
  const s = doc.indexOf(begin.slice(0, begin.indexOf(' (')));
  const e = doc.indexOf(end);
  if (s < 0 || e < s) throw new Error(`${file}: the markers ${begin} … ${end} are missing`);
  return doc.slice(0, s) + body + doc.slice(e + end.length);
}

export const withLanguageTable = (doc: string): string => replaceBetween(doc, TABLE_BEGIN, TABLE_END, renderLanguageTable(), 'docs/cohorts.md');
export const withLanguageList = (doc: string): string => replaceBetween(doc, LIST_BEGIN, LIST_END, renderLanguageList(), 'README.md');

if (require.main === module) {
  let stale = false;
  for (const [file, update] of [[COHORTS_DOC, withLanguageTable], [README, withLanguageList]] as const) {
    const current = fs.readFileSync(file, 'utf8');
    const next = update(current);
    if (next === current) continue;
    if (process.argv.includes('--check')) {
      console.error(`${file}: the language list is stale; run node -r ./tools/ts-register.js src/codegraph/languages/language-docs.ts`);
      stale = true;
    } else {
      fs.writeFileSync(file, next);
      console.log(`wrote the language list to ${file}`);
    }
  }
  if (stale) process.exit(1);
}
