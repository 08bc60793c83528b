import { createHash } from 'node:crypto';
import { canonicalJson } from '../../events/canonical-json';
import { DomainError } from '../../domain-error';
import { parseReviewStream } from '../../events/streams';
import type { RecordedEvent } from '../../events/envelope';
import { evolvePr, initialPrState, NodeCore, PrState as FullPrState } from '../../review/pr-state';

// Replay only scores verdicts: the lean fold keeps what the verdict reads of each node.
type PrState = FullPrState<NodeCore>;
import { verdictOfPr } from '../../review/pr-verdict';
import { activeRules, Rules } from '../../rules/rules';
import type { WorkspaceHandle } from '../../workspaces/registry';
import { isEvent } from '../../events/catalogue/event-types';
import { EventLoopTurns } from '../../events/event-loop-turns';

export interface ReplayRow {
  repoId: string;
  prNumber: number;
  old: { verdict: string; confidence: number; rulesVersion: string };
  new: { verdict: string; confidence: number; rulesVersion: string };
  changed: boolean;
  /** The deciding reason under the new rules. */
  reason: string;
}

export interface ReplayFilter {
  repoId?: string;
  prNumber?: number;
  /** Global position to replay up to (default: the head). */
  asOf?: number;
}

/**
 * SPEC §7.4 replay: re-folds every review (or those matching the filter) and scores it under the rules
 * in force and under `rules`, reporting old → new and why. Reads only; recording the new rules is a
 * separate, explicit command (`activateRules`).
 */
export async function replayReviews(ws: WorkspaceHandle, rules: Rules, filter: ReplayFilter = {}): Promise<ReplayRow[]> {
  const prs = new Map<string, PrState>();
  let activeDocument: Record<string, unknown> | null = null;
  for await (const e of ws.store.readAll({ until: filter.asOf })) foldForReplay(prs, e, filter, (doc) => (activeDocument = doc));
  return compareUnder(prs, activeRules(activeDocument), rules);
}

export function foldForReplay(prs: Map<string, PrState>, e: RecordedEvent, filter: ReplayFilter, onRules: (doc: Record<string, unknown>) => void): void {
  if (e.streamId === 'workspace') {
    if (isEvent(e, 'RulesVersionActivated')) onRules(e.data.document);
    return;
  }
  if (!e.streamId.startsWith('pr-')) return;
  let s = prs.get(e.streamId);
  if (!s) {
    const target = parseReviewStream(e.streamId);
    if (!target || (filter.repoId !== undefined && target.repoId !== filter.repoId) || (filter.prNumber !== undefined && target.prNumber !== filter.prNumber)) return;
    prs.set(e.streamId, (s = initialPrState<NodeCore>()));
  }
  evolvePr(s, e, true);
}

/**
 * Every review scored under both rules. Two verdicts per review take ~1 µs per node: 150 ms of 150k events'
 * reviews, held in one piece, was the longest stall a replay still caused after the store's reads took turns.
 */
export async function compareUnder(prs: Map<string, PrState>, current: Rules, next: Rules): Promise<ReplayRow[]> {
  const rows: ReplayRow[] = [];
  const turns = new EventLoopTurns();
  for (const [streamId, s] of prs) {
    await turns.between();
    if (!s.exists) continue;
    const target = parseReviewStream(streamId)!;
    const before = verdictOfPr(s, current);
    const after = verdictOfPr(s, next);
    const changed = before.verdict !== after.verdict || before.confidence !== after.confidence;
    const reason = after.reasons.find((r) => !before.reasons.includes(r)) ?? after.reasons[0] ?? '';
    rows.push({
      repoId: target.repoId,
      prNumber: target.prNumber,
      old: { verdict: before.verdict, confidence: before.confidence, rulesVersion: before.rulesVersion },
      new: { verdict: after.verdict, confidence: after.confidence, rulesVersion: after.rulesVersion },
      changed,
      reason,
    });
  }
  return rows.sort((a, b) => (a.repoId < b.repoId ? -1 : a.repoId > b.repoId ? 1 : a.prNumber - b.prNumber));
}

