import { createSign } from 'node:crypto';
import * as fs from 'node:fs';
import type { Octokit } from '@octokit/rest';
import { DomainError } from '../domain-error';
import type { Forge } from '../events/catalogue/repo';
import type { PrFile, Side } from './diff-anchors';
import { Slot } from '../slots';

/** The parts of GitHub the publisher talks to. One implementation (Octokit); the tests run it against a local server. */
export interface GitHubPort {
  getPull(pr: PrRef): Promise<PullInfo>;
  /** Every file of the PR (paginated; GitHub caps the listing at 3000 files). */
  listFiles(pr: PrRef): Promise<PrFile[]>;
  listReviews(pr: PrRef): Promise<ForgeReview[]>;
  /** The inline comments of one review (to tell a complete review from a body-only orphan). */
  listReviewComments(pr: PrRef, reviewId: number): Promise<Array<{ body: string; path: string }>>;
  createReview(pr: PrRef, review: CreateReviewRequest): Promise<ForgeReview>;
  /** Replaces the body of a submitted review (used to complete an orphan left by a refused post). */
  updateReviewBody(pr: PrRef, reviewId: number, body: string): Promise<ForgeReview>;
  /** Submits a PENDING review with its final body and event. */
  submitReview(pr: PrRef, reviewId: number, event: ReviewEvent, body: string): Promise<ForgeReview>;
}

/**
 * Commit statuses (the verdict as a status check, src/status-check). Separate from GitHubPort: the
 * publisher never needs them, and a test double of the publisher need not implement them.
 */
export interface GitHubStatusPort {
  getPull(pr: PrRef): Promise<PullInfo>;
  /** The statuses of a commit, newest first (GitHub's order), all contexts. */
  listCommitStatuses(repo: RepoRef, sha: string): Promise<CommitStatus[]>;
  createCommitStatus(repo: RepoRef, sha: string, status: CreateCommitStatusRequest): Promise<CommitStatus>;
}

export interface RepoRef {
  owner: string;
  repo: string;
}

export interface CommitStatus {
  id: number;
  state: string;
  context: string;
  description: string | null;
  targetUrl: string | null;
}

export interface CreateCommitStatusRequest {
  state: 'pending' | 'success' | 'failure' | 'error';
  context: string;
  description: string;
  target_url: string;
}

export interface PrRef {
  owner: string;
  repo: string;
  pullNumber: number;
}

export interface PullInfo {
  headSha: string;
  baseSha: string;
  state: string;
  authorLogin: string | null;
}

export type ReviewEvent = 'APPROVE' | 'REQUEST_CHANGES' | 'COMMENT';

export interface ForgeReview {
  id: number;
  body: string;
  state: string;
  commitId: string | null;
  htmlUrl: string | null;
  userLogin: string | null;
}

export interface ReviewCommentRequest {
  path: string;
  body: string;
  line: number;
  side: Side;
  start_line?: number;
  start_side?: Side;
}

export interface CreateReviewRequest {
  commit_id: string;
  body: string;
  event: ReviewEvent;
  comments?: ReviewCommentRequest[];
}

/**
 * A refusal from GitHub, reduced to what the publisher decides on: the HTTP status, GitHub's own words
 * (message + errors, without the documentation link) and the wait GitHub asked for, if any.
 */
export class GitHubError extends Error {
  constructor(
    readonly status: number,
    readonly githubMessage: string,
    readonly errors: string[],
    readonly retryAfterSeconds: number | null,
  ) {
    super(`GitHub answered ${status}: ${[githubMessage, ...errors].filter(Boolean).join(' — ')}`);
    this.name = 'GitHubError';
  }

  /** Every sentence GitHub gave, for matching known refusals. */
  get sentences(): string[] {
    return [this.githubMessage, ...this.errors];
  }

  /** Secondary (and primary) rate limits: 429, or 403 that says so or asks for a wait. */
  get rateLimited(): boolean {
    if (this.status === 429) return true;
    return this.status === 403 && (this.retryAfterSeconds !== null || /rate limit/i.test(this.githubMessage));
  }
}

