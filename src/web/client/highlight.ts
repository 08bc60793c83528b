/// <reference lib="dom" />
/**
 * Syntax highlighting for the diff, by highlight.js (its core and the languages the ledger's grammars
 * cover). This module is a chunk of its own, imported on demand: the first paint shows plain code and
 * the rows are re-drawn highlighted once it has loaded.
 */
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import dart from 'highlight.js/lib/languages/dart';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import markdown from 'highlight.js/lib/languages/markdown';
import php from 'highlight.js/lib/languages/php';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import scss from 'highlight.js/lib/languages/scss';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGUAGES = { bash, c, cpp, csharp, css, dart, go, java, javascript, json, kotlin, markdown, php, python, ruby, rust, scss, sql, swift, typescript, xml, yaml };
for (const [name, def] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, def);

/** Grammar names the ledger records (changedFiles[].language) and file extensions → highlight.js names. */
const BY_GRAMMAR: Record<string, string> = { tsx: 'typescript', c_sharp: 'csharp', 'c-sharp': 'csharp' };
const BY_EXTENSION: Record<string, string> = {
  ts: 'typescript', tsx: 'typescript', mts: 'typescript', cts: 'typescript', js: 'javascript', jsx: 'javascript', mjs: 'javascript', cjs: 'javascript',
  py: 'python', go: 'go', rs: 'rust', java: 'java', kt: 'kotlin', kts: 'kotlin', swift: 'swift', dart: 'dart', rb: 'ruby', php: 'php',
  c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', hpp: 'cpp', cs: 'csharp', css: 'css', scss: 'scss', json: 'json', yaml: 'yaml', yml: 'yaml',
  md: 'markdown', html: 'xml', xml: 'xml', svg: 'xml', sh: 'bash', sql: 'sql',
};

export function languageOf(path: string, grammar?: string): string | null {
  const g = grammar ? (BY_GRAMMAR[grammar] ?? grammar) : null;
  if (g && hljs.getLanguage(g)) return g;
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return ext ? (BY_EXTENSION[ext] ?? null) : null;
}

/**
 * The HTML of one line, highlighted. highlight.js escapes the text it is given (`&`, `<`, `>`, quotes),
 * so its output holds no markup of the code's own. Lines are highlighted one by one: a construct spanning
 * lines (a block comment) is coloured on its first line only — a known limit, cheap and never wrong text.
 */
export function highlightLine(text: string, language: string): string {
  return hljs.highlight(text, { language, ignoreIllegals: true }).value;
}
