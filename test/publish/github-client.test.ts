import { generateKeyPairSync } from 'node:crypto';
import { GitHubError, OctokitGitHub, apiBaseUrlFor, authFromEnv } from '../../src/publish/github-client';
import { createReviewRequestSchema, FakeGitHub } from './fake-github';
import { BOT, buildRepo, githubFiles, TOKEN } from './support';

const spec = require('@octokit/openapi/generated/api.github.com.json');

describe('the GitHub client against the stand-in (real sockets), and the stand-in\'s rules', () => {
  const github = new FakeGitHub();
  const { repo, base, head } = buildRepo();
  const pr = { owner: 'acme', repo: 'web-app', pullNumber: 7 };
  let client: OctokitGitHub;

  beforeAll(async () => {
    github.tokens.set(TOKEN, BOT);
    await github.start();
    github.addPull({ number: 7, author: 'octocat', headSha: head, baseSha: base, files: githubFiles(repo, base, head) });
    client = new OctokitGitHub({ baseUrl: github.baseUrl, auth: { kind: 'token', token: TOKEN } });
  });
  afterAll(async () => {
    await github.stop();
    repo.cleanup();
  });

  const refusal = async (p: Promise<unknown>): Promise<GitHubError> => {
    const err = await p.then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(GitHubError);
    return err as GitHubError;
  };

  it('validates review requests with the create-review schema of GitHub\'s own OpenAPI description', async () => {
    expect(createReviewRequestSchema).toBe(spec.paths['/repos/{owner}/{repo}/pulls/{pull_number}/reviews'].post.requestBody.content['application/json'].schema);
    const err = await refusal(client.createReview(pr, { commit_id: head, body: 'x', event: 'COMMENT', comments: [{ path: 'src/app.ts', body: 'b', line: '5' as unknown as number, side: 'RIGHT' }] }));
    expect(err.status).toBe(422);
    expect(err.githubMessage).toMatch(/^Invalid request\./);
    expect(err.githubMessage).toContain('must be integer');
    const bad = await refusal(client.createReview(pr, { commit_id: head, body: 'x', event: 'SHIP_IT' as 'COMMENT' }));
    expect(bad.githubMessage).toContain('must be equal to one of the allowed values');
  });

  it('answers 422 with GitHub\'s messages for bad paths, out-of-hunk lines and cross-hunk ranges, and posts nothing', async () => {
    const post = (c: object) => client.createReview(pr, { commit_id: head, body: 'x', event: 'COMMENT', comments: [{ path: 'src/app.ts', body: 'b', line: 5, side: 'RIGHT', ...c }] });
    expect((await refusal(post({ path: 'src/nope.ts' }))).errors).toEqual(['Path could not be resolved']);
    expect((await refusal(post({ path: 'assets/logo.png', line: 1 }))).errors).toEqual(['Path could not be resolved']);
    expect((await refusal(post({ line: 12 }))).errors).toEqual(['Pull request review thread line must be part of the diff']);
    expect((await refusal(post({ line: 24, side: 'LEFT' }))).errors).toEqual(['Pull request review thread line must be part of the diff']);
    expect((await refusal(post({ start_line: 5, line: 29, start_side: 'RIGHT' }))).errors).toEqual(['Pull request review thread start line must be part of the same hunk as the line.']);
    expect(github.pulls.get(7)!.reviews).toHaveLength(0);
    await expect(post({ line: 20, side: 'LEFT' })).resolves.toMatchObject({ state: 'COMMENTED' });
    await expect(post({ start_line: 4, line: 6, start_side: 'RIGHT' })).resolves.toMatchObject({ state: 'COMMENTED' });
  });

  it('refuses approving or requesting changes on one\'s own pull request', async () => {
    const own = new FakeGitHub();
    own.tokens.set(TOKEN, 'octocat');
    await own.start();
    own.addPull({ number: 1, author: 'octocat', headSha: head, baseSha: base, files: [] });
    const c = new OctokitGitHub({ baseUrl: own.baseUrl, auth: { kind: 'token', token: TOKEN } });
    const p1 = { owner: 'acme', repo: 'web-app', pullNumber: 1 };
    expect((await refusal(c.createReview(p1, { commit_id: head, body: 'ok', event: 'APPROVE' }))).errors).toEqual(['Can not approve your own pull request']);
    expect((await refusal(c.createReview(p1, { commit_id: head, body: 'no', event: 'REQUEST_CHANGES' }))).errors).toEqual(['Can not request changes on your own pull request']);
    await expect(c.createReview(p1, { commit_id: head, body: 'fine', event: 'COMMENT' })).resolves.toMatchObject({ state: 'COMMENTED' });
    await own.stop();
  });

  it('paginates files and reviews (Link headers)', async () => {
    github.pageSize = 1;
    const files = await client.listFiles(pr);
    expect(files.map((x) => x.filename)).toEqual(['assets/logo.png', 'src/app.ts', 'src/old.ts']);
    expect(files[0].patch).toBeUndefined();
    const reviews = await client.listReviews(pr);
    expect(reviews.length).toBe(github.pulls.get(7)!.reviews.length);
    expect(github.log.filter((r) => r.path.endsWith('/files')).length).toBe(3);
    github.pageSize = 100;
  });

  it('a GitHub App exchanges an RS256 JWT for an installation token, then acts under the app identity', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    github.app = { appId: '12345', publicKey, installationId: 99, login: 'review-ledger-app[bot]' };
    const app = new OctokitGitHub({ baseUrl: github.baseUrl, auth: { kind: 'app', appId: '12345', privateKey, installationId: 99 } });
    const review = await app.createReview(pr, { commit_id: head, body: 'from the app', event: 'COMMENT' });
    expect(review.userLogin).toBe('review-ledger-app[bot]');
    await app.getPull(pr);
    expect(github.log.filter((r) => r.path === '/app/installations/99/access_tokens')).toHaveLength(1);
    const wrongKey = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
    const impostor = new OctokitGitHub({ baseUrl: github.baseUrl, auth: { kind: 'app', appId: '12345', privateKey: wrongKey, installationId: 99 } });
    expect((await refusal(impostor.getPull(pr))).status).toBe(401);
  });

  it('errors carry GitHub\'s words, never the token', async () => {
    const stranger = new OctokitGitHub({ baseUrl: github.baseUrl, auth: { kind: 'token', token: 'ghp_wrong_secret' } });
    const err = await refusal(stranger.getPull(pr));
    expect(err.message).toBe('GitHub answered 401: Bad credentials');
    expect(JSON.stringify(err)).not.toContain('ghp_wrong_secret');
    expect(err.stack ?? '').not.toContain('ghp_wrong_secret');
  });

  it('configuration: API base from the forge URL (GitHub Enterprise) and credentials from the environment only', () => {
    expect(apiBaseUrlFor('https://github.com/acme/web-app')).toBe('https://api.github.com');
    expect(apiBaseUrlFor('https://ghe.example.com/acme/web-app')).toBe('https://ghe.example.com/api/v3');
    expect(authFromEnv({ REVIEW_LEDGER_GITHUB_TOKEN: 't1', GITHUB_TOKEN: 't2' })).toEqual({ kind: 'token', token: 't1' });
    expect(() => authFromEnv({})).toThrow(expect.objectContaining({ code: 'github_not_configured' }));
    expect(() => authFromEnv({ REVIEW_LEDGER_GITHUB_APP_ID: '1' })).toThrow(/INSTALLATION_ID/);
  });
});
