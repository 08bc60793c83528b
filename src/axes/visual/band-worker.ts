import { parentPort } from 'node:worker_threads';
import { DIFF_INDEX_PALETTE, indexDiffRows } from './diff';
import { attachWorkspace, kernelAdlerRows, kernelIndexRows, kernelMatchRows, kernelUnfilter } from './kernel';
import { matchRows } from './match';
import { decodePngInto, decodePngSharedAsync, deflateIndexSegment, MalformedPngError } from './png';
import type { BandKernelRequest, BandMatchRequest, BandReply, BandRequest } from './split';

// Entry point of the band helper thread (see split.ts): decodes a head into shared memory, or compares,
// indexes and compresses one band of rows of a pair held in shared memory.
parentPort!.on('message', async ({ id, request }: { id: number; request: BandRequest }) => {
  let reply: BandReply;
  if (request.op === 'decode' && request.into) {
    try {
      const ws = attachWorkspace(request.into.memory, request.into.layout);
      decodePngInto(request.png, { out: ws.head, rows: kernelUnfilter(ws, 1) });
      reply = { ok: true, decodedInto: true };
    } catch (err) {
      reply = { ok: false, malformed: err instanceof MalformedPngError, code: err instanceof MalformedPngError ? err.code : undefined, message: (err as Error).message ?? String(err) };
    }
  } else if (request.op === 'decode') {
    try {
      const image = await decodePngSharedAsync(request.png);
      reply = { ok: true, decoded: { width: image.width, height: image.height, data: image.data.buffer as SharedArrayBuffer } };
    } catch (err) {
      reply = { ok: false, malformed: err instanceof MalformedPngError, code: err instanceof MalformedPngError ? err.code : undefined, message: (err as Error).message ?? String(err) };
    }
  } else if (request.op === 'kernel') {
    reply = kernelBand(request);
  } else {
    reply = matchBand(request);
  }
  parentPort!.postMessage({ id, reply });
});

function matchBand(request: BandMatchRequest): BandReply {
  try {
    const { width, height, fromRow, toRow } = request;
    const base = new Uint8Array(request.base);
    const head = new Uint8Array(request.head);
    const marks = new Uint8Array(request.marks);
    const markedRows = new Uint8Array(request.markedRows);
    const count = matchRows(base, head, width, height, marks, markedRows, fromRow, toRow, new Uint8Array(request.sameRows));
    const indices = new Uint8Array(request.indices);
    indexDiffRows({ width, height, changedPixels: count, base: { width, height, data: base }, marks, markedRows }, indices, fromRow, toRow);
    // The band's IDAT segment, compressed here while the other thread compresses its own; wasted
    // only when no pixel of the whole pair counts (then there is no diff image).
    const segment = deflateIndexSegment(indices, width, fromRow, toRow, toRow === height);
    return { ok: true, count, segment: { deflated: segment.deflated, adler: segment.adler, length: segment.length } };
  } catch (err) {
    return { ok: false, message: (err as Error).message ?? String(err) };
  }
}

function kernelBand(request: BandKernelRequest): BandReply {
  try {
    const { fromRow, toRow, layout } = request;
    const ws = attachWorkspace(request.memory, layout);
    const count = kernelMatchRows(ws, fromRow, toRow);
    kernelIndexRows(ws, DIFF_INDEX_PALETTE, fromRow, toRow, 1);
    const segment = deflateIndexSegment(ws.indices, layout.width, fromRow, toRow, toRow === layout.height, kernelAdlerRows(ws, fromRow, toRow));
    return { ok: true, count, segment: { deflated: segment.deflated, adler: segment.adler, length: segment.length } };
  } catch (err) {
    return { ok: false, message: (err as Error).message ?? String(err) };
  }
}
