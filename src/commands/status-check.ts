import { z } from 'zod';
import type { CommandDefinition } from './kernel';
import type { StreamFold } from '../events/kernel-types';
import { reviewTarget } from '../events/streams';
import { DomainError } from '../domain-error';
import type { Forge } from '../events/catalogue/repo';
import { RepoRegistered } from '../events/catalogue/repo';
import { streamIds, type RecordedEvent } from '../events/envelope';
import { DEFAULT_CONTEXT, statusContextSchema, VerdictStatusFailed, VerdictStatusPosted } from '../events/catalogue/status-check';
import { catalogued, type StatusEvent } from '../events/catalogue/event-types';
import { GITHUB_SERVICE, authFromEnv } from '../publish/github-client';

/** What the repo stream says about the status check. */
export interface StatusCheckRepoState {
  registered: boolean;
  forge?: Forge;
  enabled: boolean;
  context: string;
}

export const statusCheckRepoFold: StreamFold<StatusCheckRepoState> = {
  initialState: () => ({ registered: false, enabled: false, context: DEFAULT_CONTEXT }),
  evolve(s, raw: RecordedEvent) {
    const e = catalogued(raw);
    if (e.type === 'RepoRegistered') {
      s.registered = true;
      s.forge = e.data.forge;
    } else if (e.type === 'VerdictStatusCheckConfigured') {
      s.enabled = e.data.enabled;
      s.context = e.data.context;
    }
    return s;
  },
};

const configureInput = z.object({
  repoId: RepoRegistered.schema.shape.repoId,
  enabled: z.boolean(),
  /** The status context branch protection will require (default "review-ledger/verdict"). */
  context: statusContextSchema.optional(),
});

/**
 * Turns the verdict status check of one repo on or off (admin; off by default). While on, the server
 * keeps a GitHub commit status on each PR head in step with the verdict projection.
 */
export const setVerdictStatusCheck: CommandDefinition<z.infer<typeof configureInput>, StatusCheckRepoState> = {
  name: 'setVerdictStatusCheck',
  description: "Opt a repo in (or out) of the verdict as a GitHub commit status on each PR head: provisional → pending, Ship → success, Hold/Block → failure, with the deciding reason and a link to the Review page. Off by default.",
  input: configureInput,
  access: { minRole: 'admin' },
  stream: (i) => streamIds.repo(i.repoId),
  fold: statusCheckRepoFold,
  async prepare(cmd, env) {
    // Opting in on a server that cannot post would look like a gate and never be one (issue 38: it
    // succeeded silently). The credential the sync would use: the registered client, else the environment.
    if (cmd.enabled && !env.services.get(GITHUB_SERVICE)) {
      try {
        authFromEnv(process.env);
      } catch (err) {
        throw new DomainError(
          'github_not_configured',
          `enabled: this server has no GitHub credential, so it could post no status (${(err as Error).message}); configure one on the server, then opt in (docs/publishing.md)`,
          { field: 'enabled' },
        );
      }
    }
    return cmd;
  },
  decide(state, cmd) {
    if (!state.registered) throw new DomainError('repo_not_found', `repoId: "${cmd.repoId}" is not a registered repo`);
    if (state.forge?.kind !== 'github') throw new DomainError('forge_not_supported', `repoId: "${cmd.repoId}" is on ${state.forge?.kind}; the verdict status check posts to GitHub only`);
    const context = cmd.context ?? state.context;
    if (state.enabled === cmd.enabled && state.context === context) return [];
    return [{ type: 'VerdictStatusCheckConfigured', data: { repoId: cmd.repoId, enabled: cmd.enabled, context } }];
  },
  result: (events) => (events[0] ? events[0].data : { unchanged: true }),
};

/** What the status stream says was posted: `${sha} ${context}` → the last status on GitHub. */
export interface PostedStatuses {
  posted: Record<string, { state: string; description: string; targetUrl: string; reflects: number }>;
}

export const postedKey = (sha: string, context: string): string => `${sha} ${context}`;

export const postedStatusesFold: StreamFold<PostedStatuses, StatusEvent> = {
  initialState: () => ({ posted: {} }),
  evolve(s, e) {
    if (e.type === 'VerdictStatusPosted') {
      s.posted[postedKey(e.data.sha, e.data.context)] = { state: e.data.state, description: e.data.description, targetUrl: e.data.targetUrl, reflects: e.data.reflects };
    }
    return s;
  },
};

const recordInput = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('posted'), ...reviewTarget, ...VerdictStatusPosted.schema.omit({ repoId: true, prNumber: true }).shape }),
  z.object({ outcome: z.literal('failed'), ...reviewTarget, ...VerdictStatusFailed.schema.omit({ repoId: true, prNumber: true }).shape }),
]);

/**
 * Records what the status sync did on GitHub. Internal: it is not in the command registry, so no client
 * can call it (a forged "posted" record would silence the gate); only the server's sync runs it, as
 * `system:verdict-status`. A record equal to what is already on file writes nothing.
 */
export const recordVerdictStatus: CommandDefinition<z.infer<typeof recordInput>, PostedStatuses> = {
  name: 'recordVerdictStatus',
  description: 'Internal: what the verdict status sync posted to GitHub.',
  input: recordInput,
  access: { minRole: 'member' },
  stream: (i) => streamIds.status(i.repoId, i.prNumber),
  fold: postedStatusesFold,
  decide(state, cmd) {
    // Narrowed before the spread: each branch's data is exactly its event's shape.
    if (cmd.outcome === 'failed') {
      const { outcome: _failed, ...data } = cmd;
      return [{ type: 'VerdictStatusFailed', data }];
    }
    const last = state.posted[postedKey(cmd.sha, cmd.context)];
    if (last && last.state === cmd.state && last.description === cmd.description && last.targetUrl === cmd.targetUrl) return [];
    const { outcome: _posted, ...data } = cmd;
    return [{ type: 'VerdictStatusPosted', data }];
  },
};
