import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';

/**
 * The hash chain of a workspace's log (SPEC §16, docs/audit.md). Every stored event carries its `hash`
 * (32 bytes: a BLOB in SQLite, bytea in PostgreSQL); the hash it links to is the stored hash of the event
 * at position − 1 (the workspace's genesis value at position 1), so it is not stored again:
 *
 *   hash = sha256( frame(prevHash) frame(position) frame(streamId) frame(streamRevision) frame(type)
 *                  frame(schemaVersion) frame(data) frame(metadata) frame(eventId) )
 *   frame(s) = <UTF-8 byte length of s in decimal> ":" s,   prevHash framed as 64 lowercase hex digits
 *
 * `data` and `metadata` are the JSON texts exactly as stored (both adapters keep them as text, so the
 * bytes survive a round trip; re-serializing parsed JSON would not: key order, number spelling). The
 * length prefixes make the encoding unambiguous without any escaping, which is why the PostgreSQL
 * adapter can compute the same bytes in SQL (`octet_length(x) || ':' || x`) and an outside verifier
 * in ten lines of any language. In the API (ChainRow, exports) hashes are lowercase hex.
 */
export const CHAIN_VERSION = 'rl-chain-v1';

/** The prevHash of position 1: binds the chain to its workspace, so two logs cannot be spliced. */
export function genesisHash(workspaceId: string): string {
  return createHash('sha256').update(`review-ledger/chain/v1\n${workspaceId}`).digest('hex');
}

/** The stored form of one event, as the chain covers it. */
export interface ChainFields {
  position: number;
  streamId: string;
  streamRevision: number;
  type: string;
  schemaVersion: number;
  /** JSON text as stored. */
  data: string;
  /** JSON text as stored. */
  metadata: string;
  eventId: string;
}

/** A stored event with its hash as lowercase hex (null on a row written with the chain off). */
export interface ChainRow extends ChainFields {
  hash: string | null;
}

/** The stored form of a hash (32 bytes) from its hex: exports and the API speak hex. */
export const hashBytes = (hex: string): Buffer => Buffer.from(hex, 'hex');

/*
 * Decimal integers are ASCII: their UTF-8 length is their string length. So is prevHash: it is never
 * read as text from storage any more, always the hex of 32 stored bytes (or of the genesis digest).
 */
export function chainHash(prevHash: string, e: ChainFields): string {
  const p = '' + e.position;
  const r = '' + e.streamRevision;
  const v = '' + e.schemaVersion;
  // The same bytes as frame() of each field in order. Each "<length>:" comes from a table of ready
  // strings: one concatenation per prefix instead of a number-to-string conversion and two
  // concatenations (a template literal does those per `${n}:`); 12–15 % less CPU per hash, measured.
  return sha256(
    prefix(prevHash.length) + prevHash + PREFIX[p.length] + p + prefix(byteLength(e.streamId)) + e.streamId + PREFIX[r.length] + r +
      prefix(byteLength(e.type)) + e.type + PREFIX[v.length] + v + prefix(byteLength(e.data)) + e.data +
      prefix(byteLength(e.metadata)) + e.metadata + prefix(byteLength(e.eventId)) + e.eventId,
  );
}

/** "0:", "1:", … "4095:": the frame prefixes of every field shorter than 4 KiB. */
const PREFIX: readonly string[] = Array.from({ length: 4096 }, (_, n) => `${n}:`);
const prefix = (n: number): string => (n < PREFIX.length ? PREFIX[n] : `${n}:`);
const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

/** crypto.hash (Node ≥ 20.12) is the one-shot digest: ~40 % cheaper per event than a Hash object. */
const sha256: (s: string) => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (s) => (crypto as unknown as { hash(alg: string, data: string, enc: 'hex'): string }).hash('sha256', s, 'hex')
    : (s) => createHash('sha256').update(s, 'utf8').digest('hex');

/** Where a store's chain stands: `chainedFrom` > 0 when the log existed before the chain (upgrade). */
export interface ChainInfo {
  /** Events 1..chainedFrom were hashed when the chain was introduced; their earlier history is not attested. */
  chainedFrom: number;
  headPosition: number;
  /** Hash (hex) of the event at headPosition (the genesis hash for an empty log). */
  headHash: string;
}

/**
 * What a clean pass over the log establishes: positions 1..last contiguous, every row chained, every
 * hash recomputed from the stored hash before it (the genesis for position 1) and matching.
 */
export interface CleanScan {
  count: number;
  last: number;
  lastHash: string;
  /** Stored hash at each asked-for (checkpoint) position that exists. */
  hashAt: Map<number, string>;
}

/** A signed checkpoint record as stored: `seq` is its place in the workspace's checkpoint chain, `body` the signed JSON. */
export interface StoredCheckpoint {
  seq: number;
  body: string;
}

/**
 * What the audit needs from a store beyond the port: raw chained rows and the checkpoint table.
 * Checkpoints live in their own table, not in the event log: they are statements ABOUT the log (a
 * checkpoint cannot be inside the chain it signs), and as events they would take positions, wake every
 * watch subscriber and reach every projection for no domain fact.
 */
export interface AuditLogStore {
  /** Rows in global order with their stored texts and chain columns: `after` exclusive. */
  readChainPage(after: number, limit: number): Promise<ChainRow[]>;
  chainInfo(): Promise<ChainInfo>;
  /** Appends a checkpoint with seq = expectedSeq; false when that seq is already taken (another writer). */
  appendCheckpoint(expectedSeq: number, body: string): Promise<boolean>;
  readCheckpoints(): Promise<StoredCheckpoint[]>;
  /**
   * Optional fast pass for `audit verify` (SQLite: worker threads over ranges of the file). Null when
   * it does not apply (small log, one thread, in-memory database) or when anything did not hold: the
   * streaming pass over readChainPage then runs and names the problem.
   */
  chainScan?(wanted: Set<number>, genesis: string, threads: number): Promise<CleanScan | null>;
  /**
   * Optional: a mark that changes whenever rows already stored may have been changed by something other than
   * the appends this store knows of (SQLite: another connection's commit to the file; PostgreSQL: an update
   * or delete on the events table, as its statistics count them). The audit read verifies only the rows past
   * its last verification while the mark stands still, and the whole log once it moved.
   */
  editMark?(): Promise<string>;
}

export function hasAuditLog<T extends object>(store: T): store is T & AuditLogStore {
  return typeof (store as Partial<AuditLogStore>).readChainPage === 'function';
}
