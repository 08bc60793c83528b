import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { DomainError } from '../domain-error';
import { Forge, forgeSchema, RepoConfig, repoConfigSchema, RepoRegistered } from '../events/catalogue/repo';
import { forgeFromRemote, repoFold, RepoState } from '../compute/streams';
import { GitRepo, redactCredentials } from '../git/repo';
import { cloneWithin, dirBytes } from '../git/clone';
import type { CommandDefinition } from './kernel';
import { DEFAULT_REPO_QUOTA_BYTES, OPERATOR_CONFIG_SERVICE } from '../operator-config';

const input = z.object({
  repoId: RepoRegistered.schema.shape.repoId,
  /**
   * Local path of a git work tree. From the local CLI: any path (absolute, or relative to its working
   * directory). Over RPC: a folder under the server's repo root (see `placeRemoteRegistration`).
   */
  path: z.string().min(1).max(4000).refine((p) => !p.includes('\0'), 'path must not contain NUL').optional(),
  /** Over RPC only: a forge URL (https) the server clones under the repo root, instead of `path`. */
  url: z.string().min(1).max(2000).optional(),
  defaultBranch: z.string().min(1).max(255).optional(),
  /**
   * The repository's forge URL (https://host/owner/name), when `origin` does not tell it: a clone of a
   * local path or mirror, or no origin at all. Takes the place of `origin` for the forge.
   */
  remoteUrl: z.string().min(1).max(2000).optional(),
  /** Which forge the remote's host is, when its name does not say (a self-hosted GitLab). */
  forge: forgeSchema.shape.kind.optional(),
  config: repoConfigSchema.optional(),
});
type Input = z.infer<typeof input>;
type Prepared = Omit<Input, 'forge' | 'remoteUrl'> & { path: string; root: string; forge: Forge };

/**
 * Registers a local git work tree (SPEC §1 "repo"): the forge (github/gitlab/bitbucket) is read from
 * the `origin` remote; anything else is refused with the reason. The repo's top level becomes the only
 * directory the ledger reads for it.
 */
export const registerRepo: CommandDefinition<Input, RepoState, Prepared> = {
  name: 'registerRepo',
  description: 'Register a local git work tree as a repo of the workspace; the forge is read from its origin remote, or from remoteUrl (and forge) when origin does not tell it.',
  input,
  access: { minRole: 'admin' },
  stream: (i) => `repo-${i.repoId}`,
  fold: repoFold,
  async prepare(cmd, env) {
    assertNoRenderFields(cmd.config, cmd.repoId);
    // Over RPC a url was cloned (and replaced by the clone's path) before the command runs.
    if (!cmd.path || cmd.url !== undefined) throw new DomainError('invalid_payload', 'path: required (a forge url is cloned by the server only for registrations over RPC)');
    const abs = path.resolve(cmd.path);
    if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) throw new DomainError('repo_path_not_found', `path: "${cmd.path}" is not an existing directory`);
    const repo = await GitRepo.open(abs);
    try {
      const url = cmd.remoteUrl ?? (await repo.remoteUrl('origin'));
      const naming = 'name it with remoteUrl (CLI: --remote-url https://host/owner/name), and forge (--forge github|gitlab|bitbucket) when the host does not say';
      if (!url) throw new DomainError('repo_no_origin', `path: "${repo.root}" has no "origin" remote to read the forge (github, gitlab or bitbucket) from; ${naming}`);
      const operator = env.services.get(OPERATOR_CONFIG_SERVICE);
      const forge = forgeFromRemote(url, operator?.githubEnterpriseHosts, cmd.forge);
      if (!forge) {
        const shown = redactCredentials(url);
        const field = cmd.remoteUrl !== undefined ? 'remoteUrl' : 'origin';
        throw new DomainError('repo_unknown_forge', `${field}: "${shown}" is not a github, gitlab or bitbucket remote (GitHub is github.com or a GitHub Enterprise host the operator configured); ${naming}`, { [field]: shown });
      }
      const { remoteUrl: _u, forge: _k, ...rest } = cmd;
      return { ...rest, path: cmd.path, root: fs.realpathSync(repo.root), forge };
    } finally {
      repo.close();
    }
  },
  decide(state, cmd) {
    if (state.registered) {
      if (state.path === cmd.root && JSON.stringify(state.forge) === JSON.stringify(cmd.forge)) return [];
      throw new DomainError('repo_exists', `repoId: "${cmd.repoId}" is already registered for ${state.path}`, { repoId: cmd.repoId });
    }
    const config: RepoConfig | undefined = cmd.config;
    return [{ type: 'RepoRegistered', data: { repoId: cmd.repoId, path: cmd.root, forge: cmd.forge, ...(cmd.defaultBranch ? { defaultBranch: cmd.defaultBranch } : {}), ...(config ? { config } : {}) } }];
  },
  result: (events) => (events[0] ? events[0].data : { alreadyRegistered: true }),
};

