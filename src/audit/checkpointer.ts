import * as os from 'node:os';
import { DomainError } from '../domain-error';
import type { AuditLogStore, ChainRow } from '../events/chain';
import type { EventStore } from '../events/store/port';
import { Checkpoint, CheckpointBody, checkpointDigest, signBody } from './checkpoint';
import type { AuditKey } from './keys';
import { AuditReceipt, receiptDigest, receiptOf } from './receipt';
import { VerifyReport, WitnessInput, verifyChain } from './verify';
import { appendWitness, readLatestWitnessed, readWitness, witnessFile } from './witness';
import { Slot } from '../slots';

export type AuditableStore = EventStore & AuditLogStore;

/** The refusal (and the log line) of a server whose key is not the one a workspace's chain is signed with. */
export function keyMismatch(workspace: string, active: string | undefined, held: string): DomainError {
  return new DomainError(
    'audit_key_mismatch',
    `workspace ${workspace}: its checkpoints are signed by key ${active}, this server holds key ${held}: it cannot sign them. Give every server on this store the same key (--audit-key-file / REVIEW_LEDGER_AUDIT_KEY_FILE, docs/stores.md), or finish a rotation (audit rotate-key)`,
    { workspace, signedBy: active, held },
  );
}

export async function readCheckpointList(store: AuditLogStore): Promise<Checkpoint[]> {
  return (await store.readCheckpoints()).map((c) => JSON.parse(c.body) as Checkpoint);
}

/** The hash stored at a position; null when no chained event is there. */
export async function storedHashAt(store: AuditLogStore, position: number): Promise<string | null> {
  const [row] = await store.readChainPage(position - 1, 1);
  return row && row.position === position ? row.hash : null;
}

/** The stored hash at a position (the chain head for `position` = head). */
async function hashAt(store: AuditLogStore, position: number): Promise<string> {
  const hash = await storedHashAt(store, position);
  if (!hash) throw new DomainError('audit_chain_broken', `position ${position}: no chained event to checkpoint`);
  return hash;
}

/**
 * Why the store must not be signed: its log or checkpoints went backwards relative to the latest receipt
 * of its witness (`latest`), or null when they still extend it. Checked before every signature, so a
 * rolled-back or rewritten store is never re-anchored by a fresh checkpoint over the rewrite.
 */
export async function witnessRollback(store: AuditableStore, latest: AuditReceipt | null, list: Checkpoint[], headPosition: number): Promise<string | null> {
  if (!latest) return null;
  const what = `the witness holds checkpoint #${latest.seq} at position ${latest.position} (signed ${latest.time})`;
  const held = list.find((c) => c.seq === latest.seq);
  if (!held) return `${what}, but the store's checkpoints ${list.length ? `end at #${list[list.length - 1].seq}` : 'are gone'}: checkpoints were deleted`;
  if (checkpointDigest(held) !== receiptDigest(latest)) return `${what}, but the store's checkpoint #${latest.seq} is another one: it was replaced`;
  const gap = list.findIndex((c, i) => c.seq !== i);
  if (gap >= 0) return `${what}, but the store's checkpoint #${gap} is missing: checkpoints were deleted`;
  if (headPosition < latest.position) return `${what}, but the store's log ends at ${headPosition}: events were removed`;
  if (latest.position > 0) {
    const [row] = await store.readChainPage(latest.position - 1, 1);
    if (!row || row.position !== latest.position || row.hash !== latest.headHash) return `${what}, but the store's chain hash there is ${row?.hash ? `${row.hash.slice(0, 16)}…` : 'missing'}, not ${latest.headHash.slice(0, 16)}…: the log was rewritten`;
  }
  return null;
}

/** A checkpoint signer's witness: the directory (null: none configured). */
export interface SignOptions {
  force?: boolean;
  existing?: Checkpoint[];
  /** The operator's witness directory: the store is checked against it first, the receipt appended after. */
  witnessDir?: string | null;
}

