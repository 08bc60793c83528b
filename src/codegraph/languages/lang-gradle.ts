import * as path from 'node:path';
import type { BuildModule } from '../build-modules';
import { stripComments } from '../strip-comments';

/**
 * Gradle module boundaries for Kotlin and Java (SPEC §8.1). `settings.gradle(.kts)` declares the modules
 * (`include(":app", ":core:model")`, `include 'lib'`; `project(":x").projectDir = file("libs/x")` moves one),
 * each in `<settings dir>/<path with : as />` by default; the root project owns the rest of the build. A
 * module's `build.gradle(.kts)` names its module dependencies as `<configuration>(project(":m"))` or through
 * type-safe accessors (`projects.core.model`); `api`-like configurations are seen by its dependents too.
 * What a build script computes (includes in a loop, `rootProject.children`) is not evaluated: a dependency
 * on a module the settings do not declare gets the default directory.
 */
/** A Gradle script without comments (strings end at a line break), whitespace runs squeezed to one character. */
function scriptBody(text: string): string {
  // Squeezed so that the patterns below, which put `\s*` beside `\s*` (`\s*\(?\s*project(`), never
  // retry a long run of spaces from each of its characters (quadratic: a build script of `a` and 12,000
  // spaces took 255 ms, 1 MiB ~30 min). A run with a line break becomes one line break.
  return stripComments(text, `"'`, false).replace(/\s+/g, (run) => (run.includes('\n') ? '\n' : ' '));
}

/** `:a:b` for `a:b` or `:a:b:` (trailing colons dropped by hand: /:+$/ is quadratic on a run of them). */
function normalizePath(p: string): string {
  const q = p.startsWith(':') ? p : `:${p}`;
  let end = q.length;
  while (end > 0 && q[end - 1] === ':') end--;
  return q.slice(0, end) || ':';
}

export interface GradleSettings {
  /** Directory of the settings file ("" at the root). */
  dir: string;
  /** Module path (`:a:b`) → repo-relative directory. */
  modules: Map<string, string>;
}

export function gradleSettingsOf(settingsPath: string, text: string): GradleSettings {
  const dir = settingsPath.includes('/') ? settingsPath.slice(0, settingsPath.lastIndexOf('/')) : '';
  const body = scriptBody(text);
  const modules = new Map<string, string>();
  const at = (rel: string) => path.posix.normalize(path.posix.join(dir || '.', rel)).replace(/^\.$/, '');
  // `include(":a", ":b")`, `include ':a', ':b'` (a statement may span lines inside its parentheses).
  for (const m of body.matchAll(/\binclude\b\s*\(?((?:\s*["'][^"'\n]+["']\s*,?)+)/g)) {
    for (const s of m[1].matchAll(/["']([^"'\n]+)["']/g)) {
      const p = normalizePath(s[1].trim());
      modules.set(p, at(p.slice(1).replace(/:/g, '/')));
    }
  }
  for (const m of body.matchAll(/project\(\s*["']([^"']+)["']\s*\)\.projectDir\s*=\s*(?:file\(\s*["']([^"']+)["']\s*\)|(?:new\s+)?File\(\s*(?:settingsDir|rootDir|rootProject\.projectDir)\s*,\s*["']([^"']+)["']\s*\))/g)) {
    modules.set(normalizePath(m[1]), at(m[2] ?? m[3]));
  }
  return { dir, modules };
}

/** `(configuration, module path or accessor)` of each project dependency of a build script. */
export function gradleProjectDepsOf(text: string): Array<{ configuration: string; project?: string; accessor?: string }> {
  const body = scriptBody(text);
  const out: Array<{ configuration: string; project?: string; accessor?: string }> = [];
  for (const m of body.matchAll(/\b(\w+)\s*\(?\s*project\(\s*(?:path\s*[:=]\s*)?["'](:?[^"']*)["']/g)) out.push({ configuration: m[1], project: normalizePath(m[2]) });
  for (const m of body.matchAll(/\b(\w+)\s*\(?\s*projects\.([\w.]+)/g)) out.push({ configuration: m[1], accessor: m[2] });
  return out;
}

const exportedConfiguration = (c: string): boolean => c === 'api' || /Api$/.test(c);
const squash = (s: string): string => s.replace(/[-_.]/g, '').toLowerCase();

/**
 * The Gradle modules of a tree: each settings file's modules, with the dependencies their build scripts
 * (`buildScripts`: repo path → text) declare.
 */
export function gradleModulesOf(settings: GradleSettings[], buildScripts: Map<string, string>): BuildModule[] {
  const out: BuildModule[] = [];
  for (const s of settings) {
    const key = (p: string) => `${s.dir}|${p}`;
    const modules = new Map(s.modules);
    modules.set(':', s.dir);
    const byAccessor = new Map<string, string>();
    for (const p of modules.keys()) if (p !== ':') byAccessor.set(p.slice(1).split(':').map(squash).join('.'), p);
    const pending = [...modules.keys()];
    const done = new Set<string>();
    // Modules sharing a directory share its build script: read once (n such modules re-read it n times).
    const depsOf = new Map<string, ReturnType<typeof gradleProjectDepsOf>>();
    for (let next = 0; next < pending.length; next++) {
      const p = pending[next];
      if (done.has(p)) continue;
      done.add(p);
      const dir = modules.get(p)!;
      const script = ['build.gradle.kts', 'build.gradle'].map((f) => (dir ? `${dir}/${f}` : f)).find((f) => buildScripts.has(f));
      const deps: string[] = [];
      const exported: string[] = [];
      let scriptDeps = script ? depsOf.get(script) : [];
      if (!scriptDeps) depsOf.set(script!, (scriptDeps = gradleProjectDepsOf(buildScripts.get(script!)!)));
      for (const d of scriptDeps) {
        const target = d.project ?? byAccessor.get(d.accessor!.split('.').map(squash).join('.'));
        if (!target || target === p) continue;
        if (!modules.has(target)) {
          modules.set(target, path.posix.normalize(path.posix.join(s.dir || '.', target.slice(1).replace(/:/g, '/'))));
          pending.push(target);
        }
        deps.push(key(target));
        if (exportedConfiguration(d.configuration)) exported.push(key(target));
      }
      out.push({ key: key(p), dir, deps: [...new Set(deps)], exported: [...new Set(exported)] });
    }
  }
  return out;
}
