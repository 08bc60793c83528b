import * as fs from 'node:fs';
import { compareDecoded, encodeDiffPng } from '../src/axes/visual/diff';
import { decodePngPair } from '../src/axes/visual/png';
const med = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
(async () => {
  const base = fs.readFileSync('/tmp/vis-base.png');
  for (const k of (process.argv[2] ?? 'shift,block,scattered,card').split(',')) {
    const head = fs.readFileSync(`/tmp/vis-${k}.png`);
    const t = { dec: [] as number[], cmp: [] as number[], enc: [] as number[] };
    for (let i = 0; i < 11; i++) {
      let s = cpu();
      const { base: a, head: b, sameRows } = await decodePngPair(base, head);
      t.dec.push(cpu() - s);
      s = cpu();
      const d = compareDecoded(a, b, sameRows);
      t.cmp.push(cpu() - s);
      s = cpu();
      encodeDiffPng(d);
      t.enc.push(cpu() - s);
    }
    console.log(k, 'cpu ms: decode', med(t.dec).toFixed(1), 'compare', med(t.cmp).toFixed(1), 'encode', med(t.enc).toFixed(1));
  }
})();