/** A tenant role never grants host execution: what the render harness runs is operator configuration. */
function assertNoRenderFields(config: unknown, repoId: unknown): void {
  if (!config || typeof config !== 'object') return;
  for (const field of ['renderCommand', 'renderOutputDir', 'renderTimeoutMs']) {
    if ((config as Record<string, unknown>)[field] !== undefined) {
      throw new DomainError('render_command_not_accepted', `config.${field}: render commands are operator configuration (render.repos["<workspaceId>/${String(repoId).slice(0, 100)}"] in the server config file), never a request field`, { field: `config.${field}` });
    }
  }
}

const REFUSED_PATH = "path: repos registered over RPC live under the server's repo root: name a folder relative to it, or give a forge URL in `url` for the server to clone";
const inside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);

/** Forge hosts the server clones from (https only), besides the operator's GitHub Enterprise hosts. */
export const CLONE_HOSTS = ['github.com', 'gitlab.com', 'bitbucket.org'];

/**
 * `registerRepo` arriving over RPC (a tenant, not the operator): the repo must live under
 * `<repoRoot>/<workspaceId>/`, either named by a path there (relative, or absolute inside it) or cloned
 * by the server from a forge URL into `<repoRoot>/<workspaceId>/<repoId>`. Every path outside the root
 * — existing or not, file or folder, reached through a symlink or `..` — gets the same answer, so the
 * errors tell nothing about the host. Returns the payload the command runs with (an absolute `path`).
 * The local CLI (`repo register --path`) does not come through here: the operator owns the host.
 */
export async function placeRemoteRegistration(
  payload: Record<string, unknown>,
  repoRoot: string,
  workspaceId: string,
  githubEnterpriseHosts: readonly string[],
  quotaBytes: number = DEFAULT_REPO_QUOTA_BYTES,
): Promise<Record<string, unknown>> {
  assertNoRenderFields(payload.config, payload.repoId);
  const root = path.join(repoRoot, workspaceId);
  await fs.promises.mkdir(root, { recursive: true, mode: 0o700 });
  const realRoot = await fs.promises.realpath(root);
  const { url, ...rest } = payload;
  if (url !== undefined) {
    if (rest.path !== undefined) throw new DomainError('invalid_payload', 'url: give either a path under the repo root or a forge url, not both');
    const repoId = RepoRegistered.schema.shape.repoId.safeParse(rest.repoId);
    if (!repoId.success) throw new DomainError('invalid_payload', `repoId: ${repoId.error.issues[0]?.message ?? 'invalid'}`);
    const target = path.join(realRoot, repoId.data);
    await cloneInto(url, target, githubEnterpriseHosts, realRoot, quotaBytes);
    return { ...rest, path: target };
  }
  if (typeof rest.path !== 'string' || rest.path.length === 0 || rest.path.length > 4000 || rest.path.includes('\0')) return rest;
  const lexical = path.resolve(realRoot, rest.path);
  if (!inside(realRoot, lexical)) throw new DomainError('repo_path_refused', REFUSED_PATH);
  let real: string;
  try {
    real = await fs.promises.realpath(lexical);
  } catch {
    throw new DomainError('repo_path_not_found', `path: "${path.relative(realRoot, lexical)}" is not a folder under the repo root`);
  }
  if (!inside(realRoot, real)) throw new DomainError('repo_path_refused', REFUSED_PATH);
  // git looks upwards for a work tree: the one it finds must be inside the root as well.
  const repo = await GitRepo.open(real).catch(() => null);
  if (repo) {
    const top = await fs.promises.realpath(repo.root);
    repo.close();
    if (!inside(realRoot, top)) throw new DomainError('repo_path_refused', REFUSED_PATH);
  }
  return { ...rest, path: real };
}

