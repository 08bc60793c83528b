import { parseReviewStream } from '../events/streams';
import { newUuidV7 } from '../events/ids';
import type { RecordedEvent } from '../events/envelope';
import { streamIds } from '../events/envelope';
import { EVENT_FEED_SERVICE } from '../cqrs/event-feed';
import type { Ledger } from '../ledger';
import { verdictQuery } from '../readmodels/queries/verdict';
import type { QueryDefinition } from '../readmodels/queries/query';
import type { ReviewQueryInput, ReviewView } from '../readmodels/queries/review-fold';
import { runQuery } from '../readmodels/queries/run-query';
import { GITHUB_SERVICE, GitHubError, authFromEnv, githubClientFactoryFromEnv, type GitHubClientFactory, type GitHubStatusPort } from '../publish/github-client';
import type { NodeCore } from '../review/pr-state';
import type { WorkspaceHandle } from '../workspaces/registry';
import { loadStream } from '../workspaces/load-stream';
import { postedKey, postedStatusesFold, recordVerdictStatus, statusCheckRepoFold, type StatusCheckRepoState } from '../commands/status-check';
import { unreviewedHeadIntent, verdictStatusIntent, type VerdictStatusIntent } from './intent';
import { Slot } from '../slots';

/** Optional ledger service: timings and waits (tests shorten them, and count the sleeps). */
export const STATUS_CHECK_OPTIONS_SERVICE = new Slot<StatusCheckOptions>('statusCheck.options');

export interface StatusCheckOptions {
  sleep?: (ms: number) => Promise<void>;
  /** Rate-limited re-sends per status (default 3). */
  maxRateLimitRetries?: number;
  /** Longest single wait a rate limit may impose before the status is recorded as failed (default 60 s). */
  maxRateLimitWaitSeconds?: number;
  /** How long changes are gathered before a sync (default 50 ms): a burst of findings is one status. */
  debounceMs?: number;
  /** The server's public base URL for the Review page link (else REVIEW_LEDGER_PUBLIC_URL, else the listening address). */
  publicUrl?: string;
}

export function statusCheckOptions(ledger: Ledger): StatusCheckOptions {
  return ledger.services.get(STATUS_CHECK_OPTIONS_SERVICE) ?? {};
}

/** The principal the server records its own posts under (never a client's). */
export const STATUS_PRINCIPAL = 'system:verdict-status' as const;

/** The verdict projection, viewed as the commit status it asks for. */
export const verdictStatusQuery: QueryDefinition<ReviewQueryInput, ReviewView<NodeCore>, VerdictStatusIntent | null> = {
  ...verdictQuery,
  name: 'verdictStatus',
  view: (s) => verdictStatusIntent(s),
};

/** The GitHub client factory this server may use, or null when it has no GitHub credential at all. */
export function statusClientFactory(ledger: Ledger, env: NodeJS.ProcessEnv = process.env): GitHubClientFactory | null {
  const registered = ledger.services.get(GITHUB_SERVICE);
  if (registered) return registered;
  try {
    authFromEnv(env);
  } catch {
    return null;
  }
  return githubClientFactoryFromEnv(env);
}

interface Target {
  repoId: string;
  prNumber: number;
}

/** One workspace: what the sync knows from its log. */
class WorkspaceLoop {
  readonly repos = new Map<string, StatusCheckRepoState>();
  readonly prsByRepo = new Map<string, Set<number>>();
  readonly dirty = new Set<string>();
  /** Repos whose every PR is to be synced (the check was configured), and whether every PR is (new rules). */
  readonly wholeRepos = new Set<string>();
  allPrs = false;
  /**
   * The position this loop's knowledge starts after: 0 when it saw the whole log, else the stored
   * position the feed resumed from — PRs whose events all precede it are not in `prsByRepo` until
   * a whole-repo sync reads them from the log (`knowEveryPr`).
   */
  knownAfter = 0;
  /** The first position whose effect is not synced yet (null: all synced), and that of the batch in flight. */
  unsynced: number | null = null;
  inFlightFrom: number | null = null;
  caughtUp = false;
  timer: NodeJS.Timeout | null = null;
  running: Promise<void> | null = null;
  constructor(
    readonly id: string,
    private readonly ledger: Ledger,
  ) {}

  get ws(): Promise<WorkspaceHandle> {
    // Not kept: the registry closes idle workspaces, and opens them again on the next use.
    return this.ledger.workspace(this.id);
  }
}