/** Rows of one replay page: 100 by default, at most 1,000 (a workspace of 100k reviews answers in pages). */
export const REPLAY_DEFAULT_LIMIT = 100;
export const REPLAY_MAX_LIMIT = 1000;

/** What a page request names: the rules, the filters, whether unchanged rows are listed, and where to go on. */
export interface ReplayPageRequest {
  rules: Rules;
  repoId?: string;
  prNumber?: number;
  all?: boolean;
  limit?: number;
  cursor?: string;
}

export interface ReplayPage {
  rulesVersion: string;
  /** Reviews replayed and those whose verdict or confidence would change, in the whole replay (every page). */
  reviews: number;
  changed: number;
  rows: ReplayRow[];
  /** Pass back as `cursor` for the rows after these (same rules, filters and `all`), or null on the last page. */
  next: string | null;
}

/**
 * A replay cursor names the log position every page of one replay is folded at (so the pages are one
 * replay however many acts are appended meanwhile) and the last row's key (rows are sorted by repo, then PR).
 * Its check digest is not a secret: a cursor grants nothing (it only narrows what its holder may read);
 * it catches an altered or hand-made cursor and one passed with other rules, filters or `all`.
 */
function replayCursorDigest(r: ReplayPageRequest, position: number, repoId: string, prNumber: number): string {
  const request = canonicalJson({ rules: r.rules, repoId: r.repoId ?? null, prNumber: r.prNumber ?? null, all: r.all === true });
  return createHash('sha256').update(`review-ledger replay cursor v1\n${position}\n${repoId}\n${prNumber}\n${request}`).digest('base64url').slice(0, 16);
}

export function replayCursor(r: ReplayPageRequest, position: number, last: ReplayRow): string {
  return Buffer.from(`v1.${position}.${last.repoId}.${last.prNumber}.${replayCursorDigest(r, position, last.repoId, last.prNumber)}`).toString('base64url');
}

/** The position and last key a request's cursor continues from, or undefined without one (invalid_cursor when it is not one replay made for this request). */
export function replayCursorOf(r: ReplayPageRequest): { position: number; repoId: string; prNumber: number } | undefined {
  if (r.cursor === undefined) return undefined;
  const refuse = (why: string): never => {
    throw new DomainError('invalid_cursor', `cursor: ${why}; pass a replay answer's \`next\` back unchanged, with the same rules, filters and all (or leave cursor out for the first page)`, { field: 'cursor' });
  };
  const raw = /^[A-Za-z0-9_-]{1,400}$/.test(r.cursor) ? Buffer.from(r.cursor, 'base64url').toString('utf8') : '';
  // repoId: letters, digits, ".", "_", "-" (repoIdSchema); the greedy match takes its dots.
  const m = /^v1\.(\d{1,15})\.([A-Za-z0-9][A-Za-z0-9._-]{0,99})\.(\d{1,10})\.([A-Za-z0-9_-]{16})$/.exec(raw);
  if (!m) return refuse('not a cursor replay returned');
  const position = Number(m[1]);
  const prNumber = Number(m[3]);
  if (m[4] !== replayCursorDigest(r, position, m[2], prNumber)) return refuse('it was not made for these rules and filters (or it was altered)');
  return { position, repoId: m[2], prNumber };
}

/** One page of a replay folded at `position`: the rows (changed only unless `all`) after the cursor's key. */
export function replayPage(r: ReplayPageRequest, rows: ReplayRow[], position: number): ReplayPage {
  const limit = r.limit ?? REPLAY_DEFAULT_LIMIT;
  const after = replayCursorOf(r);
  const listed = (r.all ? rows : rows.filter((x) => x.changed)).filter((x) => !after || x.repoId > after.repoId || (x.repoId === after.repoId && x.prNumber > after.prNumber));
  const page = listed.slice(0, limit);
  const next = listed.length > limit ? replayCursor(r, position, page[page.length - 1]) : null;
  return { rulesVersion: r.rules.rulesVersion, reviews: rows.length, changed: rows.filter((x) => x.changed).length, rows: page, next };
}
