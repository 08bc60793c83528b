import type { GitRepo, ChangedFile } from '../git/repo';
import type { ApiContractComputation, VisualComputation } from '../axes/types';

/**
 * The deterministic axes are computed by their own modules (src/axes/api-contract, src/axes/visual).
 * They are loaded at run time so the pipeline still records a computation (with the axis `unavailable`
 * and the reason) when an axis module is missing or throws.
 */
export async function runApiContract(repo: GitRepo, baseSha: string, headSha: string, changedFiles: ChangedFile[]): Promise<ApiContractComputation> {
  try {
    const mod = require('../axes/api-contract/index') as { computeApiContract?: (i: unknown) => Promise<ApiContractComputation> };
    if (!mod.computeApiContract) return { status: 'unavailable', reason: 'api-contract axis module exports no computeApiContract', specs: [], changes: [] };
    return await mod.computeApiContract({ readFile: (commit: string, p: string) => repo.readFileAt(commit, p), baseSha, headSha, changedFiles });
  } catch (e) {
    return { status: 'unavailable', reason: `api-contract axis could not run: ${(e as Error).message}`.slice(0, 4000), specs: [], changes: [] };
  }
}

export async function runVisual(repo: GitRepo, baseSha: string, headSha: string, changedFiles: ChangedFile[], workspaceDir: string, renderCommand?: string): Promise<VisualComputation> {
  try {
    const mod = require('../axes/visual/index') as { computeVisual?: (i: unknown) => Promise<VisualComputation> };
    if (!mod.computeVisual) return { status: 'unavailable', reason: 'visual axis module exports no computeVisual', snapshots: [] };
    return await mod.computeVisual({ repo, baseSha, headSha, changedFiles, workspaceDir, renderCommand });
  } catch (e) {
    return { status: 'unavailable', reason: `visual axis could not run: ${(e as Error).message}`.slice(0, 4000), snapshots: [] };
  }
}
