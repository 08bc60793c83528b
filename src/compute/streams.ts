import * as path from 'node:path';
import { DomainError } from '../domain-error';
import type { RecordedEvent } from '../events/envelope';
import type { CohortData } from '../events/catalogue/compute';
import type { Forge, RepoConfig } from '../events/catalogue/repo';
import { loadStream } from '../workspaces/load-stream';
import { StreamFold } from '../events/kernel-types';
import { GitRepo } from '../git/repo';
import type { WorkspaceHandle } from '../workspaces/registry';
import type { RepoEvent, PrEvent } from '../events/catalogue/event-types';

/** The repo stream folded: registration and the commits indexed. */
export interface RepoState {
  registered: boolean;
  repoId?: string;
  path?: string;
  forge?: Forge;
  defaultBranch?: string;
  config?: RepoConfig;
  indexed: Record<string, { engineVersion?: string; fileCount: number; symbolCount: number }>;
}

export const repoFold: StreamFold<RepoState> = {
  initialState: () => ({ registered: false, indexed: {} }),
  evolve(s, e: RepoEvent) {
    if (e.type === 'RepoRegistered') {
      Object.assign(s, { registered: true, repoId: e.data.repoId, path: e.data.path, forge: e.data.forge, defaultBranch: e.data.defaultBranch, config: e.data.config });
    } else if (e.type === 'RepoIndexed') {
      s.indexed[e.data.commit] = { engineVersion: e.data.engineVersion, fileCount: e.data.fileCount, symbolCount: e.data.symbolCount };
    }
    return s;
  },
};

/** What the compute commands need from the PR stream: does the review exist, its current round, the latest computation. */
export interface ComputeState {
  exists: boolean;
  baseSha?: string;
  headSha?: string;
  latest?: { inputsDigest: string; baseSha: string; headSha: string; cohorts: CohortData[] };
  /** Current summary per cohort key: keyed by content-derived keys, so it survives rebases. */
  summaries: Record<string, { markdown: string; by: string }>;
  diagrams: number;
  /** The head of every round, in order (requested, requested again, or started by a compute at a new head). */
  roundHeads: string[];
  /** The PR's latest observed head (webhook, poll, client), the base reported with it, and when. */
  observed: { headSha: string; baseSha: string | null; at: string | null } | null;
}

export const computeFold: StreamFold<ComputeState> = {
  initialState: () => ({ exists: false, summaries: {}, diagrams: 0, roundHeads: [], observed: null }),
  evolve(s, e: PrEvent) {
    switch (e.type) {
      case 'ReviewRequested':
      case 'ReviewRoundStarted':
        s.exists = true;
        s.baseSha = e.data.baseSha as string;
        s.headSha = e.data.headSha as string;
        s.roundHeads.push(e.data.headSha as string);
        break;
      case 'ReviewComputed':
        // The same rule as the PR fold: a compute at a head no round reviewed starts a round.
        if (s.exists && !s.roundHeads.includes(e.data.headSha as string)) s.roundHeads.push(e.data.headSha as string);
        s.latest = { inputsDigest: e.data.inputsDigest as string, baseSha: e.data.baseSha as string, headSha: e.data.headSha as string, cohorts: e.data.cohorts as CohortData[] };
        break;
      case 'HeadObserved':
        s.observed = { headSha: e.data.headSha as string, baseSha: (e.data.baseSha as string | undefined) ?? null, at: (e.data.observedAt as string | undefined) ?? null };
        break;
      case 'CohortSummarySet':
        s.summaries[e.data.cohortKey as string] = { markdown: e.data.markdown as string, by: e.data.by as string };
        break;
      case 'ReviewDiagramAdded':
        s.diagrams++;
        break;
      default:
        break;
    }
    return s;
  },
};

export async function loadRepoState(ws: WorkspaceHandle, repoId: string): Promise<RepoState> {
  const state = (await loadStream(repoFold, ws, `repo-${repoId}`)).state;
  if (!state.registered) throw new DomainError('repo_not_found', `repoId: "${repoId}" is not registered in this workspace`, { repoId });
  return state;
}

export async function loadComputeState(ws: WorkspaceHandle, streamId: string): Promise<ComputeState> {
  return (await loadStream(computeFold, ws, streamId)).state;
}

/** Opens the registered work tree; refuses when it moved or is no longer a git work tree. */
export async function openRegisteredRepo(state: RepoState): Promise<GitRepo> {
  const repo = await GitRepo.open(state.path!);
  if (path.resolve(repo.root) !== path.resolve(state.path!)) {
    repo.close();
    throw new DomainError('repo_moved', `path: the registered work tree ${state.path} now resolves to ${repo.root}`);
  }
  return repo;
}

/** The hosts that are GitHub without any configuration. */
export const GITHUB_HOSTS = ['github.com', 'www.github.com'];

/**
 * Parses an origin remote URL (https, ssh, scp-like) into forge coordinates; undefined for other hosts.
 * GitHub is an exact host match — github.com, or a GitHub Enterprise host the operator configured —
 * because publishing sends the server's GitHub credential to it (a "contains github" test would send it
 * to github.evil.example). GitLab and Bitbucket get no credential, so their self-hosted names still count.
 */
export function forgeFromRemote(url: string, githubEnterpriseHosts: readonly string[] = [], named?: Forge['kind']): Forge | undefined {
  const m = /^(?:[a-z+]+:\/\/)?(?:[^@/]+@)?([^/:]+)(?::\d+)?[:/](.+?)(?:\.git)?\/?$/.exec(url.trim());
  if (!m) return undefined;
  const host = m[1].toLowerCase();
  const github = GITHUB_HOSTS.includes(host) || githubEnterpriseHosts.includes(host);
  // `named`: the operator says which forge a host is (a self-hosted GitLab at git.example.com).
  const kind = named ?? (github ? 'github' : host.includes('github') ? undefined : host.includes('gitlab') ? 'gitlab' : host.includes('bitbucket') ? 'bitbucket' : undefined);
  if (!kind) return undefined;
  const parts = m[2].split('/').filter(Boolean);
  if (parts.length < 2) return undefined;
  const name = parts[parts.length - 1];
  const owner = parts.slice(0, -1).join('/');
  return { kind, owner, name, url: `https://${host}/${owner}/${name}` };
}
