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

/** The content of the first fenced block with this info string, and its fence. */
function fencedBlock(markdown: string, info: string): { fence: string; content: string } | null {
  const m = new RegExp('^(`{3,})' + info + '\\n([\\s\\S]*?)\\n\\1$', 'm').exec(markdown);
  return m ? { fence: m[1], content: m[2] } : null;
}

describe('rendering what is posted', () => {
  let f: Fixture;
  afterEach(async () => f?.close());

  it('a suggestion block only for exact replacement lines on a RIGHT range, fenced longer than any backtick run', async () => {
    f = await publishFixture();
    const replacement = ['const v4 = 4;', "const v5 = `five` + '```' + '````';", 'const v6 = 6;'];
    await f.file(ALICE, { title: 'use a template', anchor: { path: 'src/app.ts', startLine: 4, endLine: 6 }, fix: { replacementLines: replacement, prompt: 'Rewrite v5 as a template literal.' } });
    await f.file(ALICE, { title: 'restore v20', anchor: { path: 'src/app.ts', startLine: 20, endLine: 20, side: 'LEFT' }, fix: { replacementLines: ['const v20 = 20;'] } });
    await f.file(ALICE, { title: 'only a diff', anchor: { path: 'src/app.ts', startLine: 29, endLine: 29 }, fix: { unifiedDiff: "-const v30 = 'thirty';\n+const v30 = 30;" } });
    await f.finalize();
    await f.publish(CAROL);
    const [post] = f.github.reviewPosts();
    const [withSuggestion, leftSide, diffOnly] = post.body.comments;
    expect(withSuggestion).toMatchObject({ start_line: 4, line: 6, side: 'RIGHT', start_side: 'RIGHT' });
    const block = fencedBlock(withSuggestion.body, 'suggestion');
    expect(block).not.toBeNull();
    expect(block!.fence).toBe('`````');
    expect(block!.content.split('\n')).toEqual(replacement);
    expect(withSuggestion.body).toContain('<summary>Fix prompt</summary>');
    expect(withSuggestion.body).toMatch(/correctness · medium · effort small/);
    expect(withSuggestion.body).toContain('Confidence: 0.80');
    // LEFT side: GitHub cannot apply a suggestion to deleted lines; the lines are still shown.
    expect(leftSide.side).toBe('LEFT');
    expect(leftSide.body).not.toContain('```suggestion');
    expect(leftSide.body).toContain('const v20 = 20;');
    // Never inferred from a unified diff.
    expect(diffOnly.body).not.toContain('suggestion');
    expect(fencedBlock(diffOnly.body, 'diff')!.content).toBe("-const v30 = 'thirty';\n+const v30 = 30;");
    expect(diffOnly.body).toContain('<summary>Proposed fix</summary>');
  });

  it('duplicates are published once, crediting the other reviewer', async () => {
    f = await publishFixture();
    const first = await f.file(ALICE, { title: 'Five is a string now', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    const second = await f.file(BOB, { title: 'five is a STRING now!', brief: 'qa', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    expect(second.fingerprint).toBe(first.fingerprint);
    await f.finalize();
    await f.publish(CAROL);
    const [post] = f.github.reviewPosts();
    expect(post.body.comments).toHaveLength(1);
    expect(post.body.comments[0].body).toContain('Also found by agent:bob (qa).');
    const [published] = await f.eventsOf('ReviewPublished');
    expect((published.data as any).inline).toEqual([expect.objectContaining({ nodeId: first.nodeId, duplicates: [second.nodeId] })]);
    expect((published.data as any).folded).toEqual([]);
  });

  it('a clean Ship is one line, and approves from the button', async () => {
    f = await publishFixture();
    await f.finalize();
    const out = await f.publish(CAROL);
    expect(out.response.result).toMatchObject({ status: 'published', event: 'APPROVE', verdict: 'Ship', inline: 0, folded: 0 });
    const [post] = f.github.reviewPosts();
    expect(post.body.body.split('\n')).toHaveLength(1);
    expect(post.body.body).toMatch(/^\*\*Ship\*\* — no open findings\. — review-ledger AI review <!-- review-ledger:publish=rl1-[0-9a-f]{40} -->$/);
    expect(post.body).not.toHaveProperty('comments');
  });
});
