import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A Flutter + Widgetbook repository for bench:cohorts: widgetbook/widgetbook (362 Dart files, 14
 * pubspec.yaml packages), base → head 20 commits apart (widgetbook v3.22.0 → v3.24.0 releases). Cloned
 * from a local git copy: `BENCH_DART_REPO` (a git dir or work tree), else the mirror `fetch` places at
 * /work/.mirror/widgetbook+widgetbook/repo. Undefined when neither exists.
 */
export const DART_BASE = '255f0944ea17cb19801246c45064b798d66bbf37';
export const DART_HEAD = '8588916b46ef0c81ec1f2a55b06b9daa896b370b';

export function buildDartRepo(): { dir: string; base: string; head: string; label: string; cleanup(): void } | undefined {
  const source = process.env.BENCH_DART_REPO ?? '/work/.mirror/widgetbook+widgetbook/repo';
  if (!fs.existsSync(source)) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-dart-'));
  execFileSync('git', ['clone', '-q', '--no-checkout', source, dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('git', ['checkout', '-q', DART_HEAD], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  return { dir, base: DART_BASE, head: DART_HEAD, label: `widgetbook/widgetbook ${DART_BASE.slice(0, 8)} → ${DART_HEAD.slice(0, 8)} (Flutter + Widgetbook, Dart)`, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
