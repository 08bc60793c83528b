import { loadRepoState, openRegisteredRepo } from '../compute/streams';
import { DomainError } from '../domain-error';
import type { GitRepo } from '../git/repo';
import type { WorkspaceHandle } from '../workspaces/registry';

/** A full commit id: 40 (SHA-1) or 64 (SHA-256) hex digits. */
export const isFullSha = (sha: string): boolean => sha.length === 40 || sha.length === 64;

/**
 * SPEC §10: every SHA is resolved to the full commit through the registered repo, so an abbreviated id
 * and its full form can never name two rounds. `fields` maps a field name to the id given. With the repo
 * registered, each must name a commit in it (`unknown_commit`, naming the field) — unless `allowUnknownFull`
 * and it is already full (a webhook may announce a head before the clone has fetched it). Without a
 * registered repo nothing can be resolved: full ids are taken as given, abbreviated ones are refused.
 */
export async function resolveCommits<K extends string>(ws: WorkspaceHandle, repoId: string, fields: Record<K, string>, opts: { allowUnknownFull?: boolean } = {}): Promise<Record<K, string>> {
  const repo = await openRepoIfRegistered(ws, repoId);
  const out = {} as Record<K, string>;
  try {
    for (const field of Object.keys(fields) as K[]) {
      const given = fields[field];
      if (!repo) {
        if (!isFullSha(given)) {
          throw new DomainError('unresolvable_commit', `${field}: "${given}" is abbreviated and repo "${repoId}" is not registered, so it cannot be resolved; give the full commit id or register the repo`, { field, sha: given });
        }
        out[field] = given;
        continue;
      }
      try {
        out[field] = await repo.revParse(given);
      } catch (err) {
        if ((err as DomainError).code !== 'unknown_commit') throw err;
        if (opts.allowUnknownFull && isFullSha(given)) out[field] = given;
        else throw new DomainError('unknown_commit', `${field}: "${given}" does not name a commit in repo "${repoId}"`, { field, sha: given });
      }
    }
  } finally {
    repo?.close();
  }
  return out;
}

/** The registered clone of `repoId`, or null when no repo of that id is registered. */
export async function openRepoIfRegistered(ws: WorkspaceHandle, repoId: string): Promise<GitRepo | null> {
  let state;
  try {
    state = await loadRepoState(ws, repoId);
  } catch (err) {
    if ((err as DomainError).code === 'repo_not_found') return null;
    throw err;
  }
  return openRegisteredRepo(state);
}
