#!/usr/bin/env node
// npm run test:crash -- --runs 20 : the crash test N times in a row; exits 1 on the first failure.
require('../../tools/ts-register');
const { crashRun } = require('./harness.ts');
const i = process.argv.indexOf('--runs');
const runs = i >= 0 ? Number(process.argv[i + 1]) : 20;
(async () => {
  let passed = 0;
  for (let run = 1; run <= runs; run++) {
    const r = await crashRun();
    const ok = r.problems.length === 0 && r.acknowledged > 0;
    console.log(`run ${String(run).padStart(2)}: killed after ${r.killedAfterMs} ms, acknowledged ${r.acknowledged}, stored ${r.stored} ${ok ? 'OK' : 'FAIL ' + r.problems.join('; ')}`);
    if (!ok) {
      console.log(`${passed} passed, 1 failed`);
      process.exit(1);
    }
    passed++;
  }
  console.log(`${passed} passed, 0 failed`);
})();
