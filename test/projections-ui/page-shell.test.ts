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

  it('serves the built modules (relative imports resolvable by a browser) and nothing outside its list', () => {
    const review = readAsset('review.js');
    expect(review?.contentType).toBe('text/javascript; charset=utf-8');
    const text = review!.body.toString('utf8');
    expect(text).toContain("from './live.js'");
    expect(text).toContain("from './dom.js'");
    expect(text).not.toMatch(/require\(/);
    for (const f of ['live.js', 'dom.js', 'review.css']) expect(readAsset(f)).not.toBeNull();
    expect(fs.existsSync(path.join(webAssetDir(), 'review.js'))).toBe(true);
    for (const f of ['../package.json', 'review.ts', '.', '']) expect(readAsset(f)).toBeNull();
  });
});
