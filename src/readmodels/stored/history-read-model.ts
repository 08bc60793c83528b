import { parseReviewStream } from '../../events/streams';
import type { RecordedEvent } from '../../events/envelope';
import { catalogued } from '../../events/catalogue/event-types';
import { HISTORY_EVENT_TYPES, type HistoryEntry } from '../../context/history-fold';
import type { ApplyTx, ReadModel, Row } from './model';
import type { BulkBuilder, BulkDialect, BulkStatements } from './bulk';
import type { ReadModelStorage, Slot } from './storage';
import { tableName } from './storage';

interface RecordedFragment {
  path: string;
  side: 'head' | 'base';
  startLine: number;
  endLine: number;
  symbolId: string;
}

/** The same innermost-fragment rule as src/context/history-fold.ts (kept in step by the conformance suite). */
function fragmentSymbol(fragments: readonly RecordedFragment[], a: { path: string; side: string; startLine: number; endLine: number }): string | undefined {
  let best: RecordedFragment | undefined;
  for (const f of fragments) {
    if (f.path !== a.path || f.side !== a.side || f.startLine > a.startLine || f.endLine < a.endLine) continue;
    if (!best || f.endLine - f.startLine < best.endLine - best.startLine) best = f;
  }
  return best?.symbolId;
}

/** The event types `apply` writes rows for (the fold's history events but ReviewRequested). */
const FOLDED = new Set([...HISTORY_EVENT_TYPES].filter((t) => t !== 'ReviewRequested'));

/** parseReviewStream, remembered per stream (called for every event of a rebuild; a regex each time). */
const STREAMS = new Map<string, ReturnType<typeof parseReviewStream>>();
function reviewStream(streamId: string): ReturnType<typeof parseReviewStream> {
  let pr = STREAMS.get(streamId);
  if (pr === undefined) {
    pr = parseReviewStream(streamId);
    // Bounded: a log of more streams than this only parses the rest each time.
    if (STREAMS.size < 100_000) STREAMS.set(streamId, pr);
  }
  return pr;
}

/**
 * The ledger's memory (src/context/history-fold.ts) as rows, so a context pack's history clues cost an
 * indexed lookup per symbol instead of a fold of the workspace log. Every fact keeps the position it
 * became true at, so a read bounded by a position is exactly the fold's state at that position:
 *
 * - `entries`: one per filed node (the fields a clue shows);
 * - `symbols`: one per (node → symbol id) indexing act, in the fold's order `(position, seq)` — at
 *   filing when the anchor names the symbol or the head's fragments are known, else when the
 *   computation at the node's head arrives (`pending` holds those anchors until then);
 * - `closures`: every dismissal / resolution (the last one as of the bound wins, as in the fold);
 * - `confirms`: the first confirmation by another principal (consensus-ready from then on);
 * - `rounds`: every round start of a PR stream;
 * - `fragments`: the definition fragments the computation at each head recorded (read by `apply` only).
 */
