import { computeApiContract } from '../axes/api-contract/index';
import type { ApiContractComputation, VisualComputation } from '../axes/types';
import { computeVisual } from '../axes/visual/index';
import type { OperatorRenderEntry, RenderSandboxConfig } from '../operator-config';
import type { ChangedFile, GitRepo } from '../git/repo';

/**
 * The deterministic axes are computed by their own modules (src/axes/*). A throwing axis never sinks the
 * computation: it is recorded `unavailable` with the reason (absence of evidence is never green).
 */
export async function runApiContract(repo: GitRepo, baseSha: string, headSha: string, changedFiles: ChangedFile[]): Promise<ApiContractComputation> {
  try {
    // The head commit's date, not the wall clock, so a recompute of the same inputs gives the same result.
    const asOf = await repo.commitDate(headSha);
    return await computeApiContract({ readFile: (commit, p) => repo.readFileAt(commit, p), baseSha, headSha, changedFiles, asOf });
  } catch (e) {
    return { status: 'unavailable', reason: `api-contract axis could not run: ${(e as Error).message}`.slice(0, 4000), specs: [], changes: [] };
  }
}

/**
 * What the operator configured for one repo's render harness (operator-config.ts). Never read from the
 * repo's registration: a render command in an RPC request or an old `RepoRegistered` event is ignored.
 */
export interface RenderSetup {
  /** `<workspaceId>/<repoId>`, the key of `render.repos` in the operator config. */
  key: string;
  entry?: OperatorRenderEntry;
  sandbox: RenderSandboxConfig;
}

export async function runVisual(repo: GitRepo, baseSha: string, headSha: string, changedFiles: ChangedFile[], workspaceDir: string, render?: RenderSetup): Promise<VisualComputation> {
  try {
    const e = render?.entry;
    const renderCommand = e?.command && e.outputDir ? { command: e.command, outputDir: e.outputDir, ...(e.timeoutMs ? { timeoutMs: e.timeoutMs } : {}), ...(e.paths ? { paths: e.paths } : {}) } : undefined;
    return await computeVisual({ repo, baseSha, headSha, changedFiles, workspaceDir, renderCommand, repoRenderConfig: e?.repoConfig === true, renderConfigKey: render?.key, renderSandbox: render?.sandbox });
  } catch (e) {
    return { status: 'unavailable', reason: `visual axis could not run: ${(e as Error).message}`.slice(0, 4000), snapshots: [] };
  }
}