function toGitHubError(err: unknown, now: () => number): GitHubError {
  const e = err as { status?: number; response?: { data?: unknown; headers?: Record<string, string | undefined> }; message?: string };
  if (typeof e?.status !== 'number' || e.status < 400) {
    // A network failure: no status; the message names the cause (never the token: it is only in a header).
    return new GitHubError(0, `GitHub could not be reached: ${String(e?.message ?? err)}`, [], null);
  }
  const data = e.response?.data as { message?: unknown; errors?: unknown } | string | undefined;
  const message = typeof data === 'string' ? data : typeof data?.message === 'string' ? data.message : `HTTP ${e.status}`;
  const errors: string[] = [];
  const rawErrors = typeof data === 'object' && data && Array.isArray(data.errors) ? data.errors : [];
  for (const x of rawErrors) {
    if (typeof x === 'string') errors.push(x);
    else if (x && typeof x === 'object') {
      const o = x as { message?: string; resource?: string; field?: string; code?: string };
      errors.push(o.message ?? [o.resource, o.field, o.code].filter(Boolean).join(' '));
    }
  }
  const headers = e.response?.headers ?? {};
  let retryAfter: number | null = null;
  const ra = headers['retry-after'];
  if (ra !== undefined && /^\d+$/.test(ra.trim())) retryAfter = Number(ra.trim());
  else if (headers['x-ratelimit-remaining'] === '0' && headers['x-ratelimit-reset'] && /^\d+$/.test(headers['x-ratelimit-reset'])) {
    retryAfter = Math.max(0, Number(headers['x-ratelimit-reset']) - Math.floor(now() / 1000));
  }
  return new GitHubError(e.status, message, errors, retryAfter);
}

export type GitHubAuth =
  | { kind: 'token'; token: string }
  | { kind: 'app'; appId: string; privateKey: string; installationId: number };

export interface GitHubClientOptions {
  /** https://api.github.com, or https://<host>/api/v3 for GitHub Enterprise Server. */
  baseUrl: string;
  auth: GitHubAuth;
  userAgent?: string;
  /** Clock for app tokens and rate-limit resets (injected so tests control it). */
  now?: () => number;
}

/** Base64url without padding (JWT segments). */
const b64url = (input: Buffer | string): string => Buffer.from(input).toString('base64url');

/** An RS256 JWT identifying the GitHub App (valid ≤ 10 minutes; backdated 60 s for clock drift, as GitHub advises). */
export function appJwt(appId: string, privateKey: string, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000) - 60;
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const payload = b64url(JSON.stringify({ iat, exp: iat + 9 * 60, iss: appId }));
  const signature = createSign('RSA-SHA256').update(`${header}.${payload}`).sign(privateKey);
  return `${header}.${payload}.${b64url(signature)}`;
}

/**
 * GitHub through @octokit/rest. The token lives in a closure and only ever travels in the
 * Authorization header; errors are rebuilt from GitHub's response body, so no message we keep or log
 * can contain it. No Octokit retry or throttling plugin is loaded: the publisher owns every retry,
 * because a blind retry of a POST is exactly how a review gets posted twice.
 */
export class OctokitGitHub implements GitHubPort, GitHubStatusPort {
  private readonly octokit: Octokit;
  private readonly now: () => number;
  private installationToken: { token: string; expiresAt: number } | null = null;

  constructor(private readonly options: GitHubClientOptions) {
    this.now = options.now ?? Date.now;
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    // Loaded on first use: @octokit/rest is ESM-only, and nothing but a publish needs it.
    const { Octokit: OctokitClass } = require('@octokit/rest') as typeof import('@octokit/rest');
    this.octokit = new OctokitClass({ baseUrl: options.baseUrl.replace(/\/+$/, ''), userAgent: options.userAgent ?? 'review-ledger', log: silent });
    this.octokit.hook.before('request', async (req) => {
      if ((req.url as string).includes('/app/installations/')) return;
      req.headers.authorization = `token ${await this.token()}`;
    });
  }

