import { computeApiContract } from '../axes/api-contract/index';
import type { ApiContractComputation, VisualComputation } from '../axes/types';
import { computeVisual } from '../axes/visual/index';
import type { RepoConfig } from '../events/catalogue/repo';
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

export async function runVisual(repo: GitRepo, baseSha: string, headSha: string, changedFiles: ChangedFile[], workspaceDir: string, config?: RepoConfig): Promise<VisualComputation> {
  try {
    const renderCommand = config?.renderCommand && config.renderOutputDir ? { command: config.renderCommand, outputDir: config.renderOutputDir, ...(config.renderTimeoutMs ? { timeoutMs: config.renderTimeoutMs } : {}) } : undefined;
    return await computeVisual({ repo, baseSha, headSha, changedFiles, workspaceDir, renderCommand });
  } catch (e) {
    return { status: 'unavailable', reason: `visual axis could not run: ${(e as Error).message}`.slice(0, 4000), snapshots: [] };
  }
}
