#!/usr/bin/env node
'use strict';
// Builds the Review page bundle (src/web/client → dist/web): each TypeScript module is transformed by
// @swc/core to an ES module the browser loads as is (relative imports get their ".js"), plus the CSS.
// No bundler and nothing fetched from a CDN: the server serves these files itself.
const fs = require('node:fs');
const path = require('node:path');
const swc = require('@swc/core');

const root = path.resolve(__dirname, '..');
const src = path.join(root, 'src', 'web', 'client');
const out = path.join(root, 'dist', 'web');

function main() {
  fs.mkdirSync(out, { recursive: true });
  for (const file of fs.readdirSync(src)) {
    const abs = path.join(src, file);
    if (file.endsWith('.ts')) {
      const { code } = swc.transformSync(fs.readFileSync(abs, 'utf8'), {
        filename: abs,
        jsc: { target: 'es2020', parser: { syntax: 'typescript' } },
        module: { type: 'es6' },
        sourceMaps: false,
      });
      const withExtensions = code.replace(/(from\s+['"])(\.{1,2}\/[^'"]+?)(['"])/g, (_, a, spec, b) => `${a}${spec.endsWith('.js') ? spec : `${spec}.js`}${b}`);
      fs.writeFileSync(path.join(out, file.replace(/\.ts$/, '.js')), withExtensions);
    } else if (file.endsWith('.css')) {
      fs.copyFileSync(abs, path.join(out, file));
    }
  }
}

main();
