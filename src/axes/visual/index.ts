import { BOUNDS, clipId } from '../../events/catalogue/bounds';
import type { GitRepo } from '../../git/repo';
import type { RenderSandboxConfig } from '../../operator-config';
import type { VisualComputation, VisualSnapshot } from '../types';
import { sha256, type DiffJob } from './diff';
import { collectFlutter } from './harness/flutter';
import { collectGoldens } from './harness/goldens';
import { collectRendered, loadRenderConfig, type RenderConfig } from './harness/render';
import type { HarnessInput, HarnessName, HarnessOutcome } from './harness/types';
import { runDiffJobs } from './pool';
import { writeDiffImage } from './store';

export { visualGate, approvalKeyOf, type VisualGateResult, type GatedSnapshot } from './gate';
export { readDiffImage, writeDiffImage } from './store';
export { compareImages, VISUAL_DIFF_OPTIONS } from './diff';
export { FLUTTER_UNAVAILABLE } from './harness/flutter';

export interface ComputeVisualInput {
  repo: GitRepo;
  baseSha: string;
  headSha: string;
  changedFiles: Array<{ status: string; path: string; oldPath?: string }>;
  /** Diff images are stored in `<workspaceDir>/visual/<sha256>.png`. */
  workspaceDir: string;
  /** The operator's render command for this repo (server configuration, never a request field). */
  renderCommand?: RenderConfig;
  /** The operator enabled `visual` in the repo's own `.review-ledger.json` (read at the base). */
  repoRenderConfig?: boolean;
  /** How the operator config names this repo (`<workspaceId>/<repoId>`), for reasons. */
  renderConfigKey?: string;
  /** Where render commands run (default: bubblewrap with the default limits). */
  renderSandbox?: RenderSandboxConfig;
  /** Worker threads for the diffs (default: all cores). */
  parallelism?: number;
}

/**
 * The visual axis computation of SPEC §12. Every harness that applies to the PR produces base and
 * head images; pairs are diffed (in worker threads), diff images stored content-addressed, and the
 * status says how complete the evidence is, never whether it is acceptable (that is `visualGate`):
 * - `not_applicable`: no harness applies (the PR changes no snapshot and no UI code of a configured
 *   harness);
 * - `pass`: every applicable harness produced images (changes among them are for the gate to judge);
 * - `partial`: some did, some could not (crash, timeout, missing SDK), with their reasons;
 * - `unavailable`: none could.
 */
export async function computeVisual(input: ComputeVisualInput): Promise<VisualComputation> {
  const harnessInput: HarnessInput = { repo: input.repo, baseSha: input.baseSha, headSha: input.headSha, changedFiles: input.changedFiles };
  const outcomes: HarnessOutcome[] = [];
  outcomes.push(await guarded('goldens', () => collectGoldens(harnessInput)));
  outcomes.push(
    await guarded('render', async () =>
      collectRendered(harnessInput, await loadRenderConfig(input.repo, input.baseSha, input.renderCommand, input.repoRenderConfig === true, input.renderConfigKey), 'render', input.renderSandbox),
    ),
  );
  outcomes.push(await guarded('flutter', () => collectFlutter(harnessInput, input.renderSandbox)));

  const applicable = outcomes.filter((o) => o.status !== 'not_applicable');
  if (applicable.length === 0) return { status: 'not_applicable', reason: 'the PR changes no UI snapshot or component of a configured harness', snapshots: [] };

  const snapshots = await diffSnapshots(applicable, input);
  const failed = applicable.filter((o): o is Extract<HarnessOutcome, { status: 'unavailable' }> => o.status === 'unavailable');
  if (failed.length === 0) return { status: 'pass', snapshots };
  const reason = clip(failed.map((o) => `${o.harness}: ${o.reason}`).join('; '));
  return { status: failed.length === applicable.length ? 'unavailable' : 'partial', reason, snapshots };
}

/** Reasons and errors are recorded in events, whose schema caps them at 4000 characters. */
const MAX_REASON = 4000;
const clip = (text: string) => (text.length > MAX_REASON ? `${text.slice(0, MAX_REASON - 1)}…` : text);

/** A harness that throws is unavailable with the error as its reason, never a crash of the axis. */
async function guarded(harness: HarnessName, run: () => Promise<HarnessOutcome>): Promise<HarnessOutcome> {
  try {
    return await run();
  } catch (err) {
    return { harness, status: 'unavailable', reason: `${harness} harness crashed: ${(err as Error).message ?? String(err)}` };
  }
}

/** Snapshot ids are prefixed by harness except for goldens, whose id is their repo path. */
function snapshotIdOf(harness: HarnessName, id: string): string {
  // A deep golden path can outgrow the recorded bound: clipped with a hash, it stays distinct and stable.
  return clipId(harness === 'goldens' ? id : `${harness}:${id}`, BOUNDS.snapshotId);
}

async function diffSnapshots(outcomes: HarnessOutcome[], input: ComputeVisualInput): Promise<VisualSnapshot[]> {
  const snapshots: VisualSnapshot[] = [];
  const jobs: DiffJob[] = [];
  const jobOwners: number[] = [];
  for (const outcome of outcomes) {
    if (outcome.status !== 'ok') continue;
    const ids = [...new Set([...outcome.base.keys(), ...outcome.head.keys()])].sort();
    for (const id of ids) {
      const base = outcome.base.get(id);
      const head = outcome.head.get(id);
      const snapshotId = snapshotIdOf(outcome.harness, id);
      if (base && head) {
        // Byte-identical pairs are settled here by hash: no decode, no round trip to a worker.
        if (Buffer.from(base.buffer, base.byteOffset, base.byteLength).equals(Buffer.from(head.buffer, head.byteOffset, head.byteLength))) {
          const hash = sha256(head);
          snapshots.push({ snapshotId, harness: outcome.harness, state: 'unchanged', baseHash: hash, headHash: hash, changedPixels: 0, changedRatio: 0 });
          continue;
        }
        jobOwners.push(snapshots.length);
        jobs.push({ kind: 'compare', base, head });
        snapshots.push({ snapshotId, harness: outcome.harness, state: 'unchanged' });
      } else if (head) {
        jobOwners.push(snapshots.length);
        jobs.push({ kind: 'validate', head });
        snapshots.push({ snapshotId, harness: outcome.harness, state: 'added', headHash: sha256(head) });
      } else if (base) {
        snapshots.push({ snapshotId, harness: outcome.harness, state: 'removed', baseHash: sha256(base) });
      }
    }
  }
  const results = await runDiffJobs(jobs, { parallelism: input.parallelism });
  for (let j = 0; j < results.length; j++) {
    const result = results[j];
    const snapshot = snapshots[jobOwners[j]];
    if (!result.ok) {
      if (snapshot.state === 'unchanged') snapshot.state = 'changed';
      snapshot.baseHash = result.baseHash ?? snapshot.baseHash;
      snapshot.headHash = result.headHash ?? snapshot.headHash;
      snapshot.error = clip(result.error);
    } else if ('validated' in result) {
      snapshot.width = result.validated.width;
      snapshot.height = result.validated.height;
    } else {
      const c = result.comparison;
      Object.assign(snapshot, { state: c.state, baseHash: c.baseHash, headHash: c.headHash, changedPixels: c.changedPixels, changedRatio: c.changedRatio });
      if (c.width !== undefined) Object.assign(snapshot, { width: c.width, height: c.height });
      if (c.diffPng) snapshot.diffHash = await writeDiffImage(input.workspaceDir, c.diffPng);
    }
  }
  return snapshots;
}
