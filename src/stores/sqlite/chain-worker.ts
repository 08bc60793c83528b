import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { chainHash, type ChainFields } from '../../events/chain';

/**
 * One range (lo, hi] of a workspace's SQLite log, checked in a worker thread for `audit verify`
 * (SqliteEventStore.chainScan): contiguous positions, every hash recomputed with chainHash from the
 * stored hash before it. The range starts from the stored hash at `lo` (read here, returned as
 * firstPrevHash; null for lo = 0, where the caller supplies the genesis). The caller stitches the ranges
 * together (each range's firstPrevHash against the previous range's last hash) and re-runs the full
 * streaming pass, which names the problem, whenever a range reports one.
 */
/**
 * The stored 32-byte hash as the API's lowercase hex, computed by SQLite: ~0.5–1 µs per row cheaper than
 * a Buffer per row and toString('hex') (audit verify reads every row). NULL (an unchained row) stays NULL;
 * a value that is not a BLOB (a text written behind the store's back) comes out as the hex of its bytes,
 * which no hash matches: verify reports that row.
 */
export const HASH_HEX = "nullif(lower(hex(hash)), '')";

export interface ChainScanJob {
  file: string;
  lo: number;
  hi: number;
  wanted: number[];
}

export interface ChainScanResult {
  ok: boolean;
  count: number;
  firstPrevHash: string | null;
  lastHash: string | null;
  hashAt: Array<[number, string]>;
}

type Raw = [number, string, string, number, string, number, string, string, string | null];

export function scanRange(job: ChainScanJob, genesis?: string): ChainScanResult {
  const db = new Database(job.file, { readonly: true, fileMustExist: true });
  try {
    // Same columns and order as SqliteEventStore.readChainPage; 1,000-row pages (see checkpointer.ts).
    const page = db
      .prepare(`SELECT global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, ${HASH_HEX} FROM events WHERE global_position > ? AND global_position <= ? ORDER BY global_position ASC LIMIT 1000`)
      .raw(true);
    const wanted = new Set(job.wanted);
    const hashAt: Array<[number, string]> = [];
    // One reused object: no per-row allocation beyond the row itself.
    const f: ChainFields = { position: 0, streamId: '', streamRevision: 0, type: '', schemaVersion: 0, data: '', metadata: '', eventId: '' };
    let expected = job.lo + 1;
    let firstPrevHash: string | null = null;
    if (job.lo > 0) {
      firstPrevHash = (db.prepare(`SELECT ${HASH_HEX} FROM events WHERE global_position = ?`).pluck().get(job.lo) as string | null | undefined) ?? null;
      if (firstPrevHash === null) return { ok: false, count: 0, firstPrevHash, lastHash: null, hashAt };
    }
    let prev: string | null = firstPrevHash ?? genesis ?? null;
    let last: string | null = null;
    let count = 0;
    for (let after = job.lo; ; ) {
      const rows = page.all(after, job.hi) as Raw[];
      if (rows.length === 0) break;
      for (const r of rows) {
        const hash = r[8];
        if (r[0] !== expected || hash === null || prev === null) return { ok: false, count, firstPrevHash, lastHash: last, hashAt };
        f.position = r[0];
        f.eventId = r[1];
        f.streamId = r[2];
        f.streamRevision = r[3];
        f.type = r[4];
        f.schemaVersion = r[5];
        f.data = r[6];
        f.metadata = r[7];
        if (chainHash(prev, f) !== hash) return { ok: false, count, firstPrevHash, lastHash: last, hashAt };
        if (wanted.has(r[0])) hashAt.push([r[0], hash]);
        prev = last = hash;
        expected++;
        count++;
      }
      after = rows[rows.length - 1][0];
    }
    return { ok: count === job.hi - job.lo, count, firstPrevHash, lastHash: last, hashAt };
  } finally {
    db.close();
  }
}

if (parentPort && workerData && (workerData as { chainScan?: ChainScanJob }).chainScan) {
  const { chainScan, genesis } = workerData as { chainScan: ChainScanJob; genesis: string };
  parentPort.postMessage(scanRange(chainScan, genesis));
}