/**
 * Writes the next checkpoint of a workspace at its current head when the head moved past the last one
 * (or `force`); the first one is the genesis, at the upgrade point for a log that predates the chain.
 * Returns null when there is nothing to sign or another writer took the seq first. With a witness
 * directory, refuses (`audit_witness_rollback`) a store that went backwards relative to it, and appends
 * the new checkpoint's receipt to it (fsynced) before returning.
 */
export async function writeCheckpoint(store: AuditableStore, key: AuditKey, now: Date, options: SignOptions = {}): Promise<Checkpoint | null> {
  const list = options.existing ?? (await readCheckpointList(store));
  const last = list[list.length - 1];
  const info = await store.chainInfo();
  if (options.witnessDir) {
    const why = await witnessRollback(store, readLatestWitnessed(options.witnessDir, store.workspaceId), list, info.headPosition);
    if (why) throw new DomainError('audit_witness_rollback', `workspace ${store.workspaceId}: not signing — ${why} (witness ${witnessFile(options.witnessDir, store.workspaceId)}); run \`audit verify\``);
  }
  let body: CheckpointBody;
  if (!last) {
    const position = info.chainedFrom > 0 ? info.chainedFrom : info.headPosition;
    body = {
      v: 1, kind: 'genesis', workspace: store.workspaceId, seq: 0, position,
      headHash: position === info.headPosition ? info.headHash : await hashAt(store, position),
      time: now.toISOString(), keyId: key.keyId, prev: null, publicKey: key.publicKey, chainedFrom: info.chainedFrom,
    };
  } else {
    if (info.headPosition <= last.position && !options.force) return null;
    const active = last.kind === 'key_rotation' ? last.newKeyId : last.keyId;
    if (active !== key.keyId) throw keyMismatch(store.workspaceId, active, key.keyId);
    body = { v: 1, kind: 'checkpoint', workspace: store.workspaceId, seq: last.seq + 1, position: info.headPosition, headHash: info.headHash, time: now.toISOString(), keyId: key.keyId, prev: checkpointDigest(last) };
  }
  const cp: Checkpoint = { ...body, sig: signBody(body, key.privateKey) };
  if (!(await store.appendCheckpoint(cp.seq, JSON.stringify(cp)))) return null;
  if (options.witnessDir) appendWitness(options.witnessDir, receiptOf(cp, key.publicKey));
  return cp;
}

/**
 * Hands a workspace's checkpoint chain from `oldKey` to `newKey`: a key_rotation record at the current
 * head, signed by both. A workspace already handed over is left alone (a resumed rotation).
 */
export async function rotateCheckpointKey(store: AuditableStore, oldKey: AuditKey, newKey: AuditKey, now: Date, witnessDir: string | null = null): Promise<Checkpoint | null> {
  let list = await readCheckpointList(store);
  if (list.length === 0) {
    await writeCheckpoint(store, oldKey, now, { existing: list, witnessDir });
    list = await readCheckpointList(store);
  }
  const last = list[list.length - 1];
  const active = last.kind === 'key_rotation' ? last.newKeyId : last.keyId;
  if (active === newKey.keyId) return null;
  if (active !== oldKey.keyId) throw new DomainError('audit_key_mismatch', `workspace ${store.workspaceId}: signed by key ${active}, neither the current nor the next key`);
  const info = await store.chainInfo();
  if (witnessDir) {
    const why = await witnessRollback(store, readLatestWitnessed(witnessDir, store.workspaceId), list, info.headPosition);
    if (why) throw new DomainError('audit_witness_rollback', `workspace ${store.workspaceId}: not rotating — ${why} (witness ${witnessFile(witnessDir, store.workspaceId)})`);
  }
  const body: CheckpointBody = {
    v: 1, kind: 'key_rotation', workspace: store.workspaceId, seq: last.seq + 1, position: info.headPosition, headHash: info.headHash,
    time: now.toISOString(), keyId: oldKey.keyId, prev: checkpointDigest(last), publicKey: oldKey.publicKey, newKeyId: newKey.keyId, newPublicKey: newKey.publicKey,
  };
  const cp: Checkpoint = { ...body, sig: signBody(body, oldKey.privateKey), newSig: signBody(body, newKey.privateKey) };
  if (!(await store.appendCheckpoint(cp.seq, JSON.stringify(cp)))) throw new DomainError('audit_checkpoint_conflict', `workspace ${store.workspaceId}: another writer added checkpoint #${cp.seq}; run the rotation again`);
  if (witnessDir) appendWitness(witnessDir, receiptOf(cp, oldKey.publicKey));
  return cp;
}

