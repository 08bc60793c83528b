import type { DecideContext, PendingEvent } from '../events/kernel-types';
import { loadStream } from '../workspaces/load-stream';
import { loadActiveRules } from '../rules/rules';
import { loadWorkspaceState } from '../workspaces/workspace-state';
import { reviewStreamOf } from '../events/streams';
import { DomainError } from '../domain-error';
import type { Forge } from '../events/catalogue/repo';
import { isHuman, streamIds } from '../events/envelope';
import type { WorkspaceState } from '../workspaces/workspace-state';
import { currentFinalization, currentRound } from '../review/pr-state';
import { verdictOfPr } from '../review/pr-verdict';
import { verdictStanding } from '../review/provisional';
import type { Rules } from '../rules/rules';
import { roleAtLeast } from '../events/roles';
import type { WorkspaceHandle } from '../workspaces/registry';
import { GITHUB_SERVICE, githubClientFactoryFromEnv } from './github-client';
import { OPERATOR_CONFIG_SERVICE } from '../operator-config';
import { currentPublication, PublishState, publishFold } from './publish-state';
import { PublishOutcome, Publisher, PublisherOptions, PublishPlan } from './publisher';
import { PublishSelection, reviewEventFor, selectFindings } from './selection';
import { isEvent, ofType } from '../events/catalogue/event-types';
import type { RecordedEvent } from '../events/envelope';
import { LedgerServices, Slot } from '../slots';
import type { Frozen } from '../events/kernel-types';

/** Services the application may register (Ledger `services`): the GitHub client factory and publisher options. */
export const PUBLISHER_OPTIONS_SERVICE = new Slot<PublisherOptions>('publish.options');

/** What publishing needs of a command's environment (a command passes its own). */
export interface PublishEnv {
  workspace: WorkspaceHandle;
  services: LedgerServices;
}

export interface PublishTarget {
  repoId: string;
  prNumber: number;
}


export async function loadPublishState(ws: WorkspaceHandle, t: PublishTarget): Promise<PublishState> {
  return (await loadStream(publishFold, ws, reviewStreamOf(t))).state;
}

/**
 * Humans who could approve an agent's publish request: user principals with member or above, as
 * members or through a live token. None means an agent's request could never be approved, so it is
 * refused up front (fail closed) rather than left waiting forever.
 */
export function humanApprovers(ws: WorkspaceState): string[] {
  const out = new Set<string>();
  for (const [principal, role] of Object.entries(ws.members)) if (isHuman(principal) && roleAtLeast(role, 'member')) out.add(principal);
  for (const t of Object.values(ws.tokens)) if (!t.revoked && isHuman(t.principal) && roleAtLeast(t.role, 'member')) out.add(t.principal);
  return [...out].sort();
}

export async function assertApproverExists(ws: WorkspaceHandle, requester: string): Promise<void> {
  const approvers = humanApprovers(await loadWorkspaceState(ws)).filter((p) => p !== requester);
  if (approvers.length === 0) {
    throw new DomainError('no_publish_approver', `publish: no human member (member or above) in this workspace can approve a publish request by ${requester}; publishing is refused until one is added`);
  }
}

/** SPEC §10: publish only from "awaiting approval". A completed review says where it went. */
export function assertPublishable(s: Frozen<PublishState>, t: PublishTarget): void {
  if (!s.pr.exists) throw new DomainError('review_not_found', `prNumber: no review has been requested for ${t.repoId}#${t.prNumber}`, { ...t });
  const done = currentPublication(s);
  if (s.pr.status === 'completed' && done) {
    throw new DomainError('already_published', `the review of ${t.repoId}#${t.prNumber} was already published to GitHub as review ${done.forgeReviewId}${done.url ? ` (${done.url})` : ''}; nothing was posted`, {
      forgeReviewId: done.forgeReviewId,
      url: done.url,
      publishKey: done.publishKey,
    });
  }
  if (s.pr.status !== 'awaiting_approval' || !currentFinalization(s.pr)) {
    throw new DomainError('not_awaiting_approval', `the review of ${t.repoId}#${t.prNumber} is "${s.pr.status}"; it can be published only once finalized (awaiting approval)`, { status: s.pr.status });
  }
  // SPEC §7.1: a finalized round whose PR moved on to a newer head has only a provisional verdict.
  const standing = verdictStanding(s.pr);
  if (standing.state === 'provisional') {
    throw new DomainError('verdict_provisional', `the verdict of ${t.repoId}#${t.prNumber} is provisional (${standing.why}); review and finalize the new head before publishing`, { latestHead: standing.latestHead });
  }
}

