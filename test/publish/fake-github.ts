import Ajv from 'ajv';
import { createVerify } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server standing in for the parts of api.github.com the publisher uses, over real
 * loopback sockets. It enforces GitHub's rules rather than echoing: request bodies are validated with
 * the request schemas of GitHub's own OpenAPI description (@octokit/openapi), and review comments are
 * resolved against the PR's diff at `commit_id` by a hunk reader written here independently of
 * src/publish/diff-anchors.ts, answering 422 with GitHub's messages.
 *
 * Knobs reproduce what real GitHub does on bad days: a body-only "orphan" review persisted before a
 * 422, secondary rate limits with `retry-after`, a head that moves between two reads, a PR authored by
 * the token's own user (self-approval), and an Actions token that may not approve.
 */

const spec = require('@octokit/openapi/generated/api.github.com.json');
const DOCS_CREATE_REVIEW = 'https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request';
const REVIEWS_PATH = '/repos/{owner}/{repo}/pulls/{pull_number}/reviews';

const ajv = new Ajv({ strict: false, allErrors: true });
const requestSchemaOf = (path: string, method: string) => spec.paths[path][method].requestBody.content['application/json'].schema;
/** Schema check → the error text GitHub would give, or null. (A plain function: ajv's type guard would erase `body`'s type.) */
const checker = (schema: object) => {
  const validate = ajv.compile(schema);
  return (data: unknown): string | null => (validate(data) ? null : `Invalid request.\n\n${ajv.errorsText(validate.errors)}`);
};
const STATUSES_PATH = '/repos/{owner}/{repo}/statuses/{sha}';
const validators = {
  createCommitStatus: checker(requestSchemaOf(STATUSES_PATH, 'post')),
  createReview: checker(requestSchemaOf(REVIEWS_PATH, 'post')),
  updateReview: checker(requestSchemaOf(`${REVIEWS_PATH}/{review_id}`, 'put')),
  submitReview: checker(requestSchemaOf(`${REVIEWS_PATH}/{review_id}/events`, 'post')),
};
/** Exposed so a test can prove the schema really came from the OpenAPI package. */
export const createReviewRequestSchema = requestSchemaOf(REVIEWS_PATH, 'post');
export const createCommitStatusRequestSchema = requestSchemaOf(STATUSES_PATH, 'post');
export const createCommitStatusOperationId: string = spec.paths[STATUSES_PATH].post.operationId;

/** A commit status as GitHub stores it (the fields of its `status` schema the ledger reads). */
export interface StoredStatus {
  id: number;
  state: string;
  context: string;
  description: string | null;
  target_url: string | null;
  creator: string;
}

export interface FakeFile {
  filename: string;
  status: 'added' | 'removed' | 'modified' | 'renamed';
  patch?: string;
  previous_filename?: string;
}

interface StoredComment {
  id: number;
  path: string;
  line: number;
  side: string;
  start_line: number | null;
  body: string;
  commit_id: string;
}

export interface StoredReview {
  id: number;
  user: { login: string };
  body: string;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'PENDING';
  commit_id: string;
  comments: StoredComment[];
}

export interface FakePull {
  number: number;
  author: string;
  headSha: string;
  baseSha: string;
  /** head sha → that head's files, as GitHub lists them. */
  diffs: Map<string, FakeFile[]>;
  reviews: StoredReview[];
}

export interface LoggedRequest {
  method: string;
  path: string;
  body: any;
  status: number;
}

