import { z } from 'zod';
import { DomainError } from '../domain-error';
import { fixSchema, nodeKindSchema, prioritySchema, reviewerBriefSchema, shaSchema, triageSchema } from '../events/catalogue/review';
import { streamIds } from '../events/envelope';
import { GitRepo } from '../git/repo';
import { normalizeRepoPath } from '../events/repo-path';
import { FactsCache } from '../codegraph/facts-cache';
import { definitionsAt, enclosingSymbolOf } from '../review/enclosing-symbol';
import { anchoredLines, fingerprintOf } from '../review/fingerprint';
import { currentRound, isLive, PrState, NodeCore, prDecisionFold, RoundRecord } from '../review/pr-state';
import type { WorkspaceHandle } from '../workspaces/registry';
import type { CommandDefinition } from './kernel';
import type { PendingEvent } from '../events/kernel-types';
import { loadPrDecisionState } from '../review/pr-state';
import { requireReview } from './review-target';
import { reviewStreamOf, reviewTarget } from '../events/streams';
import { isEvent, ofType } from '../events/catalogue/event-types';
import type { Frozen } from '../events/kernel-types';

/** The anchor path is normalized at the edge; `..`, absolute paths and NUL are refused, naming the field. */
const anchorPath = z
  .string()
  .min(1)
  .max(4000)
  .transform((p, ctx) => {
    try {
      return normalizeRepoPath(p);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(/^path: /, '') });
      return z.NEVER;
    }
  });

const input = z.object({
  ...reviewTarget,
  /** The head the reviewer read; must be the current round's head when given. */
  headSha: shaSchema.optional(),
  node: z.object({
    kind: nodeKindSchema,
    priority: prioritySchema,
    triage: triageSchema,
    anchor: z
      .object({
        path: anchorPath,
        startLine: z.number().int().min(1, 'startLine must be ≥ 1'),
        endLine: z.number().int().min(1, 'endLine must be ≥ 1'),
        symbolId: z.string().min(1).max(2000).optional(),
        side: z.enum(['RIGHT', 'LEFT']).optional(),
      })
      .refine((a) => a.startLine <= a.endLine, { message: 'startLine must be ≤ endLine', path: ['endLine'] })
      .optional(),
    fix: fixSchema.optional(),
    confidence: z.number().min(0, 'confidence must be in [0, 1]').max(1, 'confidence must be in [0, 1]'),
    reasoning: z.string().max(50_000).optional(),
    title: z.string().min(1).max(500),
    body: z.string().max(50_000),
    brief: reviewerBriefSchema,
  }),
});
type Input = z.infer<typeof input>;
type Prepared = Input & { fingerprint: string; fingerprintHead: string | null };

/**
 * Files a review node (SPEC §5) under the caller's principal. The fingerprint is computed here, at the
 * edge: from the symbol id the reviewer gave, else the code graph's innermost definition enclosing the
 * anchor at the round's head (base for a deleted line, `side: LEFT`), which is recorded as
 * `anchor.symbolId`, else the anchored lines' text at the head. So it survives line shifts, rebases,
 * reformatting and, inside a known definition, edits to the anchored lines themselves.
 */
