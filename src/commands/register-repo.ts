import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { DomainError } from '../domain-error';
import { Forge, RepoConfig, repoConfigSchema, RepoRegistered } from '../events/catalogue/repo';
import { forgeFromRemote, repoFold, RepoState } from '../compute/streams';
import { GitRepo } from '../git/repo';
import type { CommandDefinition } from './kernel';

const input = z.object({
  repoId: RepoRegistered.schema.shape.repoId,
  /** Local path of a git work tree (absolute, or relative to the server's working directory). */
  path: z.string().min(1).max(4000).refine((p) => !p.includes('\0'), 'path must not contain NUL'),
  defaultBranch: z.string().min(1).max(255).optional(),
  config: repoConfigSchema.optional(),
});
type Input = z.infer<typeof input>;
type Prepared = Input & { root: string; forge: Forge };

/**
 * Registers a local git work tree (SPEC §1 "repo"): the forge (github/gitlab/bitbucket) is read from
 * the `origin` remote; anything else is refused with the reason. The repo's top level becomes the only
 * directory the ledger reads for it.
 */
export const registerRepo: CommandDefinition<Input, RepoState, Prepared> = {
  name: 'registerRepo',
  description: 'Register a local git work tree as a repo of the workspace; the forge is read from its origin remote.',
  input,
  access: { minRole: 'admin' },
  stream: (i) => `repo-${i.repoId}`,
  fold: repoFold,
  async prepare(cmd) {
    // A tenant role never grants host execution: what the render harness runs is operator configuration.
    for (const field of ['renderCommand', 'renderOutputDir', 'renderTimeoutMs'] as const) {
      if (cmd.config?.[field] !== undefined) {
        throw new DomainError('render_command_not_accepted', `config.${field}: render commands are operator configuration (render.repos["<workspaceId>/${cmd.repoId}"] in the server config file), never a request field`, 'invalid', { field: `config.${field}` });
      }
    }
    const abs = path.resolve(cmd.path);
    if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) throw new DomainError('repo_path_not_found', `path: "${cmd.path}" is not an existing directory`, 'invalid');
    const repo = await GitRepo.open(abs);
    try {
      const url = await repo.remoteUrl('origin');
      if (!url) throw new DomainError('repo_no_origin', `path: "${repo.root}" has no "origin" remote; the forge (github, gitlab or bitbucket) is read from it`, 'invalid');
      const forge = forgeFromRemote(url);
      if (!forge) throw new DomainError('repo_unknown_forge', `origin: "${url}" is not a github, gitlab or bitbucket remote`, 'invalid', { origin: url });
      return { ...cmd, root: fs.realpathSync(repo.root), forge };
    } finally {
      repo.close();
    }
  },
  decide(state, cmd) {
    if (state.registered) {
      if (state.path === cmd.root && JSON.stringify(state.forge) === JSON.stringify(cmd.forge)) return [];
      throw new DomainError('repo_exists', `repoId: "${cmd.repoId}" is already registered for ${state.path}`, 'conflict', { repoId: cmd.repoId });
    }
    const config: RepoConfig | undefined = cmd.config;
    return [{ type: 'RepoRegistered', data: { repoId: cmd.repoId, path: cmd.root, forge: cmd.forge, ...(cmd.defaultBranch ? { defaultBranch: cmd.defaultBranch } : {}), ...(config ? { config } : {}) } }];
  },
  result: (events) => (events[0] ? events[0].data : { alreadyRegistered: true }),
};
