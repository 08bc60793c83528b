import { ALICE, BOB, BOT, CAROL, OWNER, publishFixture, TOKEN } from './support';

type Fixture = Awaited<ReturnType<typeof publishFixture>>;

describe('publishing a review to GitHub (fake GitHub over loopback)', () => {
  let f: Fixture;
  afterEach(async () => f?.close());

  it('places each finding exactly: RIGHT inline, deleted line LEFT, cross-hunk range and out-of-diff lines in the body', async () => {
    f = await publishFixture();
    const right = await f.file(ALICE, { title: 'five is a string now', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    const left = await f.file(ALICE, { title: 'v20 removed but still exported', anchor: { path: 'src/app.ts', startLine: 20, endLine: 20, side: 'LEFT' } });
    const cross = await f.file(BOB, { title: 'both rewrites disagree', brief: 'qa', anchor: { path: 'src/app.ts', startLine: 5, endLine: 29 } });
    const outside = await f.file(BOB, { title: 'v12 unused', brief: 'qa', anchor: { path: 'src/app.ts', startLine: 12, endLine: 12 } });
    const loose = await f.file(BOB, { title: 'no tests for the rename', brief: 'qa', kind: 'recommendation' });
    const binary = await f.file(ALICE, { title: 'logo lost transparency', anchor: { path: 'assets/logo.png', startLine: 1, endLine: 1 } });
    await f.finalize();

    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'published', event: 'APPROVE', inline: 2, folded: 4 });

    const posts = f.github.reviewPosts();
    expect(posts).toHaveLength(1);
    const body = posts[0].body;
    expect(body.commit_id).toBe(f.head);
    expect(body.event).toBe('APPROVE');
    expect(body.comments).toHaveLength(2);
    expect(body.comments[0]).toMatchObject({ path: 'src/app.ts', line: 5, side: 'RIGHT' });
    expect(body.comments[0]).not.toHaveProperty('start_line');
    expect(body.comments[0].body).toContain(`<!-- review-ledger:fp=${right.fingerprint} -->`);
    expect(body.comments[1]).toMatchObject({ path: 'src/app.ts', line: 20, side: 'LEFT' });
    expect(body.comments[1].body).toContain(left.fingerprint);
    expect(body.body).toContain('### Findings not tied to a line');
    for (const n of [cross, outside, loose, binary]) expect(body.body).toContain(`<!-- review-ledger:fp=${n.fingerprint} -->`);
    expect(body.body).toMatch(/<!-- review-ledger:publish=rl1-[0-9a-f]{40} -->/);
    expect(body.body).toContain('range spans two hunks');
    expect(body.body.match(/— review-ledger AI review/g)).toHaveLength(4);

    const [published] = await f.eventsOf('ReviewPublished');
    expect(published.metadata.principal).toBe(CAROL.principal);
    expect(published.data).toMatchObject({ publishedBy: CAROL.principal, event: 'APPROVE', fallbackUsed: false, headSha: f.head, selection: 'all_open' });
    const d = published.data as any;
    expect(d.folded.map((x: any) => [x.nodeId, x.reason])).toEqual([
      [cross.nodeId, 'range_spans_hunks'],
      [outside.nodeId, 'line_outside_diff'],
      [loose.nodeId, 'no_anchor'],
      [binary.nodeId, 'file_has_no_patch'],
    ]);
    const status = await f.eventsOf('ReviewStatusChanged');
    expect(status[status.length - 1].data).toMatchObject({ from: 'awaiting_approval', to: 'completed' });
    // The token went only to GitHub, never into the log.
    expect(JSON.stringify(await f.events('acme'))).not.toContain(TOKEN);
    expect(f.github.pulls.get(7)!.reviews[0].user.login).toBe(BOT);
    void OWNER;
  });
});