// Pages of 1,000 rows stay in the young generation: 5,000-row pages spent a fifth of verify in the GC (measured 1.9× slower).
const VERIFY_PAGE = 1000;

/** The store's chained rows in pages, from past position `from` (0: the whole log). */
export function storePages(store: AuditLogStore, from = 0): () => AsyncIterable<ChainRow[]> {
  return async function* () {
    let after = from;
    for (;;) {
      const page = await store.readChainPage(after, VERIFY_PAGE);
      if (page.length === 0) return;
      yield page;
      after = page[page.length - 1].position;
    }
  };
}

/**
 * Threads `audit verify` may use: REVIEW_LEDGER_VERIFY_THREADS (1 = the streaming pass only), else the
 * machine's available parallelism, at most 4.
 */
export function verifyThreadsFrom(env: NodeJS.ProcessEnv): number {
  const raw = env.REVIEW_LEDGER_VERIFY_THREADS;
  if (raw === undefined || raw === '') return Math.min(4, os.availableParallelism());
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new DomainError('invalid_config', `REVIEW_LEDGER_VERIFY_THREADS: must be a positive integer, got "${raw}"`);
  return n;
}

/**
 * Verifies a workspace's log as stored. `trustedPublicKey`: the server's current key (base64 SPKI).
 * A store with a fast pass (SQLite: worker threads over ranges) is checked with it first; only a log
 * where that pass finds anything wrong, or one it does not apply to, is read by the streaming pass.
 */
export async function verifyStore(store: AuditableStore, trustedPublicKey?: string, options: { threads?: number; witnesses?: WitnessInput[]; witnessDir?: string | null } = {}): Promise<VerifyReport> {
  const [checkpoints, info] = await Promise.all([readCheckpointList(store), store.chainInfo()]);
  const threads = options.threads ?? verifyThreadsFrom(process.env);
  const fastScan = store.chainScan ? (wanted: Set<number>, genesis: string) => store.chainScan!(wanted, genesis, threads) : undefined;
  const witnesses = [...(options.witnesses ?? []), ...(options.witnessDir ? [witnessOf(options.witnessDir, store.workspaceId)] : [])];
  return verifyChain({ workspace: store.workspaceId, pages: storePages(store), fastScan, checkpoints, trustedPublicKey, chainedFrom: info.chainedFrom, witnesses });
}

/** The witness directory's receipts of a workspace, as verify takes them. */
export const witnessOf = (dir: string, workspaceId: string): WitnessInput => ({ source: `witness ${witnessFile(dir, workspaceId)}`, receipts: readWitness(dir, workspaceId) });

export interface CheckpointSchedule {
  /** A checkpoint once the head is this many events past the last one (default 1000). */
  everyEvents: number;
  /** …or once this many seconds passed since the last one and the head moved (default 60). */
  everySeconds: number;
  /** How often the heads are looked at, ms (default 1000). */
  tickMs: number;
}

export const DEFAULT_SCHEDULE: CheckpointSchedule = { everyEvents: 1000, everySeconds: 60, tickMs: 1000 };

/** REVIEW_LEDGER_CHECKPOINT_EVENTS, REVIEW_LEDGER_CHECKPOINT_SECONDS (positive numbers), else the defaults. */
export function checkpointScheduleFrom(env: NodeJS.ProcessEnv): CheckpointSchedule {
  const num = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new DomainError('invalid_config', `${name}: must be a positive number, got "${raw}"`);
    return n;
  };
  const everySeconds = num('REVIEW_LEDGER_CHECKPOINT_SECONDS', DEFAULT_SCHEDULE.everySeconds);
  return { everyEvents: Math.ceil(num('REVIEW_LEDGER_CHECKPOINT_EVENTS', DEFAULT_SCHEDULE.everyEvents)), everySeconds, tickMs: Math.min(DEFAULT_SCHEDULE.tickMs, everySeconds * 1000) };
}

