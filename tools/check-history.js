#!/usr/bin/env node
/**
 * `npm run check:history -- [--store sqlite|postgres] [--servers N] [--clients N] [--subscribers N]
 *   [--minutes M] [--no-kill] [--faults]
 *   [--restart-database 'pg_ctlcluster 15 main restart -m immediate'] [--inject skip-digest-check] [--seed S]`
 * Runs the history checker (test/history/checker.ts) and prints one JSON line; exit 1 on any violation.
 */
require('./ts-register');
const { checkHistory } = require('../test/history/checker');

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const options = {
  store: opt('store', 'sqlite'),
  servers: Number(opt('servers', opt('store', 'sqlite') === 'sqlite' ? 1 : 2)),
  clients: Number(opt('clients', 6)),
  subscribers: Number(opt('subscribers', 4)),
  durationMs: Number(opt('minutes', 5)) * 60_000,
  kill: !args.includes('--no-kill'),
  faults: args.includes('--faults'),
  restartDatabase: opt('restart-database', undefined),
  inject: opt('inject', undefined),
  seed: Number(opt('seed', Date.now() % 1e9)),
  log: (line) => process.stderr.write(`${line}\n`),
};
checkHistory(options).then(
  (report) => {
    process.stdout.write(`${JSON.stringify({ ...report, seed: options.seed })}\n`);
    process.exit(report.violationCount === 0 ? 0 : 1);
  },
  (err) => {
    process.stderr.write(`${err.stack ?? err}\n`);
    process.exit(2);
  },
);
