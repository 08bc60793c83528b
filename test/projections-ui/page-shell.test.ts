import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readAsset, reviewPageHtml, webAssetDir } from '../../src/web/assets';

describe('review page shell and assets', () => {
  beforeAll(() => {
    execFileSync(process.execPath, [path.resolve(__dirname, '..', '..', 'tools', 'build-web.js')]);
  });

  it('carries only the target, escaped, and loads its bundle from this server', () => {
    const html = reviewPageHtml({ workspaceId: 'default', repoId: 'a"b<c>&d', prNumber: 7 });
    expect(html).toContain('data-repo="a&quot;b&lt;c&gt;&amp;d"');
    expect(html).not.toContain('a"b<c>');
    expect(html).toContain('<script type="module" src="/assets/review/review.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('serves the bundle, its lazy chunks and the CSS as the build listed them, and nothing outside that list', () => {
    const review = readAsset('review.js');
    expect(review?.contentType).toBe('text/javascript; charset=utf-8');
    const text = review!.body.toString('utf8');
    expect(text).not.toMatch(/require\(/);
    const listed = (JSON.parse(fs.readFileSync(path.join(webAssetDir(), 'assets.json'), 'utf8')) as { files: string[] }).files;
    // highlight.js is a chunk of its own, imported on demand: the entry only names it.
    const chunks = listed.filter((f) => f.startsWith('chunk-'));
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.some((c) => readAsset(c)!.body.toString('utf8').includes('highlight'))).toBe(true);
    expect(text).toMatch(/import\(["']\.\/chunk-[A-Z0-9]+\.js["']\)/);
    expect(text.length).toBeLessThan(120_000);
    for (const f of listed) expect(readAsset(f)).not.toBeNull();
    expect(readAsset('review.css')?.contentType).toBe('text/css; charset=utf-8');
    for (const f of ['../package.json', 'review.ts', 'assets.json', '.', '', 'live.js']) expect(readAsset(f)).toBeNull();
  });
});
