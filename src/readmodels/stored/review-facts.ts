import type { RecordedEvent } from '../../events/envelope';
import { catalogued, isEvent } from '../../events/catalogue/event-types';
import type { ReadModel, ApplyTx, Row } from './model';
import type { BulkDialect, BulkStatements } from './bulk';
import type { ReadModelStorage, Slot } from './storage';
import { tableName } from './storage';

/**
 * The workspace facts a PR's review folds (src/readmodels/queries/review-fold.ts): suppression facts by
 * fingerprint and rules activations, kept as the events themselves (one JSON row each, with their
 * position). Every dismissal records a suppression fact on the workspace stream, so that stream grows
 * with the log; a review query reads from here only the facts of the fingerprints its PR filed and
 * the activations, as of its bound, instead of the whole workspace stream (the workspace stream's
 * other events — members, tokens — do not reach a review fold).
 */
export const reviewFactsReadModel: ReadModel = {
  name: 'reviewFacts',
  version: 1,
  tables: [
    { name: 'suppressions', columns: { fingerprint: 'text', position: 'int', event: 'text' }, key: ['fingerprint', 'position'] },
    { name: 'rules', columns: { position: 'int', event: 'text' }, key: ['position'] },
  ],
  relevant: (e) => e.streamId === 'workspace' && (e.type === 'SuppressionFactRecorded' || e.type === 'RulesVersionActivated'),
  apply(e: RecordedEvent, tx: ApplyTx) {
    // The event as the fold sees it (metadata is decoded lazily by some stores: name every field).
    const event = JSON.stringify({ eventId: e.eventId, streamId: e.streamId, streamRevision: e.streamRevision, globalPosition: e.globalPosition, type: e.type, schemaVersion: e.schemaVersion, data: e.data, metadata: e.metadata });
    const ev = catalogued(e);
    if (ev.type === 'RulesVersionActivated') tx.put('rules', { position: e.globalPosition, event });
    else if (ev.type === 'SuppressionFactRecorded') tx.put('suppressions', { fingerprint: ev.data.fingerprint, position: e.globalPosition, event });
  },
  // Its rows are the events themselves (JSON.stringify): a set-based build writes the suppression facts
  // with one statement (eventJson: the same text), and folds only the rules activations (a few) in JS.
  // The facts in JS were ~0.3 s of a 200k-event build's main thread (13.5k events read, decoded and
  // stringified again), the statement ~40 ms on the writer thread.
  bulk: () => ({
    js: { types: ['RulesVersionActivated'] },
    sqlTypes: ['SuppressionFactRecorded'],
    sqlTables: ['suppressions'],
    statements(d: BulkDialect, from: number, to: number): BulkStatements {
      const src = d.src(['SuppressionFactRecorded'], from, to);
      const select = `SELECT ${d.str('e', ['fingerprint'])} AS fingerprint, e.position, ${d.eventJson('e')} AS event FROM ${src.sql} e WHERE e.stream_id = 'workspace'`;
      return { prepare: [], apply: [{ sql: d.insert('suppressions', ['fingerprint', 'position', 'event'], ['fingerprint', 'position'], select, 'unique'), params: [d.workspaceId, ...src.params] }] };
    },
  }),
};

/** Fingerprints looked up per statement (well under SQLite's and PostgreSQL's parameter limits). */
const CHUNK = 500;

/**
 * The workspace-stream events a review fold of `prEvents` depends on, as of `until`, in log order: every
 * rules activation, and the first suppression fact of each fingerprint the PR's nodes carry. Folding these
 * in place of the whole workspace stream gives the same view (the fold reads a suppression fact only
 * for a filed node's fingerprint; test/readmodels/conformance.ts compares every review query).
 */
export async function reviewFactsFromRows(storage: ReadModelStorage, slot: Slot, prEvents: readonly RecordedEvent[], until: number): Promise<RecordedEvent[]> {
  const fingerprints = new Set<string>();
  for (const e of prEvents) if (isEvent(e, 'ReviewNodeFiled')) fingerprints.add(e.data.fingerprint);
  const rows: Row[] = await storage.query(`SELECT event FROM ${tableName(slot, 'rules')} WHERE workspace_id = ? AND position <= ? ORDER BY position`, [storage.workspaceId, until]);
  const fps = [...fingerprints];
  for (let i = 0; i < fps.length; i += CHUNK) {
    const chunk = fps.slice(i, i + CHUNK);
    // The fold keeps only the first fact of a fingerprint: one row per fingerprint, the earliest as of the bound.
    const t = tableName(slot, 'suppressions');
    rows.push(
      ...(await storage.query(
        `SELECT s.event FROM ${t} s WHERE s.workspace_id = ? AND s.fingerprint IN (${chunk.map(() => '?').join(', ')}) AND s.position = (SELECT min(m.position) FROM ${t} m WHERE m.workspace_id = s.workspace_id AND m.fingerprint = s.fingerprint AND m.position <= ?)`,
        [storage.workspaceId, ...chunk, until],
      )),
    );
  }
  return rows.map((r) => JSON.parse(String(r.event)) as RecordedEvent).sort((a, b) => a.globalPosition - b.globalPosition);
}