  private async token(): Promise<string> {
    const auth = this.options.auth;
    if (auth.kind === 'token') return auth.token;
    if (this.installationToken && this.installationToken.expiresAt - 60_000 > this.now()) return this.installationToken.token;
    const jwt = appJwt(auth.appId, auth.privateKey, this.now());
    try {
      const res = await this.octokit.request('POST /app/installations/{installation_id}/access_tokens', {
        installation_id: auth.installationId,
        headers: { authorization: `Bearer ${jwt}` },
      });
      this.installationToken = { token: res.data.token, expiresAt: Date.parse(res.data.expires_at) };
      return res.data.token;
    } catch (err) {
      throw toGitHubError(err, this.now);
    }
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof GitHubError) throw err;
      throw toGitHubError(err, this.now);
    }
  }

  getPull(pr: PrRef): Promise<PullInfo> {
    return this.call(async () => {
      const { data } = await this.octokit.rest.pulls.get({ owner: pr.owner, repo: pr.repo, pull_number: pr.pullNumber });
      return { headSha: data.head.sha, baseSha: data.base.sha, state: data.state, authorLogin: data.user?.login ?? null };
    });
  }

  listFiles(pr: PrRef): Promise<PrFile[]> {
    return this.call(async () => {
      const files = await this.octokit.paginate(this.octokit.rest.pulls.listFiles, { owner: pr.owner, repo: pr.repo, pull_number: pr.pullNumber, per_page: 100 });
      return files.map((f) => ({ filename: f.filename, status: f.status, previousFilename: f.previous_filename, patch: f.patch }));
    });
  }

  listReviews(pr: PrRef): Promise<ForgeReview[]> {
    return this.call(async () => {
      const reviews = await this.octokit.paginate(this.octokit.rest.pulls.listReviews, { owner: pr.owner, repo: pr.repo, pull_number: pr.pullNumber, per_page: 100 });
      return reviews.map(toForgeReview);
    });
  }

  listReviewComments(pr: PrRef, reviewId: number): Promise<Array<{ body: string; path: string }>> {
    return this.call(async () => {
      const comments = await this.octokit.paginate(this.octokit.rest.pulls.listCommentsForReview, { owner: pr.owner, repo: pr.repo, pull_number: pr.pullNumber, review_id: reviewId, per_page: 100 });
      return comments.map((c) => ({ body: c.body, path: c.path }));
    });
  }

  createReview(pr: PrRef, review: CreateReviewRequest): Promise<ForgeReview> {
    return this.call(async () => {
      const { data } = await this.octokit.rest.pulls.createReview({ owner: pr.owner, repo: pr.repo, pull_number: pr.pullNumber, ...review });
      return toForgeReview(data);
    });
  }

  updateReviewBody(pr: PrRef, reviewId: number, body: string): Promise<ForgeReview> {
    return this.call(async () => {
      const { data } = await this.octokit.rest.pulls.updateReview({ owner: pr.owner, repo: pr.repo, pull_number: pr.pullNumber, review_id: reviewId, body });
      return toForgeReview(data);
    });
  }

  submitReview(pr: PrRef, reviewId: number, event: ReviewEvent, body: string): Promise<ForgeReview> {
    return this.call(async () => {
      const { data } = await this.octokit.rest.pulls.submitReview({ owner: pr.owner, repo: pr.repo, pull_number: pr.pullNumber, review_id: reviewId, event, body });
      return toForgeReview(data);
    });
  }

  listCommitStatuses(repo: RepoRef, sha: string): Promise<CommitStatus[]> {
    return this.call(async () => {
      // One page of 100 is enough: only the newest status of our context matters, and GitHub lists newest first.
      const { data } = await this.octokit.rest.repos.listCommitStatusesForRef({ owner: repo.owner, repo: repo.repo, ref: sha, per_page: 100 });
      return data.map((s) => ({ id: s.id, state: s.state, context: s.context, description: s.description ?? null, targetUrl: s.target_url ?? null }));
    });
  }

  createCommitStatus(repo: RepoRef, sha: string, status: CreateCommitStatusRequest): Promise<CommitStatus> {
    return this.call(async () => {
      const { data } = await this.octokit.rest.repos.createCommitStatus({ owner: repo.owner, repo: repo.repo, sha, ...status });
      return { id: data.id, state: data.state, context: data.context, description: data.description ?? null, targetUrl: data.target_url ?? null };
    });
  }
}

function toForgeReview(r: { id: number; body?: string | null; state: string; commit_id?: string | null; html_url?: string; user?: { login: string } | null }): ForgeReview {
  return { id: r.id, body: r.body ?? '', state: r.state, commitId: r.commit_id ?? null, htmlUrl: r.html_url ?? null, userLogin: r.user?.login ?? null };
}

