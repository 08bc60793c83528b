#!/usr/bin/env node
'use strict';
// Builds the Review page bundle (src/web/client → dist/web) with esbuild: review.ts is the entry, split
// so that what the first paint does not need (syntax highlighting, highlight.js) is a chunk loaded on
// demand; types imported from the server's projections are erased, and the few runtime helpers shared
// with the server (output hygiene, UUIDv7 through the `uuid` package) are bundled in. Nothing is
// fetched from a CDN: the server serves these files itself, only those named in assets.json.
const fs = require('node:fs');
const path = require('node:path');
let esbuild;
try {
  esbuild = require('esbuild');
} catch {
  // A checkout whose node_modules predates the bundler (esbuild, highlight.js, axe-core in package.json).
  console.error('build-web: the esbuild package is not installed; run `npm ci` (or `npm install`) first');
  process.exit(1);
}

const root = path.resolve(__dirname, '..');
const src = path.join(root, 'src', 'web', 'client');
const out = path.join(root, 'dist', 'web');

function main() {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const result = esbuild.buildSync({
    entryPoints: [path.join(src, 'review.ts')],
    bundle: true,
    splitting: true,
    format: 'esm',
    target: 'es2020',
    platform: 'browser',
    minify: true,
    outdir: out,
    chunkNames: 'chunk-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  fs.copyFileSync(path.join(src, 'review.css'), path.join(out, 'review.css'));
  const files = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
  fs.writeFileSync(path.join(out, 'assets.json'), JSON.stringify({ files: [...files, 'review.css'].sort() }, null, 2) + '\n');
}

main();
