import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { RenderSandboxConfig } from '../../../operator-config';
import { collectRendered } from './render';
import type { HarnessInput, HarnessOutcome } from './types';

/**
 * The four reasons SPEC §12 allows for an unavailable Flutter + Widgetbook harness. A reason may be
 * followed by ": detail".
 */
export const FLUTTER_UNAVAILABLE = Object.freeze({
  noSdk: 'no Flutter SDK on the host',
  noWidgetbook: 'no Widgetbook app in the repo',
  noUseCase: 'no golden-testable use case',
  harnessError: 'golden harness error',
});

/** Where `flutter test --update-goldens` leaves the goldens of the Widgetbook use cases. */
const GOLDEN_OUTPUT_DIR = 'test/goldens';
const GOLDEN_RUN_TIMEOUT_MS = 600_000;

type Pubspec = { name?: string; dependencies?: Record<string, unknown>; dev_dependencies?: Record<string, unknown> };

function readPubspec(bytes: Buffer): Pubspec | undefined {
  try {
    const doc = parseYaml(bytes.toString('utf8')) as unknown;
    return doc && typeof doc === 'object' ? (doc as Pubspec) : undefined;
  } catch {
    return undefined;
  }
}

const dependsOn = (p: Pubspec, name: string) => Boolean((p.dependencies && name in p.dependencies) || (p.dev_dependencies && name in p.dev_dependencies));

/** A `flutter` executable on PATH (or under FLUTTER_ROOT), as the host would run it. */
export function findFlutterSdk(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = (env.PATH ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, 'flutter'));
  if (env.FLUTTER_ROOT) candidates.unshift(path.join(env.FLUTTER_ROOT, 'bin', 'flutter'));
  return candidates.find((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * The Flutter + Widgetbook harness. Applies when the head has a Flutter package (a pubspec.yaml with
 * a `flutter` dependency) and the PR changes Dart code. It then reports exactly one reason when it
 * cannot produce goldens, checking the repo before the host: a missing Widgetbook app or use case is
 * true of the PR on every host, so it is the more useful thing to say. With everything in place it
 * runs `flutter test --update-goldens` in base and head worktrees and compares what lands in
 * test/goldens; any failure there is a "golden harness error".
 */
export async function collectFlutter(input: HarnessInput, sandbox?: RenderSandboxConfig): Promise<HarnessOutcome> {
  const { repo, headSha } = input;
  if (!input.changedFiles.some((f) => f.path.endsWith('.dart'))) return { harness: 'flutter', status: 'not_applicable' };
  const pubspecPaths = (await repo.lsTree(headSha)).filter((e) => e.type === 'blob' && (e.path === 'pubspec.yaml' || e.path.endsWith('/pubspec.yaml'))).map((e) => e.path);
  const pubspecs: Pubspec[] = [];
  for (const p of pubspecPaths) {
    const bytes = await repo.readFileAt(headSha, p);
    const parsed = bytes && readPubspec(bytes);
    if (parsed) pubspecs.push(parsed);
  }
  if (!pubspecs.some((p) => dependsOn(p, 'flutter'))) return { harness: 'flutter', status: 'not_applicable' };

  const unavailable = (reason: string): HarnessOutcome => ({ harness: 'flutter', status: 'unavailable', reason });
  if (!pubspecs.some((p) => dependsOn(p, 'widgetbook'))) return unavailable(FLUTTER_UNAVAILABLE.noWidgetbook);
  if (!(await hasUseCase(input))) return unavailable(FLUTTER_UNAVAILABLE.noUseCase);
  const sdk = findFlutterSdk();
  if (!sdk) return unavailable(FLUTTER_UNAVAILABLE.noSdk);

  // `flutter test` runs the PR's code: in the render sandbox, with the SDK mounted read-only.
  const sdkRoot = path.dirname(path.dirname(fs.realpathSync(sdk)));
  const sandboxed = sandbox && { ...sandbox, readOnlyPaths: [...sandbox.readOnlyPaths, sdkRoot] };
  const run = await collectRendered(input, { command: 'flutter test --update-goldens', outputDir: GOLDEN_OUTPUT_DIR, timeoutMs: GOLDEN_RUN_TIMEOUT_MS }, 'flutter', sandboxed);
  if (run.status === 'unavailable') return unavailable(`${FLUTTER_UNAVAILABLE.harnessError}: ${run.reason}`);
  return run;
}

/** A Widgetbook use case (`@UseCase(` or `@widgetbook.UseCase(`) in the head's Dart code. */
async function hasUseCase(input: HarnessInput): Promise<boolean> {
  try {
    const out = await input.repo.git(['grep', '-l', '-E', '@([A-Za-z_]+\\.)?UseCase\\(', input.headSha, '--', '*.dart']);
    return out.trim().length > 0;
  } catch {
    // git grep exits 1 when nothing matches.
    return false;
  }
}