/** A workspace the checkpointer refuses to sign, and why (audit status, /health). */
export interface SigningRefusal {
  workspace: string;
  reason: string;
  /** Server time of the first refusal with this reason. */
  since: string;
}

/** The server's checkpointer, for /health and tests. */
export const AUDIT_CHECKPOINTER_SERVICE = new Slot<AuditCheckpointer>('audit.checkpointer');

/**
 * Signs checkpoints for the open workspaces on a schedule. Runs in the server; a checkpoint is a
 * separate small write after the fact, never part of an append (appends pay nothing for it). With a
 * witness directory, each signature is preceded by the witness check: a store that went backwards is not
 * signed again (a refusal, logged once and shown by `status()`, never a thrown error from the timer).
 */
export class AuditCheckpointer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly last = new Map<string, Checkpoint>();
  /** The last pass's failures by workspace ('*': the workspace list itself); empty after a clean pass. */
  private readonly failures = new Map<string, { since: Date; message: string; code?: string }>();
  /** Workspaces whose store went backwards relative to the witness (or whose witness cannot be read). */
  private readonly refused = new Map<string, SigningRefusal>();

  constructor(
    private readonly stores: () => Promise<AuditableStore[]>,
    private readonly key: () => AuditKey,
    private readonly clock: () => Date,
    readonly schedule: CheckpointSchedule = DEFAULT_SCHEDULE,
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly witnessDir: string | null = null,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.schedule.tickMs).unref();
  }

  /**
   * One pass over the workspaces (also called directly by tests). It never rejects: the timer calls it
   * with nothing to catch a rejection, and an outage of the store must not end the process. A failure
   * is logged (onError), kept for status() (degraded), and the next tick simply tries again.
   */
  tick(): Promise<void> {
    this.running ??= this.pass()
      .catch((err) => this.fail('*', err))
      .finally(() => (this.running = null));
    return this.running;
  }

  /**
   * Signs nothing: compares each workspace's active checkpoint key with the one this server holds and
   * records (logs once, status()) a mismatch. The server runs it at start, so a server given the wrong
   * key says so at once rather than at its first due checkpoint. Never rejects.
   */
  async checkKeys(): Promise<void> {
    try {
      const held = this.key().keyId;
      for (const store of await this.stores()) {
        try {
          const last = (await readCheckpointList(store)).pop();
          const active = last && (last.kind === 'key_rotation' ? last.newKeyId : last.keyId);
          if (last && active !== held) this.fail(store.workspaceId, keyMismatch(store.workspaceId, active, held));
        } catch (err) {
          this.fail(store.workspaceId, err);
        }
      }
    } catch (err) {
      this.fail('*', err);
    }
  }

  /**
   * `degraded` while the last pass could not sign some workspace (store away, key mismatch) or the witness
   * refuses one (its store went backwards), with why; whether a witness is configured, and the refusals.
   */
  status(): { status: 'ok' | 'degraded'; reason?: string; since?: string; failures?: Array<{ workspace: string; code?: string; message: string }>; witness: boolean; refused: SigningRefusal[] } {
    const refused = [...this.refused.values()];
    const witness = { witness: this.witnessDir !== null, refused };
    if (this.failures.size === 0 && refused.length === 0) return { status: 'ok', ...witness };
    const list = [...this.failures].map(([workspace, f]) => ({ workspace, ...(f.code ? { code: f.code } : {}), message: f.message }));
    const times = [...[...this.failures.values()].map((f) => f.since.getTime()), ...refused.map((r) => Date.parse(r.since))];
    const reasons = [
      ...(list.length ? [`audit checkpoints not signed: ${list.map((f) => `${f.workspace === '*' ? 'workspace list' : f.workspace}: ${f.message}`).join('; ')}`] : []),
      ...(refused.length ? [`audit checkpoints are not being signed for ${refused.length} workspace(s): their log or checkpoints went backwards relative to the audit witness, or it cannot be read (see the server log and \`audit verify\`)`] : []),
    ];
    return { status: 'degraded', reason: reasons.join('; '), since: new Date(Math.min(...times)).toISOString(), ...(list.length ? { failures: list } : {}), ...witness };
  }

  private fail(workspace: string, err: unknown): void {
    const code = (err as { code?: unknown }).code;
    const before = this.failures.get(workspace);
    this.failures.set(workspace, { since: before?.since ?? new Date(), message: (err as Error)?.message ?? String(err), ...(typeof code === 'string' ? { code } : {}) });
    // Logged once per workspace and outage, not once a tick.
    if (!before) this.onError(err);
  }

  /** `final`: sign wherever the head moved past the last checkpoint, whatever the schedule says (shutdown). */
  private async pass(final = false): Promise<void> {
    const stores = await this.stores();
    this.failures.delete('*');
    for (const store of stores) await this.passOne(store, final);
  }

  /**
   * Checks one store's key and signs it when due (`final`: whenever its head moved). The server calls it
   * for a workspace about to close (idle), and once for each workspace at start: a closed workspace is in
   * no scheduled pass. Never rejects.
   */
  async passOne(store: AuditableStore, final = false): Promise<void> {
    const now = this.clock();
    try {
      const last = this.last.get(store.workspaceId) ?? (await readCheckpointList(store)).pop();
      if (last) {
        // A chain signed by a key this server does not hold: said (once, and in status()) whether or
        // not anything is due, so a server started with the wrong key reports it at start.
        const active = last.kind === 'key_rotation' ? last.newKeyId : last.keyId;
        const held = this.key().keyId;
        if (active !== held) {
          this.last.set(store.workspaceId, last);
          this.fail(store.workspaceId, keyMismatch(store.workspaceId, active, held));
          return;
        }
        const head = (await store.chainInfo()).headPosition;
        const due = final
          ? head > last.position
          : head - last.position >= this.schedule.everyEvents || (head > last.position && now.getTime() - Date.parse(last.time) >= this.schedule.everySeconds * 1000);
        if (!due) {
          this.last.set(store.workspaceId, last);
          this.failures.delete(store.workspaceId);
          return;
        }
      }
      const cp = await writeCheckpoint(store, this.key(), now, { witnessDir: this.witnessDir });
      this.refused.delete(store.workspaceId);
      if (cp) this.last.set(store.workspaceId, cp);
      else this.last.delete(store.workspaceId);
      this.failures.delete(store.workspaceId);
    } catch (err) {
      this.last.delete(store.workspaceId);
      // A witness that shows a rollback, or cannot be read, stops signing for the workspace.
      if (err instanceof DomainError && (err.code === 'audit_witness_rollback' || err.code === 'audit_witness_unreadable')) {
        // Said once per reason, not once a second: the pass tries again and refuses again until an operator acts.
        const before = this.refused.get(store.workspaceId);
        if (before?.reason === err.message) return;
        this.refused.set(store.workspaceId, { workspace: store.workspaceId, reason: err.message, since: now.toISOString() });
        this.onError(err);
        return;
      }
      this.fail(store.workspaceId, err);
    }
  }

  /** Forgets what it knew of a workspace whose store closed (its next open reads the checkpoints again). */
  forget(workspaceId: string): void {
    this.last.delete(workspaceId);
  }

  /**
   * Stops the schedule. `final` (the server's shutdown): one last pass that signs every workspace whose
   * head moved since its last checkpoint, so a clean stop leaves no unsigned tail (docs/audit.md, "the
   * window"); a crash or kill -9 still leaves up to one interval unsigned.
   */
  async stop(options: { final?: boolean } = {}): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    if (options.final) await this.pass(true).catch((err) => this.fail('*', err));
  }
}
