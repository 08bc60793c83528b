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

/** The stored form of a hash (32 bytes) from its hex, and back: exports and the API speak hex. */
export const hashBytes = (hex: string): Buffer => Buffer.from(hex, 'hex');
export const hashHex = (stored: Buffer | Uint8Array | string | null | undefined): string | null =>
  stored == null ? null : typeof stored === 'string' ? stored : Buffer.isBuffer(stored) ? stored.toString('hex') : Buffer.from(stored).toString('hex');

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
}

export function hasAuditLog<T extends object>(store: T): store is T & AuditLogStore {
  return typeof (store as Partial<AuditLogStore>).readChainPage === 'function';
}

/** What ChainMaterial needs of one pending append: the fields known before the write lock. */
export interface ChainAppend {
  streamId: string;
  events: ReadonlyArray<{ eventId: string; type: string; schemaVersion: number }>;
  /** data/metadata JSON texts exactly as they will be stored. */
  encoded: ReadonlyArray<{ data: string; metadata: string }>;
}

/** Where one append's material sits in ChainMaterial's buffer (valid for one `prepare` only). */
export interface ChainSlots {
  generation: number;
  /** The framed streamId, "<byte length>:<streamId>", and how many more UTF-8 bytes than characters it has. */
  stream: string;
  streamExtra: number;
  /** Per event: tail start, tail end (the framed type … eventId). Each tail has room for its header before it. */
  tails: number[];
}

/*
 * Room for a header in front of each tail besides the framed streamId: "64:" + 64 hex, then position and
 * revision frames of at most "16:" + 16 digits each (safe integers).
 */
const FIXED_HEADER_MAX = 3 + 64 + 19 + 19;

/**
 * The chain's material for a whole group commit, encoded once (docs/audit.md, "Figures"). chainHash
 * builds a ~700-character string per event and crypto.hash flattens and UTF-8-encodes it: per event one
 * rope, one flat copy, one encoding call and their garbage. Everything in an event's material except
 * prevHash, position and revision is known before the write lock, so `prepare` frames those parts of
 * every event of every pending append into ONE string and writes it into one buffer with one call,
 * leaving room in front of each event's part. Inside the lock, `hash` writes the short header (prevHash,
 * position, framed streamId, revision) into that room with one more write and hashes the bytes in
 * place. The bytes hashed are exactly chainHash's: same digests, same format. Positions are known only
 * in order: the header is written at hash time with the position the event gets then, so a refused
 * append rolled back by its savepoint changes nothing for the ones after it.
 */
export class ChainMaterial {
  private buf: Buffer = Buffer.allocUnsafeSlow(64 * 1024);
  private generation = 0;

  /** Slots per append (same order), or null when chainHash should do it (a field not a string, a huge batch). */
  prepare(appends: readonly ChainAppend[]): ChainSlots[] | null {
    const generation = ++this.generation;
    // Optimistic pass: frame with string lengths, which are the UTF-8 byte lengths iff every text is
    // ASCII. The UTF-8 write tells: it writes exactly one byte per character iff all are ASCII (any
    // other character takes more bytes than UTF-16 units), given room for 3 bytes per unit. Otherwise
    // frame again with real byte lengths (rare: ids and JSON texts are ASCII).
    let laid = this.layout(appends, generation, false);
    if (!laid) return null;
    if (!this.room(laid.text.length * 3)) return null;
    if (this.buf.write(laid.text, 0, 'utf8') !== laid.text.length) {
      laid = this.layout(appends, generation, true)!;
      if (!this.room(laid.bytes) || this.buf.write(laid.text, 0, 'utf8') !== laid.bytes) return null;
    }
    return laid.out;
  }

  private room(bytes: number): boolean {
    if (bytes > MATERIAL_MAX) return false;
    if (bytes > this.buf.length) this.buf = Buffer.allocUnsafeSlow(Math.max(bytes, this.buf.length * 2));
    return true;
  }

  /** Null when a field is not a string (chainHash then refuses that append alone, as before). */
  private layout(appends: readonly ChainAppend[], generation: number, exact: boolean): { text: string; bytes: number; out: ChainSlots[] } | null {
    const len = exact ? byteLength : (s: string) => s.length;
    let text = '';
    let at = 0;
    const out: ChainSlots[] = new Array(appends.length);
    for (let a = 0; a < appends.length; a++) {
      const { streamId, events, encoded } = appends[a];
      if (typeof streamId !== 'string') return null;
      // Exact always: the framed streamId is written with each header, not with the material text,
      // so the write below cannot tell whether it is ASCII.
      const sl = byteLength(streamId);
      const stream = prefix(sl) + streamId;
      const pad = padding(FIXED_HEADER_MAX + stream.length + (sl - streamId.length));
      const tails: number[] = new Array(events.length * 2);
      for (let i = 0; i < events.length; i++) {
        const e = events[i];
        const { data, metadata } = encoded[i];
        if (typeof e.type !== 'string' || typeof e.eventId !== 'string' || typeof data !== 'string' || typeof metadata !== 'string') return null;
        const v = '' + e.schemaVersion;
        const tl = len(e.type);
        const dl = len(data);
        const ml = len(metadata);
        const il = len(e.eventId);
        const tp = prefix(tl);
        const dp = prefix(dl);
        const mp = prefix(ml);
        const ip = prefix(il);
        text += pad + tp + e.type + PREFIX[v.length] + v + dp + data + mp + metadata + ip + e.eventId;
        at += pad.length;
        tails[2 * i] = at;
        at += tp.length + tl + PREFIX[v.length].length + v.length + dp.length + dl + mp.length + ml + ip.length + il;
        tails[2 * i + 1] = at;
      }
      out[a] = { generation, stream, streamExtra: sl - streamId.length, tails };
    }
    return { text, bytes: at, out };
  }

  /**
   * chainHash(prevHash, event i of the append with these slots at `position` and `revision`), from the
   * prepared bytes; null when the slots are from an earlier `prepare` (the caller uses chainHash).
   */
  hash(slots: ChainSlots, i: number, prevHash: string, position: number, revision: number): string | null {
    if (slots.generation !== this.generation || prevHash.length !== 64) return null;
    const p = '' + position;
    const r = '' + revision;
    // One write for the whole header: JavaScript byte loops (64 charCodeAt for prevHash) cost more
    // instructions than a native write (callgrind).
    const header = '64:' + prevHash + PREFIX[p.length] + p + slots.stream + PREFIX[r.length] + r;
    const bytes = header.length + slots.streamExtra;
    const start = slots.tails[2 * i] - bytes;
    if (this.buf.write(header, start, bytes, slots.streamExtra === 0 ? 'latin1' : 'utf8') !== bytes) return null;
    // A fresh view over the buffer (allocUnsafeSlow: byteOffset 0) is cheaper than subarray(), which
    // goes through the species constructor.
    return sha256Bytes(new Uint8Array(this.buf.buffer, start, slots.tails[2 * i + 1] - start));
  }
}

/** Above this a batch's material is not kept in one reused buffer: chainHash per event instead. */
const MATERIAL_MAX = 16 * 1024 * 1024;

const PADS: string[] = [];
/** A filler string of n characters (its bytes are overwritten by the header before hashing). */
function padding(n: number): string {
  return n < 4096 ? (PADS[n] ??= ' '.repeat(n)) : ' '.repeat(n);
}

const sha256Bytes: (b: Uint8Array) => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (b) => (crypto as unknown as { hash(alg: string, data: Uint8Array, enc: 'hex'): string }).hash('sha256', b, 'hex')
    : (b) => createHash('sha256').update(b).digest('hex');
