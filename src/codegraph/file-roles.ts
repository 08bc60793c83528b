import * as path from 'node:path';
import type { FileRole } from '../events/catalogue/compute';
import { languageOf, unsupportedLanguageOf } from './languages/languages';

const MANIFESTS = new Set(['package.json', 'go.mod', 'cargo.toml', 'pyproject.toml', 'pubspec.yaml', 'gemfile', 'pom.xml', 'build.gradle', 'build.gradle.kts', 'composer.json', 'setup.py', 'setup.cfg', 'pipfile']);
const LOCKS = new Set(['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'go.sum', 'cargo.lock', 'poetry.lock', 'pipfile.lock', 'pubspec.lock', 'gemfile.lock', 'composer.lock', 'uv.lock', 'bun.lockb']);
const VENDORED = /(^|\/)(node_modules|vendor|third_party|bower_components|\.yarn)\//;
const GENERATED = /(^|\/)(__generated__|generated|dist|build)\/|\.min\.(js|css)$|\.pb\.go$|_pb2\.py$|\.g\.dart$|\.freezed\.dart$|(_|\.)generated\.[a-z]+$|\.designer\.cs$/i;
const DOCS = /\.(md|mdx|rst|adoc|txt)$|(^|\/)(docs?|documentation)\/|(^|\/)(license|licence|changelog|authors|notice)(\.[a-z]+)?$/i;

/** OpenAPI / Swagger spec names (SPEC §11). */
export function isApiSpecPath(p: string): boolean {
  const base = path.posix.basename(p).toLowerCase();
  if (/^(openapi|swagger)\.(ya?ml|json)$/.test(base)) return true;
  return /(openapi|swagger)/.test(base) && /\.(ya?ml|json)$/.test(base);
}

/** Test files by the conventions of each ecosystem. */
export function isTestPath(p: string): boolean {
  const lower = p.toLowerCase();
  const base = path.posix.basename(lower);
  // `.test-d.ts`: tsd type tests.
  if (/\.(test|spec|test-d)\.[cm]?[jt]sx?$/.test(base)) return true;
  if (/(^|\/)(__tests__|__test__|tests?|spec|specs|testing)\//.test(lower)) return true;
  if (/^test_.*\.py$|_test\.py$/.test(base) || base === 'conftest.py') return true;
  if (base.endsWith('_test.go')) return true;
  if (/(^|\/)src\/(test|androidtest|integrationtest)\//.test(lower)) return true;
  if (/(test|tests|it)\.(java|kt|cs|scala)$/.test(base) && /[A-Z]/.test(path.posix.basename(p))) return true;
  if (/_spec\.rb$|_test\.rb$/.test(base)) return true;
  if (/_test\.(c|cc|cpp|rs|zig|dart|exs)$/.test(base) || /test\.php$/.test(base)) return true;
  return false;
}

export function isManifestPath(p: string): boolean {
  const base = path.posix.basename(p).toLowerCase();
  return MANIFESTS.has(base) || /^requirements[\w.-]*\.(txt|in)$/.test(base) || base.endsWith('.csproj');
}

export function isLockPath(p: string): boolean {
  return LOCKS.has(path.posix.basename(p).toLowerCase());
}

/** Role of a changed file (SPEC §8.3); a manifest whose only change is its own version becomes `version-bump` later. */
export function classifyRole(p: string): FileRole {
  if (isLockPath(p)) return 'lock';
  if (isManifestPath(p)) return 'manifest';
  if (VENDORED.test(p)) return 'vendored';
  if (GENERATED.test(p)) return 'generated';
  if (isApiSpecPath(p)) return 'spec';
  const code = languageOf(p) ?? unsupportedLanguageOf(p);
  if (code) return isTestPath(p) ? 'test' : 'source';
  if (DOCS.test(p)) return 'docs';
  return 'other';
}