export const historyReadModel: ReadModel = {
  name: 'history',
  version: 1,
  tables: [
    {
      name: 'entries',
      columns: { stream_id: 'text', node_id: 'text', position: 'int', pr_number: 'int', round: 'int', head_sha: 'text', kind: 'text', priority: 'text', category: 'text', title: 'text', body: 'text', author: 'text', anchored_by: 'text' },
      key: ['stream_id', 'node_id'],
    },
    { name: 'symbols', columns: { position: 'int', seq: 'int', repo_id: 'text', symbol_id: 'text', stream_id: 'text', node_id: 'text' }, key: ['position', 'seq'], indexes: [['repo_id', 'symbol_id', 'position', 'seq']] },
    { name: 'closures', columns: { stream_id: 'text', node_id: 'text', position: 'int', status: 'text', closed_by: 'text', reason: 'text' }, key: ['stream_id', 'node_id', 'position'] },
    { name: 'confirms', columns: { stream_id: 'text', node_id: 'text', position: 'int' }, key: ['stream_id', 'node_id'] },
    { name: 'rounds', columns: { stream_id: 'text', position: 'int', round: 'int' }, key: ['stream_id', 'position'] },
    { name: 'fragments', columns: { head_at: 'text', fragments: 'text' }, key: ['head_at'] },
    { name: 'pending', columns: { head_at: 'text', anchors: 'text' }, key: ['head_at'] },
  ],
  // ReviewRequested is a history event of the fold (it names the repo) but writes no row here.
  relevant: (e) => FOLDED.has(e.type) && reviewStream(e.streamId) !== null,
  prefetch(e: RecordedEvent) {
    const ev = catalogued(e);
    switch (ev.type) {
      case 'ReviewComputed':
        return [{ table: 'pending', key: { head_at: `${e.streamId}@${ev.data.headSha}` } }];
      case 'ReviewNodeFiled': {
        if (!ev.data.node.anchor || ev.data.node.anchor.symbolId) return [];
        const at = `${e.streamId}@${ev.data.headSha}`;
        return [{ table: 'fragments', key: { head_at: at } }, { table: 'pending', key: { head_at: at } }];
      }
      case 'ReviewNodeConfirmed': {
        const key = { stream_id: e.streamId, node_id: ev.data.nodeId };
        return [{ table: 'entries', key }, { table: 'confirms', key }];
      }
      case 'ReviewNodeDismissed':
      case 'ReviewNodeResolved':
        return [{ table: 'entries', key: { stream_id: e.streamId, node_id: ev.data.nodeId } }];
      default:
        return [];
    }
  },
  async apply(e: RecordedEvent, tx: ApplyTx) {
    const ev = catalogued(e);
    const pr = reviewStream(e.streamId)!;
    let seq = 0;
    const index = (streamId: string, nodeId: string, symbolId: string): void => {
      tx.put('symbols', { position: e.globalPosition, seq: seq++, repo_id: pr.repoId, symbol_id: symbolId, stream_id: streamId, node_id: nodeId });
    };
    switch (ev.type) {
      case 'ReviewRoundStarted':
        tx.put('rounds', { stream_id: e.streamId, position: e.globalPosition, round: ev.data.round });
        break;
      case 'ReviewComputed': {
        const d = ev.data;
        const at = `${e.streamId}@${d.headSha}`;
        const recorded: RecordedFragment[] = [];
        for (const c of d.cohorts) {
          for (const f of c.fragments) if (f.symbolId) recorded.push({ path: f.path, side: f.side, startLine: f.startLine, endLine: f.endLine, symbolId: f.symbolId });
        }
        tx.put('fragments', { head_at: at, fragments: JSON.stringify(recorded) });
        const pending = await tx.get('pending', { head_at: at });
        if (pending) {
          for (const p of JSON.parse(String(pending.anchors)) as Array<{ nodeId: string; path: string; side: string; startLine: number; endLine: number }>) {
            const symbolId = fragmentSymbol(recorded, p);
            if (symbolId) index(e.streamId, p.nodeId, symbolId);
          }
          tx.delete('pending', { head_at: at });
        }
        break;
      }
      case 'ReviewNodeFiled': {
        const d = ev.data;
        const node = d.node;
        const anchor = node.anchor;
        if (!anchor) break;
        const at = `${e.streamId}@${d.headSha}`;
        const lines = { nodeId: d.nodeId, path: anchor.path, side: anchor.side === 'LEFT' ? 'base' : 'head', startLine: anchor.startLine, endLine: anchor.endLine };
        const fragments = anchor.symbolId ? undefined : await tx.get('fragments', { head_at: at });
        const symbolId = anchor.symbolId ?? (fragments ? fragmentSymbol(JSON.parse(String(fragments.fragments)), lines) : undefined);
        tx.put('entries', {
          stream_id: e.streamId,
          node_id: d.nodeId,
          position: e.globalPosition,
          pr_number: pr.prNumber,
          round: d.round,
          head_sha: d.headSha,
          kind: node.kind,
          priority: node.priority,
          category: node.triage.category,
          title: node.title,
          body: node.body,
          author: node.reviewer.principal,
          anchored_by: anchor.symbolId ? 'symbol-id' : 'fragment',
        });
        if (symbolId) index(e.streamId, d.nodeId, symbolId);
        else if (!fragments) {
          const pending = await tx.get('pending', { head_at: at });
          const anchors = pending ? (JSON.parse(String(pending.anchors)) as unknown[]) : [];
          anchors.push(lines);
          tx.put('pending', { head_at: at, anchors: JSON.stringify(anchors) });
        }
        break;
      }
      case 'ReviewNodeConfirmed': {
        const d = ev.data;
        const key = { stream_id: e.streamId, node_id: d.nodeId };
        const entry = await tx.get('entries', key);
        // Only a different principal's confirmation makes consensus (SPEC §5); the first one counts.
        if (entry && d.by !== entry.author && !(await tx.get('confirms', key))) tx.put('confirms', { ...key, position: e.globalPosition });
        break;
      }
      case 'ReviewNodeDismissed':
      case 'ReviewNodeResolved': {
        const d = ev.data;
        const key = { stream_id: e.streamId, node_id: d.nodeId };
        if (await tx.get('entries', key)) tx.put('closures', { ...key, position: e.globalPosition, status: ev.type === 'ReviewNodeDismissed' ? 'dismissed' : 'resolved', closed_by: d.by ?? null, reason: d.reason ?? null });
        break;
      }
      default:
        break;
    }
  },
  bulk: () => historyBulk,
};

