import { parseHunks } from '../codegraph/diff-hunks';
import type { Definition } from '../codegraph/facts';
import { FactsCache } from '../codegraph/facts-cache';
import { GitRepo } from '../git/repo';
import { streamIds } from '../events/envelope';
import type { WorkspaceHandle } from '../workspaces/registry';
import { mapRange } from './carry-over';
import { definitionsAt, enclosingSymbolOf } from './enclosing-symbol';
import { linesInRange } from './fingerprint';
import { currentRound, NodeRecord, PrState } from './pr-state';
import { isEvent } from '../events/catalogue/event-types';

/** The data of `FindingsCarriedOver` (src/events/catalogue/review.ts). */
export interface CarryOverData {
  round: number;
  fromRound: number;
  fromHead: string;
  toHead: string;
  carried: string[];
  moved: Array<{ nodeId: string; startLine: number; endLine: number }>;
  outdated: Array<{ nodeId: string; reason: string; startLine?: number; endLine?: number }>;
  gone: Array<{ nodeId: string; reason: string }>;
}

const NOT_CHECKED = 'not checked: the repository is not registered in this workspace';

/**
 * The edge half of SPEC §5 carry-over: for every node of the current round of `pr`, whether its anchored
 * code is unchanged at `toHead` — checked against `git diff -U0` between the two heads (the lines did not
 * change, they may have moved), the anchored text itself, and the code graph (the enclosing definition is
 * still the one the fingerprint names; a deleted definition makes the finding gone). Null when there is
 * no previous round to carry from. Never throws for git trouble: what cannot be checked is outdated.
 */
export async function gatherCarryOver(ws: WorkspaceHandle, pr: PrState, toHead: string, toBase: string): Promise<CarryOverData | null> {
  const prev = currentRound(pr);
  if (!prev || prev.headSha === toHead) return null;
  const data: CarryOverData = { round: prev.round + 1, fromRound: prev.round, fromHead: prev.headSha, toHead, carried: [], moved: [], outdated: [], gone: [] };
  const nodes = prev.nodeIds.map((id) => pr.nodes[id]).filter((n) => n && n.round === prev.round);
  if (nodes.length === 0) return data;
  const repoPath = await registeredPath(ws, pr.repoId!);
  if (!repoPath) {
    for (const n of nodes) data.outdated.push({ nodeId: n.nodeId, reason: NOT_CHECKED });
    return data;
  }
  let repo: GitRepo | undefined;
  let cache: FactsCache | undefined;
  try {
    repo = await GitRepo.open(repoPath);
    cache = FactsCache.open(ws.dir);
    await classify(repo, cache, nodes, prev.headSha, prev.baseSha, toHead, toBase, data);
  } catch (err) {
    // Whatever was not classified before the failure is listed for re-review, never dropped.
    const seen = new Set([...data.carried, ...data.outdated.map((o) => o.nodeId), ...data.gone.map((g) => g.nodeId)]);
    const reason = `not checked: ${(err as Error).message}`.slice(0, 300);
    for (const n of nodes) if (!seen.has(n.nodeId)) data.outdated.push({ nodeId: n.nodeId, reason });
  } finally {
    cache?.close();
    repo?.close();
  }
  return data;
}

async function registeredPath(ws: WorkspaceHandle, repoId: string): Promise<string | undefined> {
  let repoPath: string | undefined;
  for await (const e of ws.store.readStream(streamIds.repo(repoId))) if (isEvent(e, 'RepoRegistered')) repoPath = e.data.path;
  return repoPath;
}

