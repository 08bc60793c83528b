import { loadStream } from '../workspaces/load-stream';
import type { WorkspaceHandle } from '../workspaces/registry';
import { partialCohorts, progressFold, ProgressState, CohortProgress } from './progress';

// Reuses the per-workspace fold cache: reading progress costs only the stream's tail.
export async function loadProgressState(ws: WorkspaceHandle, streamId: string): Promise<ProgressState> {
  return (await loadStream(progressFold, ws, streamId)).state;
}

/** The cohorts of the latest computation the roster has not reviewed completely (none before a computation). */
export async function incompleteCohortsOf(ws: WorkspaceHandle, streamId: string): Promise<CohortProgress[]> {
  const s = await loadProgressState(ws, streamId);
  return s.cohorts ? partialCohorts(s, s.cohorts, s.roster) : [];
}
