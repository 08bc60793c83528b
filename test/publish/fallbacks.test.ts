import { ALICE, BOB, BOT, CAROL, publishFixture } from './support';

type Fixture = Awaited<ReturnType<typeof publishFixture>>;

async function threeFindings(f: Fixture, priority = 'P2', confidence = 0.8) {
  const a = await f.file(ALICE, { title: 'five is a string now', priority, confidence, anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
  const b = await f.file(ALICE, { title: 'thirty is a string now', anchor: { path: 'src/app.ts', startLine: 29, endLine: 29 } });
  const c = await f.file(BOB, { title: 'v12 unused', brief: 'qa', anchor: { path: 'src/app.ts', startLine: 12, endLine: 12 } });
  await f.finalize();
  return [a, b, c];
}

const allMarkers = (text: string, fps: Array<{ fingerprint: string }>) => fps.every((n) => text.includes(`<!-- review-ledger:fp=${n.fingerprint} -->`));

describe('fallbacks when GitHub refuses', () => {
  let f: Fixture;
  afterEach(async () => f?.close());

  it('422 on an inline anchor → re-sent once with every finding in the body', async () => {
    f = await publishFixture();
    const nodes = await threeFindings(f);
    f.github.refuseLines.add('src/app.ts:29');
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'published', inline: 0, folded: 3, fallbacks: ['anchors_refolded'] });
    const posts = f.github.reviewPosts();
    expect(posts.map((p) => p.status)).toEqual([422, 200]);
    expect(posts[1].body.comments).toBeUndefined();
    expect(allMarkers(posts[1].body.body, nodes)).toBe(true);
    expect(posts[1].body.body).toContain('GitHub refused the inline anchors');
    expect(f.github.pulls.get(7)!.reviews).toHaveLength(1);
    const [published] = await f.eventsOf('ReviewPublished');
    expect(published.data).toMatchObject({ fallbackUsed: true, inline: [] });
  });

  it('422 after GitHub kept a body-only orphan → the orphan is completed, nothing is posted twice', async () => {
    f = await publishFixture();
    const nodes = await threeFindings(f);
    f.github.refuseLines.add('src/app.ts:29');
    f.github.orphanOn422 = true;
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'published', inline: 0, folded: 3, fallbacks: ['orphan_completed'] });
    expect(f.github.reviewPosts()).toHaveLength(1);
    const reviews = f.github.pulls.get(7)!.reviews;
    expect(reviews).toHaveLength(1);
    expect(allMarkers(reviews[0].body, nodes)).toBe(true);
    expect(f.github.log.filter((r) => r.method === 'PUT')).toHaveLength(1);
    expect((out.response.result as any).forgeReviewId).toBe(String(reviews[0].id));
  });

  it('a PENDING orphan is submitted with every finding in its body and the verdict event', async () => {
    f = await publishFixture();
    const nodes = await threeFindings(f, 'P0', 0.9);
    f.github.refuseLines.add('src/app.ts:29');
    f.github.orphanOn422 = 'PENDING';
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'published', event: 'REQUEST_CHANGES', inline: 0, folded: 3, fallbacks: ['orphan_completed'] });
    const reviews = f.github.pulls.get(7)!.reviews;
    expect(reviews).toHaveLength(1);
    expect(reviews[0].state).toBe('CHANGES_REQUESTED');
    expect(allMarkers(reviews[0].body, nodes)).toBe(true);
    expect(f.github.log.filter((r) => r.method === 'POST' && r.path.endsWith('/events')).map((r) => r.status)).toEqual([200]);
  });

  it('GitHub refuses to let the server approve its own PR → re-sent as COMMENT, and the body and event say so', async () => {
    f = await publishFixture({ prAuthor: BOT });
    await threeFindings(f);
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'published', event: 'COMMENT', verdict: 'Ship', eventRefusal: 'Can not approve your own pull request', fallbacks: ['event_downgraded'] });
    const posts = f.github.reviewPosts();
    expect(posts.map((p) => [p.body.event, p.status])).toEqual([
      ['APPROVE', 422],
      ['COMMENT', 200],
    ]);
    expect(posts[1].body.comments).toHaveLength(2);
    expect(posts[1].body.body).toContain('GitHub refused to post this review as APPROVE ("Can not approve your own pull request"), so it is posted as COMMENT');
    const [published] = await f.eventsOf('ReviewPublished');
    expect(published.data).toMatchObject({ event: 'COMMENT', requestedEvent: 'APPROVE', eventRefusal: 'Can not approve your own pull request' });
  });

  it('Block on its own PR → REQUEST_CHANGES refused → COMMENT', async () => {
    f = await publishFixture({ prAuthor: BOT });
    await threeFindings(f, 'P0', 0.9);
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ event: 'COMMENT', verdict: 'Block', eventRefusal: 'Can not request changes on your own pull request' });
    expect(f.github.reviewPosts().map((p) => p.body.event)).toEqual(['REQUEST_CHANGES', 'COMMENT']);
  });

  it('an Actions token may not approve → COMMENT', async () => {
    f = await publishFixture();
    f.github.actionsLogins.add(BOT);
    await threeFindings(f);
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ event: 'COMMENT', eventRefusal: 'GitHub Actions is not permitted to approve pull requests.' });
  });

  it('secondary rate limits (403 and 429 with retry-after) are waited out, then posted once', async () => {
    f = await publishFixture();
    await threeFindings(f);
    f.github.rateLimits.push({ status: 403, retryAfter: 1 }, { status: 429, retryAfter: 1 });
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'published', fallbacks: ['rate_limit_retry'] });
    expect(f.sleeps).toEqual([1000, 1000]);
    expect(f.github.reviewPosts().map((p) => p.status)).toEqual([403, 429, 200]);
    // Before each re-send the publisher looked for its marker.
    const gets = f.github.log.filter((r) => r.method === 'GET' && r.path.endsWith('/reviews'));
    expect(gets.length).toBeGreaterThanOrEqual(3);
    expect(f.github.pulls.get(7)!.reviews).toHaveLength(1);
  });

  it('a rate limit longer than the bound fails with GitHub\'s message, records it, and a later publish succeeds', async () => {
    f = await publishFixture();
    await threeFindings(f);
    f.github.rateLimits.push({ status: 403, retryAfter: 3600 });
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'failed', githubStatus: 403 });
    expect((out.response.result as any).reason).toContain('You have exceeded a secondary rate limit');
    expect(f.sleeps).toEqual([]);
    const [failed] = await f.eventsOf('PublishFailed');
    expect(failed.data).toMatchObject({ status: 403, by: CAROL.principal });
    expect(f.github.pulls.get(7)!.reviews).toHaveLength(0);
    const retry = await f.publish(CAROL);
    expect(retry.response.result).toMatchObject({ status: 'published' });
    expect(f.github.pulls.get(7)!.reviews).toHaveLength(1);
  });

  it('a head that moves between verification and post is re-read: commit_id is the new head and no line of the old one is pinned', async () => {
    f = await publishFixture();
    const nodes = await threeFindings(f);
    f.repo.write('src/app.ts', 'const rewritten = true;\n');
    const moved = f.repo.commit('force push');
    f.github.afterFilesListed = (pull) => {
      if (pull.headSha !== moved) f.github.pushHead(7, moved, [{ filename: 'src/app.ts', status: 'modified', patch: '@@ -1,40 +1 @@\n-const v1 = 1;\n+const rewritten = true;' }]);
    };
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'published', inline: 0, folded: 3 });
    const [post] = f.github.reviewPosts();
    expect(post.body.commit_id).toBe(moved);
    expect(post.body.comments).toBeUndefined();
    expect(post.body.body).toContain('the PR has moved to');
    expect(allMarkers(post.body.body, nodes)).toBe(true);
    const pullReads = f.github.log.filter((r) => r.method === 'GET' && /\/pulls\/7$/.test(r.path));
    expect(pullReads.length).toBeGreaterThanOrEqual(3);
    const [published] = await f.eventsOf('ReviewPublished');
    expect((published.data as any).folded.map((x: any) => x.reason)).toEqual(['head_moved_since_review', 'head_moved_since_review', 'head_moved_since_review']);
  });

  it('other errors fail with GitHub\'s message and lose nothing (the review stays awaiting approval)', async () => {
    f = await publishFixture();
    await threeFindings(f);
    f.github.tokens.clear();
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'failed', githubStatus: 401, reason: 'GitHub answered 401: Bad credentials' });
    const statuses = await f.eventsOf('ReviewStatusChanged');
    expect((statuses[statuses.length - 1].data as any).to).toBe('awaiting_approval');
  });

  it('what does not fit GitHub\'s 65,536-character bodies is shortened explicitly, never cut silently', async () => {
    f = await publishFixture();
    const long = 'x'.repeat(3000);
    const nodes = [];
    for (let i = 0; i < 30; i++) nodes.push(await f.file(ALICE, { title: `unanchored finding ${i}`, body: long }));
    const huge = await f.file(ALICE, { title: 'huge inline', body: 'y'.repeat(50_000), fix: { replacementLines: ['const v5 = 5;'], unifiedDiff: 'z'.repeat(20_000) }, anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    await f.finalize();
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'published', inline: 1, folded: 30, fallbacks: [] });
    const [post] = f.github.reviewPosts();
    expect(post.body.body.length).toBeLessThanOrEqual(65_536);
    expect(post.body.body).toContain('Shown one line each');
    expect(allMarkers(post.body.body, nodes)).toBe(true);
    const comment = post.body.comments[0].body as string;
    expect(comment.length).toBeLessThanOrEqual(65_536);
    expect(comment).not.toContain('```suggestion');
    expect(comment).toContain('shortened to fit');
    expect(comment.endsWith(`<!-- review-ledger:fp=${huge.fingerprint} -->`)).toBe(true);
  });
});