/**
 * The set-based rebuild of `history` (src/readmodels/stored/bulk.ts). The statements write, per chunk: an entry
 * per anchored filing (the last filing of a node wins, as `put` does), the index row of each filing
 * that names its symbol, the round starts, the closures of nodes filed before them, and each node's
 * first confirmation by another principal than its author as of then. A node filed again later in the
 * chunk than the act is looked up in the log (its filing before the act). `apply` folds the rest — the
 * computations (their fragments, as JSON) and the filings anchored by lines (matched to fragments or
 * left pending): a few percent of the log.
 */
const historyBulk: BulkBuilder = {
  js: { types: ['ReviewComputed', 'ReviewNodeFiled'], where: (d) => `type <> 'ReviewNodeFiled' OR (${d.rawPresent(['node', 'anchor'])} AND coalesce(${d.rawStr(['node', 'anchor', 'symbolId'])}, '') = '')` },
  sqlTypes: ['ReviewNodeFiled', 'ReviewRoundStarted', 'ReviewNodeDismissed', 'ReviewNodeResolved', 'ReviewNodeConfirmed'],
  sqlTables: ['entries', 'rounds', 'closures', 'confirms'],
  statements(d: BulkDialect, from: number, to: number): BulkStatements {
    const ws = d.workspaceId;
    const s = (p: string[], a = 'e'): string => d.str(a, p);
    const acts = d.src(['ReviewNodeFiled', 'ReviewRoundStarted', 'ReviewNodeDismissed', 'ReviewNodeResolved', 'ReviewNodeConfirmed'], from, to);
    const filing = `e.type = 'ReviewNodeFiled'`;
    const ofFiling = (x: string): string => `CASE WHEN ${filing} THEN ${x} END`;
    // Every act of the chunk the statements read, each parsed once into one temporary table (one scan of
    // the chunk, not one per statement: a scan of 25k log rows is ~5 ms; each statement parsing the
    // filings' JSON again was ~0.3 s of a 200k-event build's writer thread): the anchored filings' fields
    // for the entries and the symbol index, the round starts, the closures and confirmations (`author`:
    // their `by`). `pr_number` is null for a stream that is not a review's (nothing is written for it):
    // the filing's PR number, 0 for the other acts. Rows in log order.
    const actCols = { position: 'int', act: 'text', stream_id: 'text', node_id: 'text', pr_number: 'int', round: 'int', head_sha: 'text', kind: 'text', priority: 'text', category: 'text', title: 'text', body: 'text', author: 'text', symbol_id: 'text', repo_id: 'text', reason: 'text' } as const;
    const parsed =
      `SELECT e.position, CASE e.type WHEN 'ReviewNodeFiled' THEN 'filed' WHEN 'ReviewRoundStarted' THEN 'round' WHEN 'ReviewNodeConfirmed' THEN 'confirmed' WHEN 'ReviewNodeDismissed' THEN 'dismissed' ELSE 'resolved' END, e.stream_id, ${s(['nodeId'])}, ` +
      `CASE WHEN ${filing} THEN ${d.reviewPr('e')} WHEN ${d.isReview('e')} THEN 0 END, CASE WHEN e.type IN ('ReviewNodeFiled', 'ReviewRoundStarted') THEN ${d.int('e', ['round'])} END, ` +
      `${ofFiling(s(['headSha']))}, ${ofFiling(s(['node', 'kind']))}, ${ofFiling(s(['node', 'priority']))}, ${ofFiling(s(['node', 'triage', 'category']))}, ${ofFiling(s(['node', 'title']))}, ${ofFiling(s(['node', 'body']))}, ` +
      `CASE WHEN ${filing} THEN ${s(['node', 'reviewer', 'principal'])} ELSE ${s(['by'])} END, ${ofFiling(s(['node', 'anchor', 'symbolId']))}, ${ofFiling(d.reviewRepo('e'))}, ` +
      `CASE WHEN e.type IN ('ReviewNodeDismissed', 'ReviewNodeResolved') THEN ${s(['reason'])} END FROM ${acts.sql} e WHERE e.type <> 'ReviewNodeFiled' OR ${d.present('e', ['node', 'anchor'])} ORDER BY e.position`;
    const of = (act: string): string => `f.act = '${act}' AND f.pr_number IS NOT NULL`;
    const named = `coalesce(f.symbol_id, '') <> ''`;
    const entries = `SELECT f.stream_id, f.node_id, f.position, f.pr_number, f.round, f.head_sha, f.kind, f.priority, f.category, f.title, f.body, f.author, CASE WHEN ${named} THEN 'symbol-id' ELSE 'fragment' END AS anchored_by FROM bulk_acts f WHERE ${of('filed')}`;
    const symbols = `SELECT f.position, 0 AS seq, f.repo_id, f.symbol_id, f.stream_id, f.node_id FROM bulk_acts f WHERE ${of('filed')} AND ${named}`;
    const rounds = `SELECT f.stream_id, f.position, f.round FROM bulk_acts f WHERE ${of('round')}`;
    // The node's anchored filing before the act at `c.position` (for a node filed again since).
    const filedBefore = (what: string): string =>
      `SELECT ${what} FROM ${d.log.sql} f WHERE f.stream_id = c.stream_id AND f.type = 'ReviewNodeFiled' AND f.position < c.position AND ${s(['nodeId'], 'f')} = c.node_id AND ${d.present('f', ['node', 'anchor'])} ORDER BY f.position DESC LIMIT 1`;
    const closures =
      `SELECT c.stream_id, c.node_id, c.position, c.act AS status, c.author AS closed_by, c.reason FROM (SELECT * FROM bulk_acts f WHERE (${of('dismissed')}) OR (${of('resolved')})) c ` +
      `WHERE EXISTS (SELECT 1 FROM ${d.t('entries')} en WHERE en.workspace_id = ? AND en.stream_id = c.stream_id AND en.node_id = c.node_id AND (en.position < c.position OR EXISTS (${filedBefore('1')})))`;
    const confirmed =
      `SELECT c.stream_id, c.node_id, c.position FROM (SELECT * FROM bulk_acts f WHERE ${of('confirmed')}) c ` +
      `WHERE EXISTS (SELECT 1 FROM ${d.t('entries')} en WHERE en.workspace_id = ? AND en.stream_id = c.stream_id AND en.node_id = c.node_id ` +
      `AND CASE WHEN en.position < c.position THEN ${d.distinct('c.author', 'en.author')} ELSE EXISTS (SELECT 1 FROM (${filedBefore(`${s(['node', 'reviewer', 'principal'], 'f')} AS author`)}) a WHERE ${d.distinct('c.author', 'a.author')}) END)`;
    const cols = (t: string): string[] => Object.keys(historyReadModel.tables.find((x) => x.name === t)!.columns);
    // In the checkpoint's transaction (closures and confirmations read the entries written first).
    return {
      // It reads the log alone: it may run ahead, beside the chunk before's commit (about half the work).
      ahead: true,
      prepare: d.tempSelect('bulk_acts', actCols, 'position', parsed, acts.params),
      apply: [
        { sql: d.insert('entries', cols('entries'), ['stream_id', 'node_id'], entries, 'last'), params: [ws] },
        { sql: d.insert('symbols', cols('symbols'), ['position', 'seq'], symbols, 'unique'), params: [ws] },
        { sql: d.insert('rounds', cols('rounds'), ['stream_id', 'position'], rounds, 'unique'), params: [ws] },
        { sql: d.insert('closures', cols('closures'), ['stream_id', 'node_id', 'position'], closures, 'unique'), params: [ws, ws, ...d.log.params] },
        { sql: d.insert('confirms', cols('confirms'), ['stream_id', 'node_id'], confirmed, 'first'), params: [ws, ws, ...d.log.params] },
      ],
    };
  },
};

