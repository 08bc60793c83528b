import type { AuditLogStore, ChainRow } from '../../events/chain';
import { upcastEvent } from '../../events/catalogue';
import { catalogued } from '../../events/catalogue/event-types';
import type { EventMetadata, RecordedEvent } from '../../events/envelope';
import { AFFECTING, AuditRow, auditFold } from './audit';

/**
 * How one printed audit row stands against the log (docs/audit.md, "Audit rows against the chain"):
 * `verified` — the row is exactly what the audit fold makes of the chained event at its position, with
 *   the roles and tokens of the chained events before it, and the chain verifies through it;
 * `mismatch` — it is not (the read model `readmodels.audit.db` was edited, or is stale);
 * `unverified` — the log does not verify at or before it (`firstBroken` of verify), so it cannot vouch for it either way.
 */
export interface AuditRowCheck {
  position: number;
  check: 'verified' | 'mismatch' | 'unverified';
  /** The chain hash (hex) of the event the row comes from, as the log stores it; null when there is none. */
  hash: string | null;
  /** Why it is not verified. */
  problem?: string;
}

const PAGE = 1000;
const FIELDS: Array<keyof AuditRow> = ['time', 'action', 'actor', 'role', 'target', 'repoId', 'prNumber', 'detail', 'eventId', 'via', 'tokenId', 'issuerChain', 'authn', 'signIn'];

function recorded(r: ChainRow): RecordedEvent {
  const metadata = JSON.parse(r.metadata) as EventMetadata;
  const up = upcastEvent(r.type, r.schemaVersion, JSON.parse(r.data), metadata);
  return { eventId: r.eventId, type: r.type, schemaVersion: up.schemaVersion, data: up.data, metadata, streamId: r.streamId, streamRevision: r.streamRevision, globalPosition: r.position };
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Checks each row against the log: the chained events up to the last row's position are folded by the
 * audit fold (the same rules the read model applies, from the stored texts the chain hashes; only the
 * events that affect the audit are parsed), and each row must equal what the fold makes of the event at
 * its position. `firstBroken`: where `audit verify` found the chain broken (null: it verifies).
 */
export async function checkAuditRows(store: AuditLogStore, rows: AuditRow[], firstBroken: number | null): Promise<AuditRowCheck[]> {
  if (rows.length === 0) return [];
  const wanted = new Set(rows.map((r) => r.position));
  const until = Math.max(...wanted);
  const derived = new Map<number, { hash: string | null; type: string; row: AuditRow | null }>();
  const state = auditFold.initialState();
  for (let after = 0; after < until; ) {
    const page = await store.readChainPage(after, PAGE);
    if (page.length === 0) break;
    for (const r of page) {
      if (r.position > until) break;
      const affects = AFFECTING.has(r.type);
      let row: AuditRow | null = null;
      if (affects) {
        const before = state.rows.length;
        try {
          auditFold.evolve(state, catalogued(recorded(r)));
        } catch {
          // A stored text that does not parse makes no row here; the row printed for it is then a mismatch.
        }
        if (state.rows.length > before) row = state.rows.pop()!;
      }
      if (wanted.has(r.position)) derived.set(r.position, { hash: r.hash, type: r.type, row });
    }
    after = page[page.length - 1].position;
  }
  return rows.map((row) => {
    const found = derived.get(row.position);
    const hash = found?.hash ?? null;
    if (firstBroken !== null && firstBroken <= row.position) return { position: row.position, check: 'unverified', hash, problem: `the log does not verify from position ${firstBroken} on (see the log integrity), at or before this row: nothing in the log vouches for it` };
    if (!found) return { position: row.position, check: 'mismatch', hash, problem: `the log holds no event at position ${row.position}` };
    if (!found.row) return { position: row.position, check: 'mismatch', hash, problem: `the event at position ${row.position} (${found.type}) records no decision act` };
    const differ = FIELDS.filter((f) => !same(row[f], found.row![f]));
    if (differ.length === 0) return { position: row.position, check: 'verified', hash };
    const show = (v: unknown) => JSON.stringify(v)?.slice(0, 80);
    return { position: row.position, check: 'mismatch', hash, problem: differ.map((f) => `${f}: the row says ${show(row[f])}, the event says ${show(found.row![f])}`).join('; ') };
  });
}
