import * as fs from 'node:fs';
import { compareImages } from '../src/axes/visual/diff';
import { closeBandHelper } from '../src/axes/visual/split';
(async () => {
  const base = fs.readFileSync('/tmp/vis-base.png');
  const k = process.argv[2] ?? 'scattered';
  const head = fs.readFileSync(`/tmp/vis-${k}.png`);
  const t: number[] = [];
  for (let i = 0; i < 30; i++) { const s = performance.now(); await compareImages(base, head); t.push(performance.now() - s); }
  t.sort((a, b) => a - b);
  console.log(k, 'median wall', t[15].toFixed(1));
  await closeBandHelper();
})();
