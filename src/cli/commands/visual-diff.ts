import type { Command } from 'commander';
import { VISUAL_DIFF_OPTIONS } from '../../axes/visual/options';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./visual-diff.actions') => require('./visual-diff.actions');

/** visual-diff A.png B.png [--out D.png]: the visual diff engine on its own. */
export function register(program: Command): void {
  program
    .command('visual-diff <base> <head>')
    .description(`Compare two PNGs with the visual axis engine (pixelmatch threshold ${VISUAL_DIFF_OPTIONS.threshold}, anti-aliasing ignored); exit 0 unchanged, 1 changed, 2 error`)
    .option('--out <file>', 'write the diff image here (only when pixels changed)')
    .option('--json', 'print the result as JSON')
    .action((basePath: string, headPath: string, opts: { out?: string; json?: boolean }) => actions().visualDiff(basePath, headPath, opts));
}
