import { PRIORITIES } from '../events/catalogue/review';
import type { Rules } from '../rules/rules';
import { axesOf } from './axes';
import { currentRound, isLive, NodeCore, NodeRecord as FullNodeRecord, PrState as FullPrState } from './pr-state';

type PrState = FullPrState<NodeCore>;
type NodeRecord = FullNodeRecord<NodeCore>;
import type { PrVerdict } from './pr-verdict';
import type { Priority } from '../events/catalogue/review';
import { askLevel, CLAUSE_ORDER, clauseIndex, DECIDING_LISTED, FindingsSummary, finishVerdict, quantized, VERDICT_LEVELS } from './verdict';

/** One defect of the round: the live nodes sharing a fingerprint, with what they ask for and their sums. */
interface DefectGroup {
  /** Live node ids in filing order. */
  members: string[];
  /** How many members ask for Ship / Hold / Block (three fields, not an array: one allocation less per defect). */
  ship: number;
  hold: number;
  block: number;
  /** The strictest ask (the defect's level), -1 when empty. */
  level: number;
  sum: number;
  sumSq: number;
  count: number;
}

interface LevelTotals {
  /**
   * Keys of the groups at this level, for Hold and Block only: those are rare, so listing the deciding
   * defects never scans the whole round; Ship's deciding defects are every live one, found by a short scan.
   */
  groups: Set<string> | null;
  groupCount: number;
  sum: number;
  sumSq: number;
  count: number;
}

/**
 * The verdict's findings part maintained incrementally (one event → O(1) updates, plus a short scan for
 * the listed deciding ids), so a review with 10,000 nodes answers in well under a millisecond instead of
 * refolding them. It is a pure function of the PR state and the rules (rebuilt when either the round or
 * the rules change) and gives exactly what `summarizeFindings` gives from scratch: sums are integers.
 */
export interface VerdictIndex {
  round: number;
  rulesVersion: string;
  groups: Map<string, DefectGroup>;
  levels: [LevelTotals, LevelTotals, LevelTotals];
  live: number;
  /** Live reports per rule clause (index in CLAUSE_ORDER): the clauses of the verdict level are the deciding ones. */
  clauses: number[];
}

const emptyLevel = (tracked: boolean): LevelTotals => ({ groups: tracked ? new Set() : null, groupCount: 0, sum: 0, sumSq: 0, count: 0 });
// Fingerprints key Maps and Sets, not objects: a fingerprint fresh from JSON.parse used as a property key
// is internalized first (hashed and entered in V8's string table), ~1.8 µs per indexed node against a
// Map's hash lookup — building the index was a fifth of a verdict rebuild (bench:projections).
const keyOf = (fingerprint: string) => fingerprint;
const rank = (p: string): number => PRIORITIES.indexOf(p as (typeof PRIORITIES)[number]);

export function buildVerdictIndex(pr: PrState, rules: Rules): VerdictIndex {
  const round = currentRound(pr);
  const ix: VerdictIndex = { round: round?.round ?? 0, rulesVersion: rules.rulesVersion, groups: new Map(), levels: [emptyLevel(false), emptyLevel(true), emptyLevel(true)], live: 0, clauses: CLAUSE_ORDER.map(() => 0) };
  for (const id of round?.nodeIds ?? []) {
    const n = pr.nodes[id];
    if (isLive(n)) indexNode(ix, n, rules, +1);
  }
  return ix;
}

/** Adds (+1) or removes (−1) one live node of the index's round. */
export function indexNode(ix: VerdictIndex, n: NodeRecord, rules: Rules, sign: 1 | -1): void {
  const key = keyOf(n.fingerprint);
  let g = ix.groups.get(key);
  if (!g && sign > 0) {
    // Most defects have one report: the group starts with it, in a one-slot array (a first push onto
    // [] reserves 17 slots, ~150 bytes that every young collection copied until the node closed).
    ix.groups.set(key, (g = { members: [n.nodeId], ship: 0, hold: 0, block: 0, level: -1, sum: 0, sumSq: 0, count: 0 }));
  } else {
    if (!g) ix.groups.set(key, (g = { members: [], ship: 0, hold: 0, block: 0, level: -1, sum: 0, sumSq: 0, count: 0 }));
    if (g.level >= 0) detach(ix, key, g);
    if (sign > 0) g.members.push(n.nodeId);
    else g.members.splice(g.members.indexOf(n.nodeId), 1);
  }
  const ask = askLevel(n.node.priority, n.node.confidence, rules);
  const q = quantized(n.node.confidence);
  if (ask === 2) g.block += sign;
  else if (ask === 1) g.hold += sign;
  else g.ship += sign;
  g.sum += sign * q;
  g.sumSq += sign * q * q;
  g.count += sign;
  ix.live += sign;
  ix.clauses[clauseIndex(n.node.priority, n.node.confidence, rules)] += sign;
  g.level = g.block > 0 ? 2 : g.hold > 0 ? 1 : g.ship > 0 ? 0 : -1;
  if (g.level >= 0) attach(ix, key, g);
  else ix.groups.delete(key);
}

