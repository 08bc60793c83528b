#!/usr/bin/env node
// Runs bench/<name>.ts (or bench/<name>/index.ts) with the TypeScript require hook; extra args pass through.
require('../tools/ts-register');
const path = require('node:path');
const fs = require('node:fs');
const name = process.argv[2];
if (!name) {
  console.error('usage: node bench/run.js <name> [args...]');
  process.exit(2);
}
const candidates = [path.join(__dirname, `${name}.ts`), path.join(__dirname, name, 'index.ts')];
const file = candidates.find((f) => fs.existsSync(f));
if (!file) {
  console.error(`no benchmark named ${name} (looked for ${candidates.join(', ')})`);
  process.exit(2);
}
process.argv.splice(2, 1);
Promise.resolve(require(file).main?.(process.argv.slice(2))).catch((err) => {
  console.error(err);
  process.exit(1);
});
