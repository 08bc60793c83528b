import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import { compareDecoded, indexDiffRows } from '../src/axes/visual/diff';
import { decodePngPair } from '../src/axes/visual/png';
(async () => {
  const base = fs.readFileSync('/tmp/vis-base.png');
  for (const k of ['scattered', 'shift']) {
    const { base: a, head: b, sameRows } = await decodePngPair(base, fs.readFileSync(`/tmp/vis-${k}.png`));
    const d = compareDecoded(a, b, sameRows);
    const idx = new Uint8Array(a.width * a.height);
    indexDiffRows(d, idx);
    const raw = Buffer.alloc(a.height * (a.width + 1));
    for (let y = 0; y < a.height; y++) raw.set(idx.subarray(y * a.width, (y + 1) * a.width), y * (a.width + 1) + 1);
    for (const [name, o] of [['l1', { level: 1 }], ['l2', { level: 2 }], ['l6', { level: 6 }], ['rle', { level: 6, strategy: zlib.constants.Z_RLE }], ['huff', { strategy: zlib.constants.Z_HUFFMAN_ONLY }]] as const) {
      const t: number[] = [];
      let len = 0;
      for (let i = 0; i < 7; i++) { const s = performance.now(); len = zlib.deflateSync(raw, o).length; t.push(performance.now() - s); }
      t.sort((x, y) => x - y);
      console.log(k, name, len, t[3].toFixed(2), 'ms');
    }
  }
})();
