#!/usr/bin/env node
// Uses the compiled CLI when `npm run build` has run, the TypeScript sources otherwise.
const path = require('node:path');
const fs = require('node:fs');
const compiled = path.join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
if (fs.existsSync(compiled) && !process.env.REVIEW_LEDGER_FROM_SOURCE) {
  require(compiled).run(process.argv);
} else {
  require('../tools/ts-register');
  require('../src/cli/main.ts').run(process.argv);
}
