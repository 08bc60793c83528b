import { newUuidV7 } from '../../src/events/ids';
import { GitHubError, OctokitGitHub } from '../../src/publish/github-client';
import { Publisher } from '../../src/publish/publisher';
import { publishKeyOf } from '../../src/publish/render';
import { loadPublishState, planOf } from '../../src/publish/run';
import { activeRules } from '../../src/rules/rules';
import { ALICE, BOB, CAROL, OWNER, publishFixture, TOKEN } from './support';

type Fixture = Awaited<ReturnType<typeof publishFixture>>;

async function reviewWithFindings(f: Fixture) {
  await f.file(ALICE, { title: 'five is a string now', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
  await f.file(BOB, { title: 'v12 unused', brief: 'qa', anchor: { path: 'src/app.ts', startLine: 12, endLine: 12 } });
  await f.finalize();
}

describe('publishing is idempotent: the same request never posts twice', () => {
  let f: Fixture;
  afterEach(async () => f?.close());

  it('the same idempotency key replays the original answer and does not reach GitHub again', async () => {
    f = await publishFixture();
    await reviewWithFindings(f);
    const key = newUuidV7();
    const first = await f.publish(CAROL, {}, key);
    const requestsAfterFirst = f.github.log.length;
    const again = await f.publish(CAROL, {}, key);
    expect(again.replayed).toBe(true);
    expect(again.json).toBe(first.json);
    expect(f.github.log.length).toBe(requestsAfterFirst);
    expect(f.github.pulls.get(7)!.reviews).toHaveLength(1);
  });

  it('publishing twice posts one review; the second press is told where the first went', async () => {
    f = await publishFixture();
    await reviewWithFindings(f);
    const first = await f.publish(CAROL);
    const id = (first.response.result as any).forgeReviewId;
    await expect(f.publish(OWNER)).rejects.toMatchObject({ code: 'already_published', details: expect.objectContaining({ forgeReviewId: id }) });
    expect(f.github.reviewPosts()).toHaveLength(1);
    expect(f.github.pulls.get(7)!.reviews).toHaveLength(1);
    expect(await f.eventsOf('ReviewPublished')).toHaveLength(1);
  });

  it('two concurrent presses post one review', async () => {
    f = await publishFixture();
    await reviewWithFindings(f);
    const results = await Promise.allSettled([f.publish(CAROL), f.publish(OWNER), f.publish(CAROL)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason.code).toBe('already_published');
    expect(f.github.reviewPosts()).toHaveLength(1);
    expect(f.github.pulls.get(7)!.reviews).toHaveLength(1);
    expect(await f.eventsOf('ReviewPublished')).toHaveLength(1);
  });

  it('a post the ledger never recorded (crash after posting) is found by its marker and recorded, not posted again', async () => {
    f = await publishFixture();
    await reviewWithFindings(f);
    // The first attempt reaches GitHub, then the process dies before anything is appended.
    const state = await loadPublishState(f.ws, f.target);
    const plan = planOf(state, activeRules(null), { kind: 'github', owner: 'acme', name: 'web-app', url: 'https://github.com/acme/web-app' }, 7, 'all_open', true);
    const lost = await new Publisher(new OctokitGitHub({ baseUrl: f.github.baseUrl, auth: { kind: 'token', token: TOKEN } })).publish(plan);
    expect(lost.kind).toBe('published');
    expect(await f.eventsOf('ReviewPublished')).toHaveLength(0);

    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'published', alreadyOnGitHub: true, forgeReviewId: String((lost as any).review.id) });
    expect(f.github.reviewPosts()).toHaveLength(1);
    const [recorded] = await f.eventsOf('ReviewPublished');
    expect(recorded.data).toMatchObject({ foundExisting: true, inline: [expect.objectContaining({ line: 5 })], folded: [expect.objectContaining({ reason: 'line_outside_diff' })] });
  });

  it('the publish key changes with the head, the selected findings and the verdict, not with their order', async () => {
    const base = { owner: 'acme', repo: 'web-app', prNumber: 7, headSha: 'a'.repeat(40), fingerprints: ['1'.repeat(64), '2'.repeat(64)], verdict: 'Hold' as const };
    const k = publishKeyOf(base);
    expect(publishKeyOf({ ...base, fingerprints: [...base.fingerprints].reverse() })).toBe(k);
    expect(publishKeyOf({ ...base, headSha: 'b'.repeat(40) })).not.toBe(k);
    expect(publishKeyOf({ ...base, fingerprints: ['1'.repeat(64)] })).not.toBe(k);
    expect(publishKeyOf({ ...base, verdict: 'Block' })).not.toBe(k);
    expect(publishKeyOf({ ...base, prNumber: 8 })).not.toBe(k);
    void GitHubError;
  });
});