/** A forge URL the server may clone: https, an allowed forge host, `/owner/name[.git]`, nothing else. */
function cloneUrlOf(url: unknown, githubEnterpriseHosts: readonly string[]): URL {
  const refuse = (why: string) =>
    new DomainError('repo_url_refused', `url: ${why}; the server clones only https URLs of ${[...CLONE_HOSTS, ...githubEnterpriseHosts].join(', ')} (https://host/owner/name)`);
  if (typeof url !== 'string' || url.length > 2000) throw refuse('must be a string of at most 2000 characters');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw refuse(`"${redactCredentials(url).slice(0, 200)}" is not a URL`);
  }
  if (u.protocol !== 'https:') throw refuse(`scheme "${u.protocol}" is not https`);
  const host = u.hostname.toLowerCase();
  if (!CLONE_HOSTS.includes(host) && !githubEnterpriseHosts.includes(host)) throw refuse(`host "${host}" is not an allowed forge`);
  if (u.search || u.hash || !/^\/[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)+?(?:\.git)?\/?$/.test(u.pathname)) throw refuse('the path must be /owner/name');
  return u;
}

async function cloneInto(url: unknown, target: string, githubEnterpriseHosts: readonly string[], workspaceRoot: string, quotaBytes: number): Promise<void> {
  const u = cloneUrlOf(url, githubEnterpriseHosts);
  if (fs.existsSync(target)) {
    // Registering the same clone again is idempotent; anything else there is not ours to overwrite.
    const repo = await GitRepo.open(target).catch(() => null);
    const origin = repo ? await repo.remoteUrl('origin') : null;
    repo?.close();
    if (origin === u.href) return;
    throw new DomainError('repo_exists', `repoId: a different repository is already cloned for this repo id`);
  }
  const used = await dirBytes(workspaceRoot);
  if (used >= quotaBytes) throw quotaExceeded(quotaBytes, used);
  await cloneWithin(
    cloneArgs(u.href, target),
    target,
    quotaBytes - used,
    (why) => new DomainError('repo_clone_failed', `url: cloning ${redactCredentials(u.href)} failed: ${redactCredentials(why).trim().split('\n').pop()?.slice(0, 500)}`),
    () => quotaExceeded(quotaBytes, used),
  );
}

/**
 * `git clone` of a tenant's URL: https only, and nothing checked out (`--no-checkout`). The server reads
 * every file from git objects, so a clone needs no work tree, and without one the repository's content
 * is never written to the host by git (no checkout of attacker-chosen paths, links or attributes) and no
 * folder of it can pose as a git dir. Hooks and fsmonitor are off for the clone itself too.
 */
export function cloneArgs(href: string, target: string): string[] {
  const config = ['protocol.allow=never', 'protocol.https.allow=always', 'core.hooksPath=/dev/null', 'core.fsmonitor=false', 'safe.bareRepository=explicit'];
  return [...config.flatMap((c) => ['-c', c]), 'clone', '--quiet', '--no-tags', '--no-checkout', '--', href, target];
}

const quotaExceeded = (quota: number, used: number) =>
  new DomainError('repo_quota_exceeded', `url: this workspace's repos may take ${quota} bytes under the repo root (repoQuotaBytes); ${used} bytes were in use before this clone and it would go past the quota, so it was stopped and removed`, { quotaBytes: quota, usedBytes: used });
