import * as fs from 'node:fs/promises';
import { compareImages, VISUAL_DIFF_OPTIONS } from '../../axes/visual/diff';
import { MalformedPngError } from '../../axes/visual/png';

/** The action of visual-diff.ts, loaded when `visual-diff` runs. */

export async function visualDiff(basePath: string, headPath: string, opts: { out?: string; json?: boolean }): Promise<void> {
  let base: Buffer;
  let head: Buffer;
  try {
    [base, head] = await Promise.all([fs.readFile(basePath), fs.readFile(headPath)]);
  } catch (err) {
    process.stderr.write(`error [file_unreadable]: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const started = process.hrtime.bigint();
  let result: Awaited<ReturnType<typeof compareImages>>;
  try {
    // One thread: in a one-shot process the helper thread would start (and JIT) cold for one pair,
    // which measured ~1.4× the wall time of comparing in this thread.
    result = await compareImages(base, head, { split: 'never' });
  } catch (err) {
    if (!(err instanceof MalformedPngError)) throw err;
    // Exit 2 (could not compare) for both codes, never 1: "changed" must mean a pixel diff was found.
    process.stderr.write(`error [${err.code}]: ${err.message.replace(/^base image/, basePath).replace(/^head image/, headPath)}\n`);
    process.exitCode = 2;
    return;
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (opts.out && result.diffPng) await fs.writeFile(opts.out, result.diffPng);
  const { diffPng, ...summary } = result;
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ ...summary, diffWritten: Boolean(opts.out && diffPng), ms: Number(ms.toFixed(2)) })}\n`);
  } else {
    const size = result.sizeChanged
      ? `size ${result.sizeChanged.base.width}×${result.sizeChanged.base.height} → ${result.sizeChanged.head.width}×${result.sizeChanged.head.height}`
      : `${result.width ?? '?'}×${result.height ?? '?'}`;
    process.stdout.write(`${result.state}: ${result.changedPixels} pixel(s) changed (${(result.changedRatio * 100).toFixed(3)} %), ${size}, ${ms.toFixed(1)} ms\n`);
    if (opts.out) process.stdout.write(diffPng ? `diff image written to ${opts.out}\n` : 'no diff image (no pixel diff)\n');
  }
  process.exitCode = result.state === 'changed' ? 1 : 0;
}