/** Statements per storage and slot: one SQL text each, so SQLite prepares it once and PostgreSQL parses it once. */
function historySql(slot: Slot): { round: string; entries: string } {
  const t = (n: string) => tableName(slot, n);
  return {
    round: `SELECT round FROM ${t('rounds')} WHERE workspace_id = ? AND stream_id = ? AND position <= ? ORDER BY position DESC LIMIT 1`,
    // One statement per symbol: the index rows in the fold's order, each with its entry, its last closure
    // and its first confirmation as of the bound.
    entries:
      `SELECT e.*, s.symbol_id AS s_symbol, ` +
      ['status', 'closed_by', 'reason'].map((c) => `(SELECT c.${c} FROM ${t('closures')} c WHERE c.workspace_id = s.workspace_id AND c.stream_id = s.stream_id AND c.node_id = s.node_id AND c.position <= ? ORDER BY c.position DESC LIMIT 1) AS c_${c}, `).join('') +
      `(SELECT 1 FROM ${t('confirms')} f WHERE f.workspace_id = s.workspace_id AND f.stream_id = s.stream_id AND f.node_id = s.node_id AND f.position <= ?) AS confirmed ` +
      `FROM ${t('symbols')} s JOIN ${t('entries')} e ON e.workspace_id = s.workspace_id AND e.stream_id = s.stream_id AND e.node_id = s.node_id ` +
      `WHERE s.workspace_id = ? AND s.repo_id = ? AND s.symbol_id = ? AND s.position <= ? ORDER BY s.position, s.seq`,
  };
}

