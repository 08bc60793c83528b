import * as os from 'node:os';
import { DomainError } from '../domain-error';
import type { AuditLogStore, ChainRow } from '../events/chain';
import type { EventStore } from '../events/store/port';
import { Checkpoint, CheckpointBody, checkpointDigest, signBody } from './checkpoint';
import type { AuditKey } from './keys';
import { VerifyReport, verifyChain } from './verify';

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

/** The stored hash at a position (the chain head for `position` = head). */
async function hashAt(store: AuditLogStore, position: number): Promise<string> {
  const [row] = await store.readChainPage(position - 1, 1);
  if (!row || row.position !== position || !row.hash) throw new DomainError('audit_chain_broken', `position ${position}: no chained event to checkpoint`);
  return row.hash;
}

/**
 * Writes the next checkpoint of a workspace at its current head when the head moved past the last one
 * (or `force`); the first one is the genesis, at the upgrade point for a log that predates the chain.
 * Returns null when there is nothing to sign or another writer took the seq first.
 */
export async function writeCheckpoint(store: AuditableStore, key: AuditKey, now: Date, options: { force?: boolean; existing?: Checkpoint[] } = {}): Promise<Checkpoint | null> {
  const list = options.existing ?? (await readCheckpointList(store));
  const last = list[list.length - 1];
  const info = await store.chainInfo();
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
  return (await store.appendCheckpoint(cp.seq, JSON.stringify(cp))) ? cp : null;
}

/**
 * Hands a workspace's checkpoint chain from `oldKey` to `newKey`: a key_rotation record at the current
 * head, signed by both. A workspace already handed over is left alone (a resumed rotation).
 */
export async function rotateCheckpointKey(store: AuditableStore, oldKey: AuditKey, newKey: AuditKey, now: Date): Promise<Checkpoint | null> {
  let list = await readCheckpointList(store);
  if (list.length === 0) {
    await writeCheckpoint(store, oldKey, now, { existing: list });
    list = await readCheckpointList(store);
  }
  const last = list[list.length - 1];
  const active = last.kind === 'key_rotation' ? last.newKeyId : last.keyId;
  if (active === newKey.keyId) return null;
  if (active !== oldKey.keyId) throw new DomainError('audit_key_mismatch', `workspace ${store.workspaceId}: signed by key ${active}, neither the current nor the next key`);
  const info = await store.chainInfo();
  const body: CheckpointBody = {
    v: 1, kind: 'key_rotation', workspace: store.workspaceId, seq: last.seq + 1, position: info.headPosition, headHash: info.headHash,
    time: now.toISOString(), keyId: oldKey.keyId, prev: checkpointDigest(last), publicKey: oldKey.publicKey, newKeyId: newKey.keyId, newPublicKey: newKey.publicKey,
  };
  const cp: Checkpoint = { ...body, sig: signBody(body, oldKey.privateKey), newSig: signBody(body, newKey.privateKey) };
  if (!(await store.appendCheckpoint(cp.seq, JSON.stringify(cp)))) throw new DomainError('audit_checkpoint_conflict', `workspace ${store.workspaceId}: another writer added checkpoint #${cp.seq}; run the rotation again`);
  return cp;
}

// Pages of 1,000 rows stay in the young generation: 5,000-row pages spent a fifth of verify in the GC (measured 1.9× slower).
const VERIFY_PAGE = 1000;

export function storePages(store: AuditLogStore): () => AsyncIterable<ChainRow[]> {
  return async function* () {
    let after = 0;
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
export async function verifyStore(store: AuditableStore, trustedPublicKey?: string, options: { threads?: number } = {}): Promise<VerifyReport> {
  const [checkpoints, info] = await Promise.all([readCheckpointList(store), store.chainInfo()]);
  const threads = options.threads ?? verifyThreadsFrom(process.env);
  const fastScan = store.chainScan ? (wanted: Set<number>, genesis: string) => store.chainScan!(wanted, genesis, threads) : undefined;
  return verifyChain({ workspace: store.workspaceId, pages: storePages(store), fastScan, checkpoints, trustedPublicKey, chainedFrom: info.chainedFrom });
}

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

/**
 * Signs checkpoints for the open workspaces on a schedule. Runs in the server; a checkpoint is a
 * separate small write after the fact, never part of an append (appends pay nothing for it).
 */
export class AuditCheckpointer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly last = new Map<string, Checkpoint>();
  /** The last pass's failures by workspace ('*': the workspace list itself); empty after a clean pass. */
  private readonly failures = new Map<string, { since: Date; message: string; code?: string }>();

  constructor(
    private readonly stores: () => Promise<AuditableStore[]>,
    private readonly key: () => AuditKey,
    private readonly clock: () => Date,
    readonly schedule: CheckpointSchedule = DEFAULT_SCHEDULE,
    private readonly onError: (err: unknown) => void = () => undefined,
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

  /** `degraded` while the last pass could not sign some workspace (store away, key mismatch), with why. */
  status(): { status: 'ok' | 'degraded'; reason?: string; since?: string; failures?: Array<{ workspace: string; code?: string; message: string }> } {
    if (this.failures.size === 0) return { status: 'ok' };
    const list = [...this.failures].map(([workspace, f]) => ({ workspace, ...(f.code ? { code: f.code } : {}), message: f.message }));
    const since = new Date(Math.min(...[...this.failures.values()].map((f) => f.since.getTime())));
    return { status: 'degraded', reason: `audit checkpoints not signed: ${list.map((f) => `${f.workspace === '*' ? 'workspace list' : f.workspace}: ${f.message}`).join('; ')}`, since: since.toISOString(), failures: list };
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
    const now = this.clock();
    const stores = await this.stores();
    this.failures.delete('*');
    for (const store of stores) {
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
            continue;
          }
          const head = (await store.chainInfo()).headPosition;
          const due = final
            ? head > last.position
            : head - last.position >= this.schedule.everyEvents || (head > last.position && now.getTime() - Date.parse(last.time) >= this.schedule.everySeconds * 1000);
          if (!due) {
            this.last.set(store.workspaceId, last);
            this.failures.delete(store.workspaceId);
            continue;
          }
        }
        const cp = await writeCheckpoint(store, this.key(), now);
        if (cp) this.last.set(store.workspaceId, cp);
        else this.last.delete(store.workspaceId);
        this.failures.delete(store.workspaceId);
      } catch (err) {
        this.last.delete(store.workspaceId);
        this.fail(store.workspaceId, err);
      }
    }
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