/**
 * Keeps a GitHub commit status on each PR head in step with the verdict projection, for the repos an
 * admin opted in (SPEC §14). Fed by the EventBus (`VerdictStatusEvents`), which the ledger feeds from
 * each workspace's store subscription — the log, never an in-memory publish — so whatever process
 * wrote an event, and whenever this server (re)started, the status follows.
 *
 * Never twice: what was posted is recorded (`VerdictStatusPosted`), and before posting the commit's
 * statuses on GitHub are read, so a status posted by a process that died before recording it is found
 * and recorded instead of posted again. A restart resumes after the sync's stored position (it moves
 * once the statuses its events asked for are synced), so what was not synced before a crash is
 * delivered and synced again; repo settings are read from their streams, and a whole-repo sync after
 * a resume reads the PRs it has not seen from the log once. Only what differs from the record is posted.
 */
export class VerdictStatusSync {
  private readonly loops = new Map<string, WorkspaceLoop>();
  private readonly options: Required<Omit<StatusCheckOptions, 'publicUrl'>>;
  private stopped = false;

  constructor(
    private readonly ledger: Ledger,
    private readonly factory: GitHubClientFactory,
    /** The server's public base URL, for the Review page link (resolved when a status is posted). */
    private readonly baseUrl: () => string,
  ) {
    const o = statusCheckOptions(ledger);
    this.options = {
      sleep: o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
      maxRateLimitRetries: o.maxRateLimitRetries ?? 3,
      maxRateLimitWaitSeconds: o.maxRateLimitWaitSeconds ?? 60,
      debounceMs: o.debounceMs ?? 50,
    };
  }

  /** One event of a workspace's log, in log order (during catch-up it is folded; syncs wait for the end of it). */
  onEvent(workspaceId: string, e: RecordedEvent): void {
    if (this.stopped) return;
    const loop = this.loop(workspaceId);
    this.track(loop, e);
    if (loop.caughtUp) this.schedule(loop);
  }

  /** The feed resumed this workspace after `position` (this sync had handled the log up to there before). */
  resumedAfter(workspaceId: string, position: number): void {
    const loop = this.loop(workspaceId);
    loop.knownAfter = Math.max(loop.knownAfter, position);
  }

  /** Up to which position every event given to the sync has had its status synced (the feed stores it). */
  handledThrough(workspaceId: string, published: number): number {
    const loop = this.loops.get(workspaceId);
    if (!loop) return published;
    const low = Math.min(loop.unsynced ?? Infinity, loop.inFlightFrom ?? Infinity);
    return low === Infinity ? published : Math.min(published, low - 1);
  }

  /** The log as it was when the feed started following the workspace has been folded: sync what it asks for. */
  onCaughtUp(workspaceId: string): void {
    if (this.stopped) return;
    const loop = this.loop(workspaceId);
    loop.caughtUp = true;
    this.schedule(loop);
  }

  private loop(workspaceId: string): WorkspaceLoop {
    let loop = this.loops.get(workspaceId);
    if (!loop) this.loops.set(workspaceId, (loop = new WorkspaceLoop(workspaceId, this.ledger)));
    return loop;
  }

