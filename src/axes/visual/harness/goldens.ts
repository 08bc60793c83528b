import type { HarnessInput, HarnessOutcome } from './types';

/**
 * Where committed goldens live: PNGs under a `goldens/`, `__screenshots__/` or `__image_snapshots__/`
 * folder (Flutter, Playwright/Cypress, jest-image-snapshot), under a Playwright-style `*-snapshots/`
 * folder, or named `*.golden.png`.
 */
const GOLDEN_FOLDER = /(^|\/)(goldens|__screenshots__|__image_snapshots__|[^/]+-snapshots)\//;
const GOLDEN_FILE = /\.golden\.png$/i;

export function isGoldenPath(path: string): boolean {
  if (!/\.png$/i.test(path)) return false;
  return GOLDEN_FILE.test(path) || GOLDEN_FOLDER.test(path);
}

/**
 * The committed-goldens harness: the golden PNGs the PR adds, changes, renames or removes, read as git
 * blobs at base and head. The snapshotId is the golden's repo path (its head path for a rename, whose
 * base image is read from the old path, so a moved-but-identical golden is `unchanged`).
 */
export async function collectGoldens(input: HarnessInput): Promise<HarnessOutcome> {
  const { repo, baseSha, headSha } = input;
  const base = new Map<string, Uint8Array>();
  const head = new Map<string, Uint8Array>();
  for (const file of input.changedFiles) {
    const inHead = file.status !== 'deleted' && isGoldenPath(file.path);
    const basePath = file.status === 'renamed' ? file.oldPath : file.status === 'added' || file.status === 'copied' ? undefined : file.path;
    const inBase = basePath !== undefined && isGoldenPath(basePath);
    if (!inHead && !inBase) continue;
    const id = inHead ? file.path : basePath!;
    if (inHead) {
      const bytes = await repo.readFileAt(headSha, file.path);
      if (bytes) head.set(id, bytes);
    }
    if (inBase) {
      const bytes = await repo.readFileAt(baseSha, basePath!);
      if (bytes) base.set(id, bytes);
    }
    // A golden renamed out of a golden location is a removal; into one, an addition.
    if (inBase && !inHead && file.status === 'renamed') head.delete(id);
  }
  if (base.size === 0 && head.size === 0) return { harness: 'goldens', status: 'not_applicable' };
  return { harness: 'goldens', status: 'ok', base, head };
}