/** The review to post, from the folded state: verdict under the rules in force, selected findings, event. Pure. */
export function planOf(s: PublishState, rules: Rules, forge: Forge, prNumber: number, selection: PublishSelection, approveOnShip: boolean): PublishPlan {
  const f = currentFinalization(s.pr)!;
  const round = currentRound(s.pr)!;
  const v = verdictOfPr(s.pr, rules, f.tokenAxes);
  const { findings } = selectFindings(s.pr, selection);
  return {
    pr: { owner: forge.owner, repo: forge.name, pullNumber: prNumber },
    verdict: v.verdict,
    confidence: v.confidence,
    walkthrough: s.walkthrough && s.walkthrough.round === round.round ? s.walkthrough.text : '',
    event: reviewEventFor(v.verdict, approveOnShip),
    reviewedHead: round.headSha,
    findings,
  };
}

async function forgeOf(ws: WorkspaceHandle, repoId: string): Promise<Forge> {
  let forge: Forge | undefined;
  for await (const e of ws.store.readStream(streamIds.repo(repoId))) if (isEvent(e, 'RepoRegistered')) forge = e.data.forge;
  if (!forge) throw new DomainError('repo_not_found', `repoId: "${repoId}" is not registered in this workspace, so its GitHub repository is unknown`, { repoId });
  if (forge.kind !== 'github') throw new DomainError('forge_not_supported', `repoId: "${repoId}" is on ${forge.kind}; publishing supports GitHub only`, { repoId, forge: forge.kind });
  return forge;
}

export interface PreparedPublish {
  outcome: PublishOutcome;
  verdict: PublishPlan['verdict'];
  selection: PublishSelection;
}

/**
 * The I/O of a publish, at the edge (the command's `prepare`). Publishes of one PR are serialized in
 * this process, and the state is re-read inside the lock: a second click waits for the first, then
 * either sees it recorded (already_published) or finds its marker on GitHub — never posts again.
 */
export async function executePublish(env: PublishEnv, t: PublishTarget, selection: PublishSelection, approveOnShip: boolean, check?: (s: PublishState) => void): Promise<PreparedPublish> {
  const forge = await forgeOf(env.workspace, t.repoId);
  const factory = env.services.get(GITHUB_SERVICE) ?? githubClientFactoryFromEnv(process.env, env.services.get(OPERATOR_CONFIG_SERVICE)?.githubEnterpriseHosts);
  const options = env.services.get(PUBLISHER_OPTIONS_SERVICE);
  const rules = await loadActiveRules(env.workspace);
  const streamId = reviewStreamOf(t);
  const publishOnce = async (): Promise<PreparedPublish> => {
    const s = await loadPublishState(env.workspace, t);
    assertPublishable(s, t);
    check?.(s);
    const plan = planOf(s, rules, forge, t.prNumber, selection, approveOnShip);
    const outcome = await new Publisher(factory(forge), options).publish(plan);
    return { outcome, verdict: plan.verdict, selection };
  };
  // The publisher looks on GitHub for an earlier post of this review and posts only when it finds none: two
  // servers (or a server and the CLI) doing that at once would both find none and both post. The store's
  // exclusive section keeps them apart across processes; the lock below, this process's callers.
  const store = env.workspace.store;
  return withPublishLock(env.workspace, streamId, () => (store.exclusive ? store.exclusive(`publish ${streamId}`, publishOnce) : publishOnce()));
}

