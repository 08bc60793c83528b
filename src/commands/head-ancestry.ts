import type { WorkspaceHandle } from '../workspaces/registry';
import { openRepoIfRegistered } from './commits';

/**
 * Head tracking by ancestry (issue 38): the PR's observed head is the newest of what was observed and
 * what a round now reviews. When a round starts at `head` (a request at a new head, a compute at one)
 * and the head observed so far is one of its ancestors, the review has caught up with it: the commands
 * record `head` as observed too, so the review is not shown stale for a head it already covers.
 * Returns that observed head, or null (none observed, the same head, not an ancestor — a force-push —,
 * or no registered clone to ask). Git runs here, at the edge; the decision stays pure.
 */
export async function observedAncestorOf(ws: WorkspaceHandle, repoId: string, observedHead: string | null, head: string): Promise<string | null> {
  if (!observedHead || observedHead === head) return null;
  const repo = await openRepoIfRegistered(ws, repoId);
  if (!repo) return null;
  try {
    return (await repo.isAncestor(observedHead, head)) ? observedHead : null;
  } finally {
    repo.close();
  }
}
