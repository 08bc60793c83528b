import * as fs from 'node:fs/promises';
import type { Command } from 'commander';
import { compareImages, VISUAL_DIFF_OPTIONS } from '../../axes/visual/diff';
import { MalformedPngError } from '../../axes/visual/png';

/** visual-diff A.png B.png [--out D.png]: the visual diff engine on its own. */
export function register(program: Command): void {
  program
    .command('visual-diff <base> <head>')
    .description(`Compare two PNGs with the visual axis engine (pixelmatch threshold ${VISUAL_DIFF_OPTIONS.threshold}, anti-aliasing ignored); exit 0 unchanged, 1 changed, 2 error`)
    .option('--out <file>', 'write the diff image here (only when pixels changed)')
    .option('--json', 'print the result as JSON')
    .action(async (basePath: string, headPath: string, opts: { out?: string; json?: boolean }) => {
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
        result = await compareImages(base, head);
      } catch (err) {
        if (!(err instanceof MalformedPngError)) throw err;
        process.stderr.write(`error [malformed_png]: ${err.message.replace(/^base image/, basePath).replace(/^head image/, headPath)}\n`);
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
    });
}