function entryOf(r: Row): HistoryEntry {
  const out: HistoryEntry = {
    streamId: String(r.stream_id),
    prNumber: Number(r.pr_number),
    nodeId: String(r.node_id),
    round: Number(r.round),
    headSha: String(r.head_sha),
    symbolId: String(r.s_symbol),
    kind: String(r.kind),
    priority: String(r.priority),
    category: String(r.category),
    title: String(r.title),
    body: String(r.body),
    author: String(r.author),
    status: r.confirmed !== null && r.confirmed !== undefined ? 'consensus-ready' : 'open',
    anchoredBy: r.anchored_by as HistoryEntry['anchoredBy'],
  };
  if (r.c_status !== null && r.c_status !== undefined) {
    out.status = r.c_status as HistoryEntry['status'];
    // The fold copies `by` and `reason` as the event gave them (absent stays absent).
    out.closedBy = (r.c_closed_by as string | null) ?? undefined;
    out.closedReason = (r.c_reason as string | null) ?? undefined;
  }
  return out;
}

/**
 * `historyOf` (src/context/history-fold.ts) for each of `symbolIds`, exactly as of `until`: every node of
 * another PR of the repo, and nodes of this PR from rounds before its current one.
 */
export async function historyFromRows(storage: ReadModelStorage, slot: Slot, repoId: string, streamId: string, symbolIds: Iterable<string>, until: number): Promise<Map<string, HistoryEntry[]>> {
  const sql = historySql(slot);
  const ws = storage.workspaceId;
  const symbols = [...new Set(symbolIds)];
  // The statements side by side: on PostgreSQL each is a round trip, and none needs another's answer.
  const [roundRows, ...perSymbol] = await Promise.all([storage.query(sql.round, [ws, streamId, until]), ...symbols.map((symbolId) => storage.query(sql.entries, [until, until, until, until, ws, repoId, symbolId, until]))]);
  const round = roundRows[0] ? Number(roundRows[0].round) : 1;
  const out = new Map<string, HistoryEntry[]>();
  symbols.forEach((symbolId, i) => {
    const list: HistoryEntry[] = [];
    for (const r of perSymbol[i]) {
      if (String(r.stream_id) === streamId && Number(r.round) >= round) continue;
      list.push(entryOf(r));
    }
    out.set(symbolId, list);
  });
  return out;
}