  /** Stops scheduling and waits for the syncs in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const loop of this.loops.values()) if (loop.timer) clearTimeout(loop.timer);
    await Promise.all([...this.loops.values()].map((l) => l.running?.catch(() => undefined)));
  }

  /**
   * Resolves once every event in every workspace's log at the time of the call has reached the sync
   * and every sync it asked for has finished (tests wait on it instead of sleeping).
   */
  async settled(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const feed = this.ledger.services.get(EVENT_FEED_SERVICE);
    if (feed) await feed.settled(timeoutMs);
    for (;;) {
      if (this.stopped) return;
      const pending = [...this.loops.values()].filter((l) => !l.caughtUp || l.timer !== null || l.running !== null || l.dirty.size > 0 || l.unsynced !== null);
      if (pending.length === 0) return;
      if (Date.now() > deadline) throw new Error(`verdict status: not settled after ${timeoutMs} ms (${pending.map((l) => l.id).join(', ')})`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Marks the PRs whose status an event may change (repo states are read from their streams when needed). */
  private track(loop: WorkspaceLoop, e: RecordedEvent): void {
    if (e.streamId.startsWith('repo-')) {
      if (e.type !== 'RepoRegistered' && e.type !== 'VerdictStatusCheckConfigured') return;
      const repoId = e.streamId.slice('repo-'.length);
      loop.repos.delete(repoId);
      if (e.type === 'VerdictStatusCheckConfigured') loop.wholeRepos.add(repoId);
      loop.unsynced ??= e.globalPosition;
      return;
    }
    if (e.streamId === streamIds.workspace()) {
      // New rules re-score every review.
      if (e.type !== 'RulesVersionActivated') return;
      loop.allPrs = true;
      loop.unsynced ??= e.globalPosition;
      return;
    }
    const t = e.streamId.startsWith('pr-') ? parseReviewStream(e.streamId) : null;
    if (!t) return;
    let prs = loop.prsByRepo.get(t.repoId);
    if (!prs) loop.prsByRepo.set(t.repoId, (prs = new Set()));
    prs.add(t.prNumber);
    loop.dirty.add(JSON.stringify([t.repoId, t.prNumber]));
    loop.unsynced ??= e.globalPosition;
  }

  private schedule(loop: WorkspaceLoop): void {
    if (this.stopped || loop.timer || loop.running || (loop.dirty.size === 0 && loop.wholeRepos.size === 0 && !loop.allPrs)) {
      // Nothing to sync: whatever was marked is handled.
      if (!this.stopped && !loop.timer && !loop.running && loop.caughtUp) loop.unsynced = null;
      return;
    }
    loop.timer = setTimeout(() => {
      loop.timer = null;
      loop.running = this.drain(loop)
        // Reading the log failed (the store is away): a timer has no one to reject to; the marked
        // work stays marked and the next schedule retries it.
        .catch((err) => {
          // What was in flight is unsynced again, so the positions are not committed past it.
          const from = Math.min(loop.unsynced ?? Infinity, loop.inFlightFrom ?? Infinity);
          loop.unsynced = from === Infinity ? null : from;
          if (!this.stopped) console.error(`verdict status: ${loop.id}: ${err instanceof Error ? err.message : String(err)} (retrying)`);
        })
        .finally(() => {
          loop.running = null;
          loop.inFlightFrom = null;
          this.schedule(loop);
        });
    }, this.options.debounceMs);
  }

  private async drain(loop: WorkspaceLoop): Promise<void> {
    while ((loop.dirty.size > 0 || loop.wholeRepos.size > 0 || loop.allPrs) && !this.stopped) {
      loop.inFlightFrom = Math.min(loop.inFlightFrom ?? Infinity, loop.unsynced ?? Infinity);
      if (loop.inFlightFrom === Infinity) loop.inFlightFrom = null;
      loop.unsynced = null;
      if (loop.wholeRepos.size > 0 || loop.allPrs) {
        await this.knowEveryPr(loop);
        const repos = loop.allPrs ? [...loop.prsByRepo.keys()] : [...loop.wholeRepos];
        loop.allPrs = false;
        loop.wholeRepos.clear();
        for (const repoId of repos) for (const n of loop.prsByRepo.get(repoId) ?? []) loop.dirty.add(JSON.stringify([repoId, n]));
      }
      const batch = [...loop.dirty];
      loop.dirty.clear();
      for (const key of batch) {
        const [repoId, prNumber] = JSON.parse(key) as [string, number];
        try {
          const repo = await this.repoState(loop, repoId);
          if (!repo.enabled) continue;
          await this.syncPr(loop, { repoId, prNumber }, repo);
        } catch (err) {
          if (!this.stopped) console.error(`verdict status: ${loop.id}/${repoId}#${prNumber}:`, err instanceof Error ? err.message : err);
        }
      }
    }
  }

  /** The repo's check configuration, folded from its stream (cached until a repo event invalidates it). */
  private async repoState(loop: WorkspaceLoop, repoId: string): Promise<StatusCheckRepoState> {
    const known = loop.repos.get(repoId);
    if (known) return known;
    const { state } = await loadStream(statusCheckRepoFold, await loop.ws, streamIds.repo(repoId));
    loop.repos.set(repoId, state);
    return state;
  }

  /** After a resume, the PRs whose events all precede it are read from the log once (a whole-repo sync is rare). */
  private async knowEveryPr(loop: WorkspaceLoop): Promise<void> {
    if (loop.knownAfter === 0) return;
    const until = loop.knownAfter;
    for await (const e of (await loop.ws).store.readAll({ until })) {
      const t = e.streamId.startsWith('pr-') ? parseReviewStream(e.streamId) : null;
      if (!t) continue;
      let prs = loop.prsByRepo.get(t.repoId);
      if (!prs) loop.prsByRepo.set(t.repoId, (prs = new Set()));
      prs.add(t.prNumber);
    }
    loop.knownAfter = 0;
  }

  private async syncPr(loop: WorkspaceLoop, t: Target, repo: StatusCheckRepoState): Promise<void> {
    const ws = await loop.ws;
    const answer = await runQuery(verdictStatusQuery, ws, t);
    const intent = answer.value;
    if (!intent || !repo.forge) return;
    const client = this.factory(repo.forge) as Partial<GitHubStatusPort>;
    if (typeof client.createCommitStatus !== 'function' || typeof client.listCommitStatuses !== 'function' || typeof client.getPull !== 'function') {
      throw new Error('the configured GitHub client cannot post commit statuses');
    }
    const github = client as GitHubStatusPort;
    const link = `${this.baseUrl().replace(/\/+$/, '')}/workspaces/${loop.id}/repos/${encodeURIComponent(t.repoId)}/prs/${t.prNumber}`;
    const posted = await this.ensure(loop, t, repo, github, intent, link, answer.position);
    if (!posted) return;
    // The head may have moved on GitHub while we posted: a commit nobody reviewed gets pending, so a
    // required check can never be satisfied by the status of an older commit.
    const pull = await github.getPull({ owner: repo.forge.owner, repo: repo.forge.name, pullNumber: t.prNumber });
    if (pull.headSha !== intent.sha) await this.ensure(loop, t, repo, github, unreviewedHeadIntent(pull.headSha, intent), link, answer.position);
  }

  /**
   * Makes GitHub show `intent` on its commit. Returns false when the record already said so (nothing to do).
   * Every server sharing the store follows the same verdicts: the record's look, GitHub's and the post run in
   * the store's exclusive section, so the second server finds the first's record instead of posting again.
   */
  private async ensure(loop: WorkspaceLoop, t: Target, repo: StatusCheckRepoState, github: GitHubStatusPort, intent: VerdictStatusIntent, link: string, reflects: number): Promise<boolean> {
    const ws = await loop.ws;
    const streamId = streamIds.status(t.repoId, t.prNumber);
    const once = () => this.ensureOnce(loop, t, repo, github, intent, link, reflects);
    return ws.store.exclusive ? ws.store.exclusive(`status ${streamId}`, once) : once();
  }

  private async ensureOnce(loop: WorkspaceLoop, t: Target, repo: StatusCheckRepoState, github: GitHubStatusPort, intent: VerdictStatusIntent, link: string, reflects: number): Promise<boolean> {
    const { state: record } = await this.ledger.executor.load(postedStatusesFold, await loop.ws, streamIds.status(t.repoId, t.prNumber));
    const last = record.posted[postedKey(intent.sha, repo.context)];
    if (last && last.state === intent.state && last.description === intent.description && last.targetUrl === link) return false;
    // A status reflecting a later point of the log is already on this commit (another server, ahead of this
    // one, posted it): this intent is outdated, and posting it would put an older verdict back on GitHub.
    if (last && last.reflects > reflects) return false;

    const ref = { owner: repo.forge!.owner, repo: repo.forge!.name };
    const fields = { ...t, sha: intent.sha, context: repo.context, state: intent.state, description: intent.description, targetUrl: link, verdict: intent.verdict, provisional: intent.provisional, reflects };
    try {
      // GitHub itself is asked first: an earlier process may have posted this and died before recording it.
      const onGitHub = (await github.listCommitStatuses(ref, intent.sha)).find((s) => s.context === repo.context);
      if (onGitHub && onGitHub.state === intent.state && (onGitHub.description ?? '') === intent.description && (onGitHub.targetUrl ?? '') === link) {
        await this.record(loop, { outcome: 'posted', ...fields, foundOnGitHub: true, githubStatusId: onGitHub.id });
        return true;
      }
      const created = await this.withRateLimits(() => github.createCommitStatus(ref, intent.sha, { state: intent.state, context: repo.context, description: intent.description, target_url: link }));
      await this.record(loop, { outcome: 'posted', ...fields, foundOnGitHub: false, githubStatusId: created.id });
      return true;
    } catch (err) {
      if (!(err instanceof GitHubError)) throw err;
      await this.record(loop, { outcome: 'failed', ...fields, githubStatus: err.status, reason: err.message.slice(0, 2000) });
      return false;
    }
  }

  private async withRateLimits<T>(post: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await post();
      } catch (err) {
        if (!(err instanceof GitHubError) || !err.rateLimited || attempt >= this.options.maxRateLimitRetries || this.stopped) throw err;
        const wait = err.retryAfterSeconds ?? 60;
        if (wait > this.options.maxRateLimitWaitSeconds) throw err;
        await this.options.sleep(wait * 1000);
      }
    }
  }

  private async record(loop: WorkspaceLoop, payload: Record<string, unknown>): Promise<void> {
    await this.ledger.executor.execute(recordVerdictStatus, await loop.ws, { principal: STATUS_PRINCIPAL, role: 'member', idempotencyKey: newUuidV7() }, payload);
  }
}