export class FakeGitHub {
  readonly pulls = new Map<number, FakePull>();
  readonly log: LoggedRequest[] = [];
  /** Tokens accepted in the Authorization header, and whose identity they carry. */
  readonly tokens = new Map<string, string>();
  /** Page size cap (GitHub caps at 100; lower it to exercise pagination). */
  pageSize = 100;
  /** Persist a body-only review before answering 422 to a review whose comments do not resolve (submitted, or left PENDING). */
  orphanOn422: false | true | 'PENDING' = false;
  /** The next POSTs to the reviews endpoint are answered with these rate-limit responses first. */
  rateLimits: Array<{ status: 403 | 429; retryAfter: number }> = [];
  /** Logins that are GitHub Actions tokens in a repo where Actions may not approve. */
  actionsLogins = new Set<string>();
  /**
   * `path:line` GitHub refuses although its listed patch shows it — observed on github.com with large
   * diffs ("Line could not be resolved" for a line inside a hunk). The only way past our own checks.
   */
  refuseLines = new Set<string>();
  /** Called after each listing of a PR's files (e.g. to push a new head mid-publish). */
  afterFilesListed: ((pull: FakePull) => void) | null = null;
  /** Latency of listing a pull's reviews (ms): widens the window between a publisher's look and its post. */
  reviewsListingDelayMs = 0;
  /** Latency of listing a commit's statuses (ms): the same for the verdict status sync. */
  statusListingDelayMs = 0;
  /** Commit statuses by sha, newest last (listed newest first, as GitHub does). */
  readonly statuses = new Map<string, StoredStatus[]>();
  /** Commits that exist besides the PRs' heads and bases (a status on an unknown sha is a 422). */
  readonly commits = new Set<string>();
  /** The next POSTs to the statuses endpoint are answered with these rate-limit responses first. */
  statusRateLimits: Array<{ status: 403 | 429; retryAfter: number }> = [];
  /** Called after each accepted status (e.g. to push a new head while the ledger is posting). */
  afterStatusCreated: ((sha: string, status: StoredStatus) => void) | null = null;
  /** GitHub App: id and public key that verify the app JWT, and the installation it may get tokens for. */
  app: { appId: string; publicKey: string; installationId: number; login: string } | null = null;
  private server: http.Server | null = null;
  private nextId = 4000;
  baseUrl = '';

  addPull(p: { number: number; author: string; headSha: string; baseSha: string; files: FakeFile[] }): FakePull {
    const pull: FakePull = { number: p.number, author: p.author, headSha: p.headSha, baseSha: p.baseSha, diffs: new Map([[p.headSha, p.files]]), reviews: [] };
    this.pulls.set(p.number, pull);
    return pull;
  }

  /** A push to the PR: a new head with its diff. */
  pushHead(prNumber: number, headSha: string, files: FakeFile[]): void {
    const pull = this.pulls.get(prNumber)!;
    pull.headSha = headSha;
    pull.diffs.set(headSha, files);
  }

