import { BOUNDS, clipId } from '../events/catalogue/bounds';
import { z } from 'zod';
import { FactsCache } from '../codegraph/facts-cache';
import { CODEGRAPH_ENGINE_VERSION, indexCommit, IndexProgress } from '../codegraph/indexer';
import { loadRepoState, openRegisteredRepo, repoFold, RepoState } from '../compute/streams';
import { RepoRegistered } from '../events/catalogue/repo';
import { ProgressHub, type JobProgress } from '../job-progress/hub';
import type { CommandDefinition } from './kernel';
import { Slot } from '../slots';
import { JOB_SLOTS } from '../compute/job-slots';

/** Service name under which an edge may register a progress listener (the CLI's progress bar, subscriptions). */
export const INDEX_PROGRESS_SERVICE = new Slot<IndexProgressListener>('codegraph.indexProgress');
export type IndexProgressListener = (p: IndexProgress & { repoId: string; commit: string }) => void;

const input = z.object({
  repoId: RepoRegistered.schema.shape.repoId,
  /** Commit-ish to index (default: the repo's default branch, else HEAD). */
  commit: z.string().min(1).max(255).regex(/^[^-\s][^\s]*$/, 'commit must be a ref or sha (no spaces, not starting with "-")').optional(),
});
type Input = z.infer<typeof input>;
type Indexed = {
  repoId: string;
  commit: string;
  languages: Array<{ language: string; files: number }>;
  fileCount: number;
  symbolCount: number;
  parsedBlobs: number;
  cachedBlobs: number;
  unsupportedFiles: string[];
  unsupportedFileCount: number;
};

/** Indexes a commit of a registered repo (SPEC §8.1) and records `RepoIndexed`; parse results are cached by blob SHA. */
export const indexCode: CommandDefinition<Input, RepoState, Indexed> = {
  name: 'indexCode',
  description: 'Index a commit of a registered repo with web-tree-sitter (definitions, references, imports); cached by blob SHA.',
  input,
  access: { minRole: 'member' },
  stream: (i) => `repo-${i.repoId}`,
  fold: repoFold,
  prepare(cmd, env) {
    // Holds one of the server's job slots (compute/job-slots.ts), shared with computeReview; while it
    // waits for one, watchProgress shows it `queued`.
    let queued: JobProgress | null = null;
    const progress = () => (queued ??= ProgressHub.jobFor(env.services, env.workspace.id, { kind: 'indexCode', repoId: cmd.repoId }));
    const onWait = (ahead: number) => progress().report({ phase: ahead > 0 ? `queued, ${ahead} ahead` : 'queued', done: 0, total: 0, fraction: 0 });
    return JOB_SLOTS.run<Indexed>(env.workspace.id, async () => {
      const state = await loadRepoState(env.workspace, cmd.repoId);
      const repo = await openRegisteredRepo(state);
      const cache = FactsCache.open(env.workspace.dir);
      // watchProgress: reports reach this workspace's subscribers only (a no-op outside the server).
      const job = progress();
      try {
        const commit = await repo.revParse(cmd.commit ?? state.defaultBranch ?? 'HEAD');
        const listener = env.services.get(INDEX_PROGRESS_SERVICE);
        const idx = await indexCommit(repo, commit, {
          cache,
          signal: env.signal,
          onProgress: (p) => {
            listener?.({ ...p, repoId: cmd.repoId, commit });
            job.report({ phase: 'index', done: p.done, total: p.total, fraction: p.total ? p.done / p.total : 0, commit });
          },
        });
        job.done();
        return {
          repoId: cmd.repoId,
          commit,
          languages: Object.entries(idx.languages).sort(([a], [b]) => a.localeCompare(b)).map(([language, files]) => ({ language, files })),
          fileCount: idx.fileCount,
          symbolCount: idx.symbolCount,
          parsedBlobs: idx.parsedBlobs,
          cachedBlobs: idx.cachedBlobs,
          unsupportedFiles: idx.unsupported.slice(0, 500).map((u) => clipId(u.path, BOUNDS.path)),
          unsupportedFileCount: idx.unsupported.length,
        };
      } catch (err) {
        job.failed(err);
        throw err;
      } finally {
        cache.close();
        repo.close();
      }
    }, env.signal, onWait).catch((err: unknown) => {
      queued?.failed(err);
      throw err;
    });
  },
  decide(state, idx) {
    const known = state.indexed[idx.commit];
    if (known && known.engineVersion === CODEGRAPH_ENGINE_VERSION) return [];
    const { repoId: _repoId, ...data } = idx;
    return [{ type: 'RepoIndexed', data: { ...data, engineVersion: CODEGRAPH_ENGINE_VERSION } }];
  },
  result: (events) => (events[0] ? events[0].data : { alreadyIndexed: true }),
};