/** Builds a client for a repo's forge. Registered as the `publish.github` service; tests point it at a local server. */
export type GitHubClientFactory = (forge: Forge) => GitHubPort;
export const GITHUB_SERVICE = new Slot<GitHubClientFactory>('publish.github');

/**
 * The default factory, from the environment (never from a request):
 * REVIEW_LEDGER_GITHUB_TOKEN (or GITHUB_TOKEN), or a GitHub App — REVIEW_LEDGER_GITHUB_APP_ID,
 * REVIEW_LEDGER_GITHUB_APP_INSTALLATION_ID and REVIEW_LEDGER_GITHUB_APP_PRIVATE_KEY (PEM) or
 * …_PRIVATE_KEY_FILE; REVIEW_LEDGER_GITHUB_API_URL overrides the API base (GitHub Enterprise), which is
 * otherwise derived from the repo's forge URL.
 */
export function githubClientFactoryFromEnv(env: NodeJS.ProcessEnv = process.env, githubEnterpriseHosts: readonly string[] = []): GitHubClientFactory {
  return (forge) => {
    if (forge.kind !== 'github') throw new DomainError('forge_not_supported', `repo forge: publishing supports GitHub only, this repo is on ${forge.kind}`);
    assertGitHubHost(forge.url, githubEnterpriseHosts);
    return new OctokitGitHub({ baseUrl: env.REVIEW_LEDGER_GITHUB_API_URL ?? apiBaseUrlFor(forge.url), auth: authFromEnv(env) });
  };
}

export function authFromEnv(env: NodeJS.ProcessEnv): GitHubAuth {
  const appId = env.REVIEW_LEDGER_GITHUB_APP_ID;
  if (appId) {
    const installationId = Number(env.REVIEW_LEDGER_GITHUB_APP_INSTALLATION_ID);
    if (!Number.isInteger(installationId) || installationId <= 0) throw new DomainError('github_not_configured', 'REVIEW_LEDGER_GITHUB_APP_INSTALLATION_ID: must be the numeric installation id of the GitHub App');
    const file = env.REVIEW_LEDGER_GITHUB_APP_PRIVATE_KEY_FILE;
    const privateKey = file ? fs.readFileSync(file, 'utf8') : env.REVIEW_LEDGER_GITHUB_APP_PRIVATE_KEY;
    if (!privateKey) throw new DomainError('github_not_configured', 'REVIEW_LEDGER_GITHUB_APP_PRIVATE_KEY or …_PRIVATE_KEY_FILE: required with REVIEW_LEDGER_GITHUB_APP_ID');
    return { kind: 'app', appId, privateKey, installationId };
  }
  const token = env.REVIEW_LEDGER_GITHUB_TOKEN ?? env.GITHUB_TOKEN;
  if (!token) throw new DomainError('github_not_configured', 'publishing needs GitHub credentials: set REVIEW_LEDGER_GITHUB_TOKEN (or GITHUB_TOKEN) or a GitHub App (REVIEW_LEDGER_GITHUB_APP_ID, …)');
  return { kind: 'token', token };
}

/**
 * The credential goes only to github.com or an Enterprise host the operator configured, matched exactly.
 * Checked again here, at the last step before a credential is attached, for repos registered before
 * the rule (their forge may name any host).
 */
export function assertGitHubHost(forgeUrl: string, githubEnterpriseHosts: readonly string[]): void {
  let host = '';
  try {
    host = new URL(forgeUrl).hostname.toLowerCase();
  } catch {
    /* not a URL: refused below */
  }
  if (host === 'github.com' || host === 'www.github.com' || githubEnterpriseHosts.includes(host)) return;
  throw new DomainError('github_host_not_allowed', `repo forge: "${host || forgeUrl.slice(0, 200)}" is neither github.com nor a GitHub Enterprise host configured by the operator (githubEnterpriseHosts), so the GitHub credential is not sent there`, { host });
}

/** https://github.com/o/r → https://api.github.com; https://ghe.example.com/o/r → https://ghe.example.com/api/v3. */
export function apiBaseUrlFor(forgeUrl: string): string {
  let host: string;
  let protocol = 'https:';
  try {
    const u = new URL(forgeUrl);
    host = u.host;
    protocol = u.protocol;
  } catch {
    return 'https://api.github.com';
  }
  return host === 'github.com' || host === 'www.github.com' ? 'https://api.github.com' : `${protocol}//${host}/api/v3`;
}
