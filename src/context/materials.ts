import { CodeGraph } from '../codegraph/graph';
import { FactsCache } from '../codegraph/facts-cache';
import { indexCommit } from '../codegraph/indexer';
import { classifyRole } from '../codegraph/file-roles';
import { loadRepoState, openRegisteredRepo } from '../compute/streams';
import type { GitRepo } from '../git/repo';
import type { WorkspaceHandle } from '../workspaces/registry';
import { splitPatch, TextHunk } from './patches';
import { Slot } from '../slots';
import { JOB_SLOTS } from '../compute/job-slots';

/** Documentation files larger than this are not scanned for symbol mentions (generated API dumps). */
const MAX_DOC_BYTES = 256 * 1024;
const MAX_DOC_FILES = 2000;
const DOC_EXTENSION = /\.(md|mdx|rst|adoc|txt)$/i;
const VENDORED = /(^|\/)(node_modules|vendor|third_party|bower_components|\.yarn|dist|build)\//;
/** Heads kept warm per workspace: the current head and the one before a rebase are the ones asked about. */
const HEADS_KEPT = 3;

/**
 * Everything a context pack reads from the repository at one (base, head), loaded once and kept warm:
 * the head's code graph (from the blob-SHA facts cache the computation filled), the diff with context,
 * the documentation files, and head file texts as they are needed.
 */
export interface HeadMaterials {
  repoId: string;
  headSha: string;
  baseSha: string;
  graph: CodeGraph;
  /** Head path (and base path of renames/deletions) → hunks with 3 lines of context. */
  hunks: Map<string, TextHunk[]>;
  docs: Array<{ path: string; text: string }>;
  /** Head path → lines (filled on demand by `ensureTexts`). */
  texts: Map<string, string[]>;
  /** Reference site → names that matched definitions only by name (kept unknown, reported, never clues). */
  nameMatchesByFrom: Map<string, Array<{ name: string; candidates: number }>>;
}

const MATERIALS = new Slot<MaterialsCache>('context.materials');

type MaterialsCache = Map<string, Promise<HeadMaterials>>;

function cacheOf(ws: WorkspaceHandle): MaterialsCache {
  const c = ws.cache.getOrSet(MATERIALS, (): MaterialsCache => new Map());
  return c;
}

/** The materials of (repo, base, head), loaded at most once per workspace while warm. */
export function headMaterials(ws: WorkspaceHandle, repoId: string, baseSha: string, headSha: string): Promise<HeadMaterials> {
  const cache = cacheOf(ws);
  const key = `${repoId}\0${baseSha}\0${headSha}`;
  const hit = cache.get(key);
  if (hit) {
    // Refresh recency (Map keeps insertion order).
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const loading = loadMaterials(ws, repoId, baseSha, headSha);
  cache.set(key, loading);
  loading.catch(() => cache.delete(key));
  while (cache.size > HEADS_KEPT) cache.delete(cache.keys().next().value!);
  return loading;
}

async function withRepo<T>(ws: WorkspaceHandle, repoId: string, fn: (repo: GitRepo) => Promise<T>): Promise<T> {
  const repo = await openRegisteredRepo(await loadRepoState(ws, repoId));
  try {
    return await fn(repo);
  } finally {
    repo.close();
  }
}

async function loadMaterials(ws: WorkspaceHandle, repoId: string, baseSha: string, headSha: string): Promise<HeadMaterials> {
  return withRepo(ws, repoId, async (repo) => {
    const cache = FactsCache.open(ws.dir);
    let graph: CodeGraph;
    try {
      graph = await JOB_SLOTS.run(ws.id, async () => new CodeGraph(await indexCommit(repo, headSha, { cache })));
    } finally {
      cache.close();
    }
    const hunks = splitPatch(await repo.diffPatch(baseSha, headSha, [], 3));
    const docs: HeadMaterials['docs'] = [];
    const docEntries = (await repo.lsTree(headSha))
      .filter((e) => e.type === 'blob' && DOC_EXTENSION.test(e.path) && !VENDORED.test(e.path) && classifyRole(e.path) === 'docs')
      .slice(0, MAX_DOC_FILES);
    const texts = await Promise.all(docEntries.map((e) => repo.readBlob(e.sha)));
    docEntries.forEach((e, i) => {
      const buf = texts[i];
      if (buf && buf.length <= MAX_DOC_BYTES) docs.push({ path: e.path, text: buf.toString('utf8') });
    });
    const nameMatchesByFrom = new Map<string, Array<{ name: string; candidates: number }>>();
    for (const m of graph.nameMatches) {
      const list = nameMatchesByFrom.get(m.from) ?? [];
      if (!list.some((x) => x.name === m.name)) list.push({ name: m.name, candidates: m.candidates.length });
      nameMatchesByFrom.set(m.from, list);
    }
    return { repoId, headSha, baseSha, graph, hunks, docs, texts: new Map(), nameMatchesByFrom };
  });
}

/** Loads head texts of `paths` not loaded yet (one repository open for the lot; none when all are warm). */
export async function ensureTexts(ws: WorkspaceHandle, m: HeadMaterials, paths: Iterable<string>): Promise<void> {
  const missing = [...new Set(paths)].filter((p) => !m.texts.has(p));
  if (missing.length === 0) return;
  await withRepo(ws, m.repoId, async (repo) => {
    const blobs = await Promise.all(
      missing.map((p) => {
        const indexed = m.graph.index.files.get(p);
        return indexed ? repo.readBlob(indexed.blob) : repo.readFileAt(m.headSha, p).catch(() => null);
      }),
    );
    missing.forEach((p, i) => m.texts.set(p, blobs[i] ? blobs[i]!.toString('utf8').split('\n') : []));
  });
}