function detach(ix: VerdictIndex, key: string, g: DefectGroup): void {
  const t = ix.levels[g.level];
  if (t.groups) t.groups.delete(key);
  t.groupCount--;
  t.sum -= g.sum;
  t.sumSq -= g.sumSq;
  t.count -= g.count;
}

function attach(ix: VerdictIndex, key: string, g: DefectGroup): void {
  const t = ix.levels[g.level];
  if (t.groups) t.groups.add(key);
  t.groupCount++;
  t.sum += g.sum;
  t.sumSq += g.sumSq;
  t.count += g.count;
}

/** The canonical node of a defect: the highest priority, the earliest filed among equals (SPEC §5). */
function canonicalOf(pr: PrState, g: DefectGroup): NodeRecord {
  let best = pr.nodes[g.members[0]];
  for (let i = 1; i < g.members.length; i++) {
    const n = pr.nodes[g.members[i]];
    if (rank(n.node.priority) < rank(best.node.priority)) best = n;
  }
  return best;
}

export function summaryFromIndex(pr: PrState, ix: VerdictIndex, rules: Rules): FindingsSummary {
  const level = ix.levels[2].groupCount > 0 ? 2 : ix.levels[1].groupCount > 0 ? 1 : 0;
  const t = ix.levels[level];
  let decidingNodeIds: string[];
  if (t.groups && t.groupCount <= 8 * DECIDING_LISTED) {
    const canon: NodeRecord[] = [];
    for (const key of t.groups) canon.push(canonicalOf(pr, ix.groups.get(key)!));
    canon.sort((a, b) => a.filedAt - b.filedAt);
    decidingNodeIds = canon.slice(0, DECIDING_LISTED).map((n) => n.nodeId);
  } else {
    // Many deciding defects (or Ship, where every live defect decides): the first ones in filing order
    // turn up early in the round's node list.
    decidingNodeIds = [];
    const ids = currentRound(pr)?.nodeIds ?? [];
    const wanted = Math.min(DECIDING_LISTED, t.groupCount);
    for (let i = 0; i < ids.length && decidingNodeIds.length < wanted; i++) {
      const n = pr.nodes[ids[i]];
      if (!isLive(n)) continue;
      const g = ix.groups.get(keyOf(n.fingerprint))!;
      if (g.level === level && canonicalOf(pr, g) === n) decidingNodeIds.push(n.nodeId);
    }
  }
  const clauses = CLAUSE_ORDER.filter((c, i) => ix.clauses[i] > 0 && askOfClause(c, rules) === level);
  return { findingsVerdict: VERDICT_LEVELS[level], decidingNodeIds, decidingCount: t.groupCount, sum: t.sum, sumSq: t.sumSq, count: t.count, liveNodes: ix.live, clauses };
}

/** The level a clause asks for (the inverse of `clauseOf`). */
function askOfClause(clause: string, rules: Rules): number {
  const [p, side] = clause.split(':') as [Priority, string | undefined];
  const t = rules.verdict.blockThreshold;
  return askLevel(p, side === 'below' ? Math.max(0, t - 1) : t, rules);
}

/** The same answer as `verdictOfPr`, from the index. */
export function verdictFromIndex(pr: PrState, ix: VerdictIndex, rules: Rules): PrVerdict {
  const axes = axesOf(pr, rules);
  const round = currentRound(pr);
  let groups = 0;
  for (const t of ix.levels) groups += t.groupCount;
  return { ...finishVerdict(summaryFromIndex(pr, ix, rules), axes, rules), round: round?.round ?? null, headSha: round?.headSha ?? null, axes, liveNodes: ix.live, duplicates: ix.live - groups };
}
