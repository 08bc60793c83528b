import type { Command } from 'commander';
import { INDEX_PROGRESS_SERVICE, IndexProgressListener } from '../../commands/index-code';
import { newUuidV7 } from '../../events/ids';
import { LOCAL_OPERATOR } from '../../ledger';
import { withLedger } from '../context';

/** The actions of index-code.ts, loaded when `repo register` or `index` runs. */

/** A one-line progress bar on stderr (only when it is a terminal, so logs stay clean). */
export function progressBar(label: string): IndexProgressListener & { done(): void } {
  const tty = process.stderr.isTTY;
  let last = '';
  const fn = ((p) => {
    const width = 30;
    const ratio = p.total ? p.done / p.total : 1;
    const filled = Math.round(ratio * width);
    const line = `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${p.done}/${p.total} files · parsed ${p.parsed} · cached ${p.cached}`;
    if (line === last) return;
    last = line;
    if (tty) process.stderr.write(`\r${line}`);
  }) as IndexProgressListener & { done(): void };
  fn.done = () => {
    if (tty && last) process.stderr.write('\n');
    else if (last) process.stderr.write(`${last}\n`);
  };
  return fn;
}

export async function registerRepo(opts: { workspace: string; repo: string; path: string; defaultBranch?: string; remoteUrl?: string; forge?: string }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const out = await ledger.run('registerRepo', opts.workspace, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { repoId: opts.repo, path: opts.path, defaultBranch: opts.defaultBranch, remoteUrl: opts.remoteUrl, forge: opts.forge });
    process.stdout.write(`${JSON.stringify(out.response.result, null, 2)}\n`);
  });
}

export async function indexCommit(opts: { workspace: string; repo: string; commit?: string }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const bar = progressBar('indexing');
    ledger.services.set(INDEX_PROGRESS_SERVICE, bar);
    const out = await ledger.run('indexCode', opts.workspace, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { repoId: opts.repo, commit: opts.commit });
    bar.done();
    const r = out.response.result as { commit?: string; fileCount?: number; symbolCount?: number; parsedBlobs?: number; cachedBlobs?: number; languages?: Array<{ language: string; files: number }>; unsupportedFileCount?: number; unsupportedFiles?: string[]; alreadyIndexed?: boolean };
    if (r.alreadyIndexed) {
      process.stdout.write('already indexed at this commit with this engine version: nothing recorded\n');
      return;
    }
    process.stdout.write(`indexed ${r.commit}: ${r.fileCount} files, ${r.symbolCount} symbols (parsed ${r.parsedBlobs} blobs, ${r.cachedBlobs} from cache)\n`);
    process.stdout.write(`languages: ${(r.languages ?? []).map((l) => `${l.language} ${l.files}`).join(', ') || 'none'}\n`);
    if (r.unsupportedFileCount) process.stdout.write(`${r.unsupportedFileCount} file(s) in languages without a grammar (never grouped semantically): ${(r.unsupportedFiles ?? []).slice(0, 10).join(', ')}${r.unsupportedFileCount > 10 ? ', …' : ''}\n`);
  });
}
