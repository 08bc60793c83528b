import * as fs from 'node:fs';
import * as path from 'node:path';

/** Where `tools/build-web.js` writes the page bundle: `<project>/dist/web`. */
export function webAssetDir(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return path.join(dir, 'dist', 'web');
}

const CONTENT_TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** The files `tools/build-web.js` wrote (its assets.json): the entry, its lazy chunks and the CSS. */
function builtAssets(): Set<string> {
  try {
    const list = JSON.parse(fs.readFileSync(path.join(webAssetDir(), 'assets.json'), 'utf8')) as { files: string[] };
    return new Set(list.files.filter((f) => /^[A-Za-z0-9_-]+\.(js|css)$/.test(f)));
  } catch {
    return new Set();
  }
}

/** One of the page's own files (a list written by the build: a URL never names a path on disk). */
export function readAsset(file: string): { body: Buffer; contentType: string } | null {
  if (!builtAssets().has(file)) return null;
  const contentType = CONTENT_TYPES[path.extname(file)];
  if (!contentType) return null;
  try {
    return { body: fs.readFileSync(path.join(webAssetDir(), file)), contentType };
  } catch {
    return null;
  }
}

const escapeAttr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The shell: no review data, only the target the bundle subscribes to once the caller has a token. */
export function reviewPageHtml(t: { workspaceId: string; repoId: string; prNumber: number }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Review · ${escapeAttr(t.repoId)}#${t.prNumber}</title>
<link rel="stylesheet" href="/assets/review/review.css">
</head>
<body data-workspace="${escapeAttr(t.workspaceId)}" data-repo="${escapeAttr(t.repoId)}" data-pr="${t.prNumber}">
<div id="app"><noscript>The review page needs JavaScript.</noscript></div>
<script type="module" src="/assets/review/review.js"></script>
</body>
</html>
`;
}