const LOCKS = new Slot<Map<string, Promise<unknown>>>('publish.locks');

async function withPublishLock<T>(ws: WorkspaceHandle, streamId: string, fn: () => Promise<T>): Promise<T> {
  const locks = ws.cache.getOrSet(LOCKS, () => new Map());
  const prev = locks.get(streamId) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.catch(() => undefined);
  locks.set(streamId, tail);
  void tail.then(() => {
    if (locks!.get(streamId) === tail) locks!.delete(streamId);
  });
  return run;
}

/**
 * The events a finished publish records (pure; the decider's half). A post that happened is a fact: it
 * is recorded even if the review moved meanwhile, and only the ladder step depends on the state.
 */
export function publishOutcomeEvents(s: Frozen<PublishState>, p: PreparedPublish, requestId: string, ctx: DecideContext, t: PublishTarget): PendingEvent[] {
  const o = p.outcome;
  if (o.kind === 'failed') {
    return [{ type: 'PublishFailed', data: { requestId, reason: o.reason.slice(0, 10_000), by: ctx.principal, status: o.status, publishKey: o.key, headSha: o.headSha } }];
  }
  const done = currentPublication(s);
  if (done && done.publishKey === o.key && o.foundExisting) {
    // Another publish of the same thing was recorded while this one talked to GitHub.
    throw new DomainError('already_published', `the review of ${t.repoId}#${t.prNumber} was already published to GitHub as review ${done.forgeReviewId}; nothing was posted`, {
      forgeReviewId: done.forgeReviewId,
      url: done.url,
      publishKey: done.publishKey,
    });
  }
  const events: PendingEvent[] = [
    {
      type: 'ReviewPublished',
      data: {
        requestId,
        forgeReviewId: String(o.review.id),
        url: o.review.htmlUrl ?? undefined,
        event: o.event,
        inline: o.inline,
        folded: o.folded,
        fallbackUsed: o.fallbacks.includes('anchors_refolded') || o.fallbacks.includes('orphan_completed') || o.fallbacks.includes('event_downgraded'),
        fallbacks: o.fallbacks,
        headSha: o.headSha,
        publishKey: o.key,
        verdict: p.verdict,
        selection: p.selection,
        requestedEvent: o.requestedEvent,
        eventRefusal: o.eventRefusal?.slice(0, 2000),
        foundExisting: o.foundExisting,
        publishedBy: ctx.principal,
        role: ctx.role,
      },
    },
  ];
  if (s.pr.status === 'awaiting_approval') events.push({ type: 'ReviewStatusChanged', data: { from: 'awaiting_approval', to: 'completed', reason: `published to GitHub as review ${o.review.id}` } });
  return events;
}

export function publishResult(events: readonly RecordedEvent[]): unknown {
  const published = events.find(ofType('ReviewPublished'))?.data;
  if (published) {
    return {
      status: 'published',
      requestId: published.requestId ?? null,
      forgeReviewId: published.forgeReviewId,
      url: published.url ?? null,
      event: published.event,
      verdict: published.verdict ?? null,
      inline: published.inline.length,
      folded: published.folded.length,
      fallbacks: published.fallbacks ?? [],
      eventRefusal: published.eventRefusal ?? null,
      alreadyOnGitHub: published.foundExisting ?? false,
    };
  }
  const failed = events.find(ofType('PublishFailed'))?.data;
  if (failed) return { status: 'failed', requestId: failed.requestId ?? null, reason: failed.reason, githubStatus: failed.status ?? null };
  const requested = events.find(ofType('PublishRequested'))?.data;
  if (requested) return { status: 'awaiting_approval', requestId: requested.requestId, selection: requested.selection, approveOnShip: requested.approveOnShip ?? false };
  return null;
}
