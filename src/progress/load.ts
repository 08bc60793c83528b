import { CommandExecutor } from '../commands/kernel';
import type { WorkspaceHandle } from '../workspaces/registry';
import { partialCohorts, progressFold, ProgressState, CohortProgress } from './progress';

// Reuses the kernel's per-workspace fold cache: reading progress costs only the stream's tail.
const reader = new CommandExecutor();

export async function loadProgressState(ws: WorkspaceHandle, streamId: string): Promise<ProgressState> {
  return (await reader.load(progressFold, ws, streamId)).state;
}

/** The cohorts of the latest computation the roster has not reviewed completely (none before a computation). */
export async function incompleteCohortsOf(ws: WorkspaceHandle, streamId: string): Promise<CohortProgress[]> {
  const s = await loadProgressState(ws, streamId);
  return s.cohorts ? partialCohorts(s, s.cohorts, s.roster) : [];
}