  statusPosts(): LoggedRequest[] {
    return this.log.filter((r) => r.method === 'POST' && /^\/repos\/[^/]+\/[^/]+\/statuses\//.test(r.path));
  }

  /** The newest status of `context` on `sha`, as branch protection would read it. */
  latestStatus(sha: string, context: string): StoredStatus | undefined {
    return [...(this.statuses.get(sha) ?? [])].reverse().find((s) => s.context.toLowerCase() === context.toLowerCase());
  }

  private knownCommit(sha: string): boolean {
    if (this.commits.has(sha)) return true;
    for (const p of this.pulls.values()) if (p.baseSha === sha || p.diffs.has(sha)) return true;
    return false;
  }

  private statusJson(owner: string, repo: string, sha: string, s: StoredStatus) {
    return {
      url: `https://api.github.com/repos/${owner}/${repo}/statuses/${sha}`,
      avatar_url: null,
      id: s.id,
      node_id: `SC_${s.id}`,
      state: s.state,
      description: s.description,
      target_url: s.target_url,
      context: s.context,
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:00Z',
      creator: { login: s.creator, id: 1, type: 'Bot' },
    };
  }

  /** `POST /repos/{o}/{r}/statuses/{sha}` and `GET /repos/{o}/{r}/commits/{ref}/statuses`. */
  private routeStatuses(req: http.IncomingMessage, res: http.ServerResponse, body: any, url: URL, login: string): boolean {
    const post = /^\/repos\/([^/]+)\/([^/]+)\/statuses\/([^/]+)$/.exec(url.pathname);
    const list = /^\/repos\/([^/]+)\/([^/]+)\/commits\/([^/]+)\/statuses$/.exec(url.pathname);
    if (post && req.method === 'POST') {
      const [, owner, repo, sha] = post;
      const limit = this.statusRateLimits.shift();
      if (limit) {
        this.reply(req, res, body, limit.status, { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', status: String(limit.status) }, { 'retry-after': String(limit.retryAfter) });
        return true;
      }
      const invalid = validators.createCommitStatus(body);
      if (invalid) return this.reply(req, res, body, 422, { message: invalid, status: '422' }), true;
      if (!this.knownCommit(sha)) return this.unprocessable(req, res, body, [`No commit found for SHA: ${sha}`]), true;
      // Observed on github.com: descriptions are cut at 140 characters by refusing longer ones.
      if ((body.description ?? '').length > 140) return this.unprocessable(req, res, body, ['description is too long (maximum is 140 characters)']), true;
      const stored: StoredStatus = { id: this.nextId++, state: body.state, context: body.context ?? 'default', description: body.description ?? null, target_url: body.target_url ?? null, creator: login };
      const list = this.statuses.get(sha) ?? [];
      list.push(stored);
      this.statuses.set(sha, list);
      this.reply(req, res, body, 201, this.statusJson(owner, repo, sha, stored));
      this.afterStatusCreated?.(sha, stored);
      return true;
    }
    if (list && req.method === 'GET' && this.statusListingDelayMs > 0 && !(req as { delayed?: boolean }).delayed) {
      (req as { delayed?: boolean }).delayed = true;
      setTimeout(() => this.routeStatuses(req, res, body, url, login), this.statusListingDelayMs);
      return true;
    }
    if (list && req.method === 'GET') {
      const [, owner, repo, ref] = list;
      const items = [...(this.statuses.get(ref) ?? [])].reverse().map((s) => this.statusJson(owner, repo, ref, s));
      this.paginate(req, res, url, items);
      return true;
    }
    return false;
  }

  reviewPosts(): LoggedRequest[] {
    return this.log.filter((r) => r.method === 'POST' && /\/reviews$/.test(r.path));
  }

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        let body: any = undefined;
        const text = Buffer.concat(chunks).toString('utf8');
        if (text) {
          try {
            body = JSON.parse(text);
          } catch {
            return this.reply(req, res, body, 400, { message: 'Problems parsing JSON' });
          }
        }
        try {
          this.route(req, res, body);
        } catch (err) {
          this.reply(req, res, body, 500, { message: String((err as Error).stack) });
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private reply(req: http.IncomingMessage, res: http.ServerResponse, reqBody: any, status: number, data: unknown, headers: Record<string, string> = {}): void {
    this.log.push({ method: req.method!, path: new URL(req.url!, 'http://x').pathname, body: reqBody, status });
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(data));
  }

  private unprocessable(req: http.IncomingMessage, res: http.ServerResponse, body: any, errors: string[]): void {
    this.reply(req, res, body, 422, { message: 'Unprocessable Entity', errors, documentation_url: DOCS_CREATE_REVIEW, status: '422' });
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse, body: any): void {
    const url = new URL(req.url!, this.baseUrl);
    const method = req.method!;
    const tokenMatch = /^POST \/app\/installations\/(\d+)\/access_tokens$/.exec(`${method} ${url.pathname}`);
    if (tokenMatch) return this.installationToken(req, res, body, Number(tokenMatch[1]));

    const auth = req.headers.authorization ?? '';
    const login = this.tokens.get(auth.replace(/^(token|bearer) /i, ''));
    if (!login) return this.reply(req, res, body, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
    if (this.routeStatuses(req, res, body, url, login)) return;

    const m = /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)(?:(\/files|\/reviews)(?:\/(\d+)(\/events|\/comments)?)?)?$/.exec(url.pathname);
    const pull = m ? this.pulls.get(Number(m[3])) : undefined;
    if (!m || !pull) return this.reply(req, res, body, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
    const [, owner, repo, , sub, reviewId, reviewSub] = m;
    const key = `${method} ${sub ?? ''}${reviewId ? `/{id}${reviewSub ?? ''}` : ''}`;
    switch (key) {
      case 'GET ':
        return this.reply(req, res, body, 200, { number: pull.number, state: 'open', user: { login: pull.author }, head: { sha: pull.headSha, ref: 'feature' }, base: { sha: pull.baseSha, ref: 'main' } });
      case 'GET /files': {
        const files = pull.diffs.get(pull.headSha)!.map((f) => ({ sha: '0'.repeat(40), additions: 0, deletions: 0, changes: 0, blob_url: '', raw_url: '', contents_url: '', ...f }));
        this.paginate(req, res, url, files);
        this.afterFilesListed?.(pull);
        return;
      }
      case 'GET /reviews':
        if (this.reviewsListingDelayMs > 0) {
          // What the list holds is read when the answer leaves, as a slow server would.
          setTimeout(() => this.paginate(req, res, url, pull.reviews.map((r) => this.reviewJson(owner, repo, pull, r))), this.reviewsListingDelayMs);
          return;
        }
        return this.paginate(req, res, url, pull.reviews.map((r) => this.reviewJson(owner, repo, pull, r)));
      case 'POST /reviews':
        return this.createReview(req, res, body, owner, repo, pull, login);
      case 'PUT /reviews/{id}':
      case 'POST /reviews/{id}/events':
      case 'GET /reviews/{id}/comments': {
        const review = pull.reviews.find((r) => r.id === Number(reviewId));
        if (!review) return this.reply(req, res, body, 404, { message: 'Not Found', status: '404' });
        if (key === 'GET /reviews/{id}/comments') return this.paginate(req, res, url, review.comments.map((c) => ({ ...c, pull_request_review_id: review.id })));
        const validate = key === 'PUT /reviews/{id}' ? validators.updateReview : validators.submitReview;
        const invalid = validate(body);
        if (invalid) return this.reply(req, res, body, 422, { message: invalid, status: '422' });
        if (review.user.login !== login) return this.reply(req, res, body, 403, { message: 'Resource not accessible by integration', status: '403' });
        if (key === 'POST /reviews/{id}/events') {
          if (review.state !== 'PENDING') return this.unprocessable(req, res, body, ['Can not submit a non-pending review']);
          const refusal = this.eventRefusal(body.event, pull, login);
          if (refusal) return this.unprocessable(req, res, body, [refusal]);
          review.state = stateOf(body.event);
        }
        review.body = body.body;
        return this.reply(req, res, body, 200, this.reviewJson(owner, repo, pull, review));
      }
    }
    return this.reply(req, res, body, 404, { message: 'Not Found', status: '404' });
  }

  private paginate(req: http.IncomingMessage, res: http.ServerResponse, url: URL, items: unknown[]): void {
    const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 30), this.pageSize);
    const page = Number(url.searchParams.get('page') ?? 1);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const headers: Record<string, string> = {};
    if (page < last) {
      const link = (p: number) => {
        const u = new URL(url.toString());
        u.searchParams.set('per_page', String(perPage));
        u.searchParams.set('page', String(p));
        return u.toString();
      };
      headers.link = `<${link(page + 1)}>; rel="next", <${link(last)}>; rel="last"`;
    }
    this.reply(req, res, undefined, 200, items.slice((page - 1) * perPage, page * perPage), headers);
  }

  private reviewJson(owner: string, repo: string, pull: FakePull, r: StoredReview) {
    return {
      id: r.id,
      node_id: `PRR_${r.id}`,
      user: r.user,
      body: r.body,
      state: r.state,
      commit_id: r.commit_id,
      html_url: `https://github.com/${owner}/${repo}/pull/${pull.number}#pullrequestreview-${r.id}`,
      pull_request_url: `https://api.github.com/repos/${owner}/${repo}/pulls/${pull.number}`,
      author_association: 'NONE',
      _links: { html: { href: '' }, pull_request: { href: '' } },
      submitted_at: r.state === 'PENDING' ? undefined : '2026-01-01T00:00:00Z',
    };
  }

  private eventRefusal(event: string | undefined, pull: FakePull, login: string): string | null {
    if (event === 'APPROVE' && this.actionsLogins.has(login)) return 'GitHub Actions is not permitted to approve pull requests.';
    if (event === 'APPROVE' && pull.author === login) return 'Can not approve your own pull request';
    if (event === 'REQUEST_CHANGES' && pull.author === login) return 'Can not request changes on your own pull request';
    return null;
  }

  private createReview(req: http.IncomingMessage, res: http.ServerResponse, body: any, owner: string, repo: string, pull: FakePull, login: string): void {
    const limit = this.rateLimits.shift();
    if (limit) {
      return this.reply(
        req,
        res,
        body,
        limit.status,
        {
          message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.',
          documentation_url: 'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
          status: String(limit.status),
        },
        { 'retry-after': String(limit.retryAfter) },
      );
    }
    const invalid = validators.createReview(body);
    if (invalid) return this.reply(req, res, body, 422, { message: invalid, documentation_url: DOCS_CREATE_REVIEW, status: '422' });
    const commitId: string = body.commit_id ?? pull.headSha;
    const files = pull.diffs.get(commitId);
    if (!files) return this.unprocessable(req, res, body, [`No commit found for SHA: ${commitId}`]);
    const refusal = this.eventRefusal(body.event, pull, login);
    if (refusal) return this.unprocessable(req, res, body, [refusal]);
    if ((body.event === 'REQUEST_CHANGES' || body.event === 'COMMENT') && !body.body && !(body.comments?.length > 0)) {
      return this.unprocessable(req, res, body, ['Body is required when using REQUEST_CHANGES or COMMENT']);
    }
    if ((body.body ?? '').length > 65_536) return this.unprocessable(req, res, body, ['Body is too long (maximum is 65536 characters)']);
    const errors = new Set<string>();
    const comments: StoredComment[] = [];
    for (const c of body.comments ?? []) {
      const error = c.body.length > 65_536 ? 'Body is too long (maximum is 65536 characters)' : this.refuseLines.has(`${c.path}:${c.line}`) ? 'Line could not be resolved' : commentError(c, files);
      if (error) errors.add(error);
      else comments.push({ id: this.nextId++, path: c.path, line: c.line, side: c.side ?? 'RIGHT', start_line: c.start_line ?? null, body: c.body, commit_id: commitId });
    }
    const state: StoredReview['state'] = body.event ? stateOf(body.event) : 'PENDING';
    if (errors.size > 0) {
      // Observed on github.com: the review record (body only) can survive the refused request.
      if (this.orphanOn422) pull.reviews.push({ id: this.nextId++, user: { login }, body: body.body ?? '', state: this.orphanOn422 === 'PENDING' ? 'PENDING' : state, commit_id: commitId, comments: [] });
      return this.unprocessable(req, res, body, [...errors]);
    }
    const review: StoredReview = { id: this.nextId++, user: { login }, body: body.body ?? '', state, commit_id: commitId, comments };
    pull.reviews.push(review);
    this.reply(req, res, body, 200, this.reviewJson(owner, repo, pull, review));
  }

  private installationToken(req: http.IncomingMessage, res: http.ServerResponse, body: any, installationId: number): void {
    const jwt = (req.headers.authorization ?? '').replace(/^bearer /i, '');
    const [h, p, sig] = jwt.split('.');
    const ok =
      !!this.app &&
      !!sig &&
      installationId === this.app.installationId &&
      createVerify('RSA-SHA256').update(`${h}.${p}`).verify(this.app.publicKey, Buffer.from(sig, 'base64url')) &&
      JSON.parse(Buffer.from(p, 'base64url').toString()).iss === this.app.appId;
    if (!ok) return this.reply(req, res, body, 401, { message: 'A JSON web token could not be decoded', status: '401' });
    const token = `ghs_${installationId}_${this.nextId++}`;
    this.tokens.set(token, this.app!.login);
    this.reply(req, res, body, 201, { token, expires_at: '2099-01-01T00:00:00Z', permissions: { pull_requests: 'write' } });
  }
}

const stateOf = (event: string): StoredReview['state'] => (event === 'APPROVE' ? 'APPROVED' : event === 'REQUEST_CHANGES' ? 'CHANGES_REQUESTED' : 'COMMENTED');

/** side → line → hunk number, read from a GitHub `patch`. Deliberately written apart from src/publish. */
function hunkIndex(patch: string): { RIGHT: Map<number, number>; LEFT: Map<number, number> } {
  const out = { RIGHT: new Map<number, number>(), LEFT: new Map<number, number>() };
  let left = 0;
  let right = 0;
  let n = 0;
  for (const line of patch.split(/\n/)) {
    const h = line.match(/^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@/);
    if (h) {
      n++;
      left = parseInt(h[1], 10);
      right = parseInt(h[3], 10);
    } else if (n > 0 && line.startsWith('+')) {
      out.RIGHT.set(right, n);
      right += 1;
    } else if (n > 0 && line.startsWith('-')) {
      out.LEFT.set(left, n);
      left += 1;
    } else if (n > 0 && line.startsWith(' ')) {
      out.RIGHT.set(right, n);
      out.LEFT.set(left, n);
      right += 1;
      left += 1;
    }
  }
  return out;
}

/** GitHub's refusal for one review comment, or null when it resolves on the diff. */
function commentError(c: { path: string; line?: number; side?: string; start_line?: number; start_side?: string; position?: number }, files: FakeFile[]): string | null {
  const file = files.find((f) => f.filename === c.path);
  if (!file || !file.patch) return 'Path could not be resolved';
  if (c.position !== undefined || c.line === undefined) return 'Line could not be resolved';
  const side = (c.side ?? 'RIGHT') as 'RIGHT' | 'LEFT';
  if (side !== 'RIGHT' && side !== 'LEFT') return 'Line could not be resolved';
  const index = hunkIndex(file.patch);
  const hunk = index[side].get(c.line);
  if (hunk === undefined) return 'Pull request review thread line must be part of the diff';
  if (c.start_line !== undefined) {
    const startSide = (c.start_side ?? side) as 'RIGHT' | 'LEFT';
    if (c.start_line >= c.line && startSide === side) return 'Pull request review thread start line must precede the end line';
    const startHunk = index[startSide]?.get(c.start_line);
    if (startHunk === undefined) return 'Pull request review thread start line must be part of the diff';
    if (startHunk !== hunk) return 'Pull request review thread start line must be part of the same hunk as the line.';
  }
  return null;
}
