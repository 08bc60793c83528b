import { diffMapOf, parsePatch, placeAnchor } from '../../src/publish/diff-anchors';
import { buildRepo, githubFiles } from './support';

describe('anchor verification as GitHub applies it (from each file patch)', () => {
  const { repo, base, head } = buildRepo();
  const diff = diffMapOf(githubFiles(repo, base, head));
  afterAll(() => repo.cleanup());

  it('RIGHT covers added and context lines of a hunk, numbered in the new file', () => {
    expect(placeAnchor({ path: 'src/app.ts', startLine: 5, endLine: 5 }, diff)).toEqual({ inline: true, path: 'src/app.ts', side: 'RIGHT', line: 5 });
    expect(placeAnchor({ path: 'src/app.ts', startLine: 2, endLine: 2 }, diff)).toMatchObject({ inline: true, line: 2 });
    expect(placeAnchor({ path: 'src/app.ts', startLine: 1, endLine: 1 }, diff)).toEqual({ inline: false, reason: 'line_outside_diff' });
    // Head line 29 is the rewritten base line 30 (one line was deleted above it).
    expect(placeAnchor({ path: 'src/app.ts', startLine: 29, endLine: 29 }, diff)).toMatchObject({ inline: true, side: 'RIGHT', line: 29 });
  });

  it('a deleted line is commentable only on LEFT, with its old-file number', () => {
    expect(placeAnchor({ path: 'src/app.ts', startLine: 20, endLine: 20, side: 'LEFT' }, diff)).toEqual({ inline: true, path: 'src/app.ts', side: 'LEFT', line: 20 });
    // RIGHT 20 is head line 20 (base 21): context of the same hunk, so also commentable — but on the right side.
    expect(placeAnchor({ path: 'src/app.ts', startLine: 23, endLine: 23, side: 'RIGHT' }, diff)).toEqual({ inline: false, reason: 'line_outside_diff' });
    expect(placeAnchor({ path: 'src/app.ts', startLine: 23, endLine: 23, side: 'LEFT' }, diff)).toMatchObject({ inline: true, side: 'LEFT', line: 23 });
  });

  it('a file the PR deletes has only a LEFT side', () => {
    expect(placeAnchor({ path: 'src/old.ts', startLine: 2, endLine: 3 }, diff)).toEqual({ inline: true, path: 'src/old.ts', side: 'LEFT', line: 3, startLine: 2 });
  });

  it('a range needs both ends commentable and in the same hunk; start_line is omitted when it equals line', () => {
    expect(placeAnchor({ path: 'src/app.ts', startLine: 4, endLine: 6 }, diff)).toEqual({ inline: true, path: 'src/app.ts', side: 'RIGHT', line: 6, startLine: 4 });
    expect(placeAnchor({ path: 'src/app.ts', startLine: 5, endLine: 29 }, diff)).toEqual({ inline: false, reason: 'range_spans_hunks' });
    expect(placeAnchor({ path: 'src/app.ts', startLine: 7, endLine: 12 }, diff)).toEqual({ inline: false, reason: 'line_outside_diff' });
    expect(placeAnchor({ path: 'src/app.ts', startLine: 6, endLine: 6 }, diff)).not.toHaveProperty('startLine');
  });

  it('files without a patch and paths outside the PR take no line comments', () => {
    expect(placeAnchor({ path: 'assets/logo.png', startLine: 1, endLine: 1 }, diff)).toEqual({ inline: false, reason: 'file_has_no_patch' });
    expect(placeAnchor({ path: 'src/unchanged.ts', startLine: 1, endLine: 1 }, diff)).toEqual({ inline: false, reason: 'not_in_diff' });
    expect(placeAnchor(undefined, diff)).toEqual({ inline: false, reason: 'no_anchor' });
  });

  it('hunk headers without counts, "no newline" markers and added files parse', () => {
    const added = parsePatch('a.txt', 'added', '@@ -0,0 +1 @@\n+only line\n\\ No newline at end of file');
    expect([...added.right.keys()]).toEqual([1]);
    expect(added.left.size).toBe(0);
    const one = parsePatch('b.txt', 'modified', '@@ -3 +3 @@ ctx\n-old\n+new');
    expect([...one.left.entries()]).toEqual([[3, 0]]);
    expect([...one.right.entries()]).toEqual([[3, 0]]);
  });
});