async function classify(repo: GitRepo, cache: FactsCache, nodes: NodeRecord[], fromHead: string, fromBase: string, toHead: string, toBase: string, out: CarryOverData): Promise<void> {
  const changed = new Map((await repo.diffNameStatus(fromHead, toHead)).map((c) => [c.oldPath ?? c.path, c]));
  const paths = [...new Set(nodes.map((n) => n.node.anchor?.path).filter((p): p is string => !!p && changed.get(p)?.status === 'modified'))];
  const hunks = paths.length ? parseHunks(await repo.diffPatch(fromHead, toHead, paths, 0)) : new Map();
  const defsCache = new Map<string, Promise<Definition[] | undefined>>();
  const defs = (commit: string, p: string) => {
    const k = `${commit}:${p}`;
    let d = defsCache.get(k);
    if (!d) defsCache.set(k, (d = definitionsAt(repo, cache, commit, p).catch(() => undefined)));
    return d;
  };
  // A file's lines, split once: many findings anchored in one large file each read a few of its lines
  // (split per finding, 1,000 findings in a 4 MB file took 9.6 s of the server's thread).
  const linesCache = new Map<string, Promise<string[] | null>>();
  const lines = (commit: string, p: string) => {
    const k = `${commit}:${p}`;
    let t = linesCache.get(k);
    if (!t) linesCache.set(k, (t = repo.readFileAt(commit, p).then((b) => (b ? b.toString('utf8').split('\n') : null))));
    return t;
  };

  for (const n of nodes) {
    const a = n.node.anchor;
    if (!a) {
      out.outdated.push({ nodeId: n.nodeId, reason: 'no anchor: cannot tell whether it still applies' });
      continue;
    }
    const change = changed.get(a.path);
    if (a.side === 'LEFT') {
      // Deleted lines live at the base: they still read the same only if the base and the file did not move.
      if (fromBase === toBase && !change) out.carried.push(n.nodeId);
      else out.outdated.push({ nodeId: n.nodeId, reason: 'anchored to deleted lines and the base or the file changed' });
      continue;
    }
    if (!change) {
      out.carried.push(n.nodeId);
      continue;
    }
    if (change.status === 'deleted') {
      out.gone.push({ nodeId: n.nodeId, reason: `${a.path} was deleted` });
      continue;
    }
    if (change.status !== 'modified') {
      out.outdated.push({ nodeId: n.nodeId, reason: `${a.path} was ${change.status}${change.status === 'renamed' ? ` to ${change.path}` : ''}` });
      continue;
    }
    const oldDefs = await defs(fromHead, a.path);
    // The symbol the fingerprint names, when it is the code graph's (a reviewer-given id may be anything).
    const graphSymbol = a.symbolId && oldDefs && enclosingSymbolOf(a.path, oldDefs, a.startLine, a.endLine) === a.symbolId ? a.symbolId : undefined;
    const newDefs = graphSymbol ? await defs(toHead, a.path) : undefined;
    const symbolGone = graphSymbol !== undefined && newDefs !== undefined && !newDefs.some((d) => `${a.path}#${d.qname}` === graphSymbol);
    const mapped = mapRange(hunks.get(a.path)?.hunks ?? [], a.startLine, a.endLine);
    if (symbolGone) {
      out.gone.push({ nodeId: n.nodeId, reason: `${graphSymbol} was deleted` });
      continue;
    }
    if (mapped.kind === 'deleted') {
      if (graphSymbol) out.outdated.push({ nodeId: n.nodeId, reason: `the anchored lines were deleted; ${graphSymbol} remains` });
      else out.gone.push({ nodeId: n.nodeId, reason: `the anchored lines ${a.startLine}-${a.endLine} were deleted` });
      continue;
    }
    if (mapped.kind === 'touched') {
      out.outdated.push({ nodeId: n.nodeId, reason: `the anchored lines ${a.startLine}-${a.endLine} changed`, startLine: mapped.startLine, endLine: mapped.endLine });
      continue;
    }
    // Untouched by the diff: confirm the text reads the same and the fingerprint's symbol still encloses it.
    const [before, after] = await Promise.all([lines(fromHead, a.path), lines(toHead, a.path)]);
    const same = before !== null && after !== null && linesInRange(before, a.startLine, a.endLine) === linesInRange(after, mapped.startLine, mapped.endLine);
    if (!same) {
      out.outdated.push({ nodeId: n.nodeId, reason: `the anchored text at lines ${a.startLine}-${a.endLine} reads differently` });
      continue;
    }
    if (graphSymbol) {
      const now = newDefs ? enclosingSymbolOf(a.path, newDefs, mapped.startLine, mapped.endLine) : undefined;
      if (now !== graphSymbol) {
        out.outdated.push({ nodeId: n.nodeId, reason: `the enclosing definition is now ${now ?? 'none'} (was ${graphSymbol})` });
        continue;
      }
    }
    out.carried.push(n.nodeId);
    if (mapped.startLine !== a.startLine) out.moved.push({ nodeId: n.nodeId, startLine: mapped.startLine, endLine: mapped.endLine });
  }
}