export const addReviewNode: CommandDefinition<Input, PrState<NodeCore>, Prepared> = {
  name: 'addReviewNode',
  description: 'File a review node (a structured finding) on the current round of a review.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: prDecisionFold,
  // Its prepare reads the PR state and this process's code graph only: after a conflict it prepares
  // again for the round that won (a round another server started is filed on, not refused).
  prepareAgainOnConflict: true,
  async prepare(cmd, env) {
    // A decision's load (no read when this process has seen every append, e.g. PostgreSQL's freshness):
    // decide's state is the same one, checked by the append's expected revision; a refused append
    // prepares again on the state that won (prepareAgainOnConflict), and decide refuses a fingerprint
    // computed at a head the round has left (stale_head).
    const state = await loadPrDecisionState(env.workspace, reviewStreamOf(cmd), { forDecision: true });
    const round = currentRound(state);
    const head = round?.headSha ?? null;
    const anchor = cmd.node.anchor;
    if (!anchor || !round) {
      const fingerprint = fingerprintOf({ path: anchor?.path, symbolId: anchor?.symbolId, kind: cmd.node.kind, category: cmd.node.triage.category, title: cmd.node.title });
      return { ...cmd, fingerprint, fingerprintHead: head };
    }
    // A deleted line only exists at the base: its enclosing definition is the base's.
    const definitionsCommit = anchor.side === 'LEFT' ? round.baseSha : round.headSha;
    const locus = await readAnchorLocus(env.workspace, cmd.repoId, anchor, definitionsCommit, round.headSha);
    const fingerprint = fingerprintOf({ path: anchor.path, symbolId: locus.symbolId, anchoredText: locus.anchoredText, kind: cmd.node.kind, category: cmd.node.triage.category, title: cmd.node.title });
    const node = locus.symbolId === anchor.symbolId ? cmd.node : { ...cmd.node, anchor: { ...anchor, symbolId: locus.symbolId } };
    return { ...cmd, node, fingerprint, fingerprintHead: head };
  },
  decide(state, cmd, ctx) {
    requireReview(state, cmd);
    const round = currentRound(state)!;
    if (state.status === 'completed') {
      throw new DomainError('review_completed', `the review of ${cmd.repoId}#${cmd.prNumber} is completed; request a review of the new head to start a round`);
    }
    // An abbreviated head names the round's head when it is a prefix of it (SPEC §10: one commit, one round).
    if (cmd.headSha && !round.headSha.startsWith(cmd.headSha)) {
      throw new DomainError('stale_head', `headSha: ${cmd.headSha} is not the head of the current round (${round.headSha})`, { headSha: cmd.headSha, roundHead: round.headSha });
    }
    // The round moved between reading the code and deciding: the fingerprint was computed on another head.
    if (cmd.fingerprintHead !== round.headSha) throw new DomainError('stale_head', `the review moved to head ${round.headSha} while the node was being filed; file it again`);
    if (!state.roster.includes(cmd.node.brief)) {
      throw new DomainError('brief_not_on_roster', `node.brief: "${cmd.node.brief}" is not on this review's roster (${state.roster.join(', ')}; level ${state.level})`, { brief: cmd.node.brief, roster: state.roster });
    }
    const { brief, ...rest } = cmd.node;
    const events: PendingEvent[] = [];
    if (state.status !== 'in_progress') events.push({ type: 'ReviewStatusChanged', data: { from: state.status, to: 'in_progress', reason: 'a node was filed' } });
    const joins = carriedMatch(state, round, cmd.fingerprint);
    events.push({
      type: 'ReviewNodeFiled',
      data: { nodeId: `n${state.nodeCount + 1}`, round: round.round, headSha: round.headSha, fingerprint: cmd.fingerprint, role: ctx.role, node: { ...rest, reviewer: { principal: ctx.principal, brief } }, ...(joins ? { joins } : {}) },
    });
    return events;
  },
  result(events) {
    const d = events.find(ofType('ReviewNodeFiled'))?.data;
    return d ? { nodeId: d.nodeId, fingerprint: d.fingerprint, round: d.round, ...(d.joins ? { joins: d.joins } : {}) } : null;
  },
};

/**
 * The live node carried or outdated into `round` that a report with this fingerprint re-files (SPEC §5:
 * it joins that node instead of starting over). The earliest such node when there are several.
 */
function carriedMatch(state: Frozen<PrState<NodeCore>>, round: Frozen<RoundRecord>, fingerprint: string): string | undefined {
  const id = round.carry?.byFingerprint[fingerprint];
  if (id === undefined) return undefined;
  const n = state.nodes[id];
  if (n.round === round.round && isLive(n)) return id;
  // The first one was closed since: another carried node with this fingerprint (its duplicate) may be live.
  return round.nodeIds.find((other) => round.carry!.entries[other] && state.nodes[other].fingerprint === fingerprint && isLive(state.nodes[other]) && state.nodes[other].round === round.round);
}

type Anchor = NonNullable<Input['node']['anchor']>;

/**
 * What locates the finding for its fingerprint: the reviewer's symbol id, else the code graph's innermost
 * definition enclosing the anchored range at `definitionsCommit`, else the anchored lines as they read at
 * `head`. Everything is optional: an unregistered repo, unknown commit or file without a grammar only
 * moves the fingerprint down that list, it never refuses the node.
 */
async function readAnchorLocus(ws: WorkspaceHandle, repoId: string, anchor: Anchor, definitionsCommit: string, head: string): Promise<{ symbolId?: string; anchoredText?: string }> {
  if (anchor.symbolId) return { symbolId: anchor.symbolId };
  let repoPath: string | undefined;
  for await (const e of ws.store.readStream(streamIds.repo(repoId))) if (isEvent(e, 'RepoRegistered')) repoPath = e.data.path;
  if (!repoPath) return {};
  let repo: GitRepo | undefined;
  try {
    repo = await GitRepo.open(repoPath);
    const symbolId = await enclosingSymbolAt(ws, repo, definitionsCommit, anchor);
    if (symbolId) return { symbolId };
    const blob = await repo.readFileAt(head, anchor.path);
    const text = blob ? anchoredLines(blob.toString('utf8'), anchor.startLine, anchor.endLine) : null;
    return text === null ? {} : { anchoredText: text };
  } catch {
    return {};
  } finally {
    repo?.close();
  }
}

async function enclosingSymbolAt(ws: WorkspaceHandle, repo: GitRepo, commit: string, anchor: Anchor): Promise<string | undefined> {
  const cache = FactsCache.open(ws.dir);
  try {
    const defs = await definitionsAt(repo, cache, commit, anchor.path);
    return defs ? enclosingSymbolOf(anchor.path, defs, anchor.startLine, anchor.endLine) : undefined;
  } catch {
    // The text fallback still gives a usable fingerprint when a parse or the cache fails.
    return undefined;
  } finally {
    cache.close();
  }
}
