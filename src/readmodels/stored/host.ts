import type { RecordedEvent } from '../../events/envelope';
import type { EventStore, Subscription } from '../../events/store/port';
import type { ApplyTx, ReadModel, Row, TableSpec } from './model';
import { keyString, ReadModelStorage, Slot, tableName, WriteSet } from './storage';
import type { BulkBuilder, BulkDialect } from './bulk';
import { hasUpcasters } from '../../events/upcasters';
import { randomUUID } from 'node:crypto';

/** Events folded per transaction: big enough to amortize the commit, small enough to keep lag low. */
const BATCH = 5000;
/**
 * Events folded per transaction of a building slot (a rebuild, a new version): nobody waits on its
 * lag, so fewer, larger commits than live ones; they run behind the next fold (on SQLite's writer
 * thread). 10k rather than 20k: a smaller page of decoded events dies younger (measured at 200k events,
 * three alternating rounds: the main thread's CPU 3.8–4.2 s at 20k, 3.6–3.7 s at 10k and 5k). Memory is
 * bounded by two batches' writes (one committing, one being folded).
 */
const REBUILD_BATCH = 10_000;
/**
 * Events per transaction of a set-based build (src/readmodels/stored/bulk.ts): its statements scan the chunk's
 * range of the log once each, and the JS part folds only a few percent of it.
 */
const BULK_CHUNK = 25_000;
/** Pages of the log kept for the models at the same position (see ReadModelHost's read). */
const PAGES_KEPT = 4;
/** Chunks of JS events kept for the set-based builds behind the one that read them (see sharedBulkRead). */
const BULK_PAGES_KEPT = 4;
/** How far behind (in chunks) a set-based build may be for the one ahead to read its JS events too. */
const BULK_SHARE_CHUNKS = 2;
/** The first chunk of a set-based build of several is this fraction of the others (see bulkStep). */
const FIRST_CHUNK_SHARE = 5;
/** Rows read back by `apply` and kept per slot (members, tokens, …); cleared, not evicted, when full. */
const CACHE_ROWS = 100_000;
/**
 * Storage shared by several processes (PostgreSQL): one of them folds a model's active slot at a time, under a
 * lease of LEASE_MS that it renews while it folds; the others follow its checkpoint. A process that saw the
 * lease taken asks again after FOLLOW_RECHECK_MS; a query that has waited IMPATIENT_MS for the holder folds
 * itself (the checkpoint's compare-and-set keeps that exact: one of the two commits, the other starts again).
 */
const LEASE_MS = 3000;
const FOLLOW_RECHECK_MS = 1000;
const FOLLOW_POLL_MS = 5;
const IMPATIENT_MS = 1000;
/** While another process builds a slot this one's caller waits on (settle), how often this one looks whether it was promoted. */
const BUILD_FOLLOW_POLL_MS = 50;
/**
 * A live round whose events wrote no row (most of them: an append rarely touches the audit, history or facts
 * tables) moves the active slot's checkpoint in memory only; it is stored with the next round that writes, or
 * CHECKPOINT_DEFER_MS after the first such round. Storing it every round was one transaction per model per
 * group commit, nearly all moving nothing but the checkpoint (on PostgreSQL four round trips each: server CPU
 * per command roughly doubled while the models were live). Exact either way: the rows stored answer every
 * position between the stored checkpoint and the folded one (none of those events wrote), and a process that
 * dies before storing it folds those events again, writing nothing. What it costs: another process reading
 * the stored checkpoint (a following server's query, `read-models status`) sees it up to this much later.
 */
const CHECKPOINT_DEFER_MS = 50;

export interface ReadModelHostOptions {
  batch?: number;
  cacheRows?: number;
  bulk?: boolean;
  bulkChunk?: number;
  /** Shared storage: how long a folding lease lasts (LEASE_MS), and how long a query waits for its holder before this process folds (IMPATIENT_MS). */
  leaseMs?: number;
  patienceMs?: number;
  /** How long a checkpoint moved by rounds that wrote nothing may stay unstored (CHECKPOINT_DEFER_MS; 0: stored every round). */
  checkpointDeferMs?: number;
}

export interface RebuildProgress {
  name: string;
  position: number;
  head: number;
  events: number;
  elapsedMs: number;
}

/**
 * Rows `apply` read back or wrote, per table and primary key, of one slot (null: known absent).
 * `whole`: the slot was created empty by this runner and every row it stored since is here, for each
 * table not in `incomplete` (written before `apply` first read it) — so a miss is an absent row, and a
 * build from 0 reads nothing back from storage (on PostgreSQL each read was a round trip). Cleared when
 * full, which ends `whole`.
 */
class SlotCache {
  private readonly tables = new Map<string, Map<string, Row | null>>();
  size = 0;
  readonly incomplete = new Set<string>();

  constructor(public whole: boolean) {}

  table(name: string): Map<string, Row | null> {
    let t = this.tables.get(name);
    if (!t) this.tables.set(name, (t = new Map()));
    return t;
  }

  /** The row, null when known absent, undefined when unknown (read storage). */
  get(table: string, key: string): Row | null | undefined {
    const hit = this.tables.get(table)?.get(key);
    if (hit !== undefined) return hit;
    return this.whole && !this.incomplete.has(table) ? null : undefined;
  }

  set(table: string, key: string, row: Row | null): void {
    const t = this.table(table);
    const before = t.size;
    t.set(key, row);
    this.size += t.size - before;
  }

  clear(): void {
    this.tables.clear();
    this.size = 0;
    this.whole = false;
  }
}

const sameSlot = (a: Slot, b: Slot): boolean => a.name === b.name && a.version === b.version && a.generation === b.generation;

class BatchTx implements ApplyTx {
  readonly writes: WriteSet = new Map();

  constructor(private readonly specs: Map<string, TableSpec>, private readonly cache: SlotCache, private readonly read: (spec: TableSpec, key: Row) => Promise<Row | undefined>, private readonly readTables: Set<string>) {}

  private spec(table: string): TableSpec {
    const s = this.specs.get(table);
    if (!s) throw new Error(`read model: no table "${table}"`);
    return s;
  }

  private set(table: string, key: Row, row: Row | null): void {
    const spec = this.spec(table);
    let w = this.writes.get(table);
    if (!w) this.writes.set(table, (w = new Map()));
    w.set(keyString(spec, key), { key, row });
  }

  put(table: string, row: Row): void {
    this.set(table, row, row);
  }

  delete(table: string, key: Row): void {
    this.set(table, key, null);
  }

  get(table: string, key: Row): Row | undefined | Promise<Row | undefined> {
    const spec = this.spec(table);
    this.readTables.add(table);
    const k = keyString(spec, key);
    const written = this.writes.get(table)?.get(k);
    if (written) return written.row ?? undefined;
    const cached = this.cache.get(table, k);
    if (cached !== undefined) return cached ?? undefined;
    return this.read(spec, key).then((r) => {
      this.cache.set(table, k, r ?? null);
      return r;
    });
  }
}

/**
 * Keeps one model's slots current: the active slot (ready, answers queries) and, while one is being
 * built (a new version, or `read-models rebuild`), the building slot beside it. The building slot
 * replaces the active one only once it has caught up with the head (blue/green), in one transaction
 * that also drops the old tables; until then the old slot keeps answering.
 */
class ModelRunner {
  active: Slot | null = null;
  building: Slot | null = null;
  /** A newer version of this model exists (another process runs newer code): this one stands aside. */
  superseded = false;
  private readonly specs: Map<string, TableSpec>;
  private readonly caches = new Map<string, SlotCache>();
  /** Tables `apply` has read rows of (only these are worth caching). */
  private readonly readTables = new Set<string>();
  private waiters: Array<{ position: number; since: number; resolve: () => void; reject: (e: unknown) => void }> = [];
  /** Whether this process holds the folding lease (storage.lead), and until when (this process's clock) it need not ask again. */
  private leading = false;
  private leadKnownUntil = 0;
  /** Another process folded the active slot since this one last loaded it: reload before folding. */
  private followed = false;
  /**
   * The lease on the building slot (storage.lead, named after the slot — `buildLease`) this process holds, if
   * any, and until when (its clock) it need not ask again. Two servers that start a new model version together
   * both create its first slot (the same one): only the holder builds it, the other waits for its promotion.
   */
  private buildLeaseState: { name: string; leads: boolean; until: number } | null = null;
  /**
   * The active slot's checkpoint as stored, while rounds that wrote nothing moved `active.position` past it
   * (see CHECKPOINT_DEFER_MS), and since when; null: `active.position` is what is stored.
   */
  private unstored: { stored: number; since: number } | null = null;
  /** Called when a checkpoint is first left unstored: the host wakes the loop after `ms` to store it. */
  onDeferred: ((ms: number) => void) | null = null;
  private promoted: Array<() => void> = [];
  onProgress: ((p: RebuildProgress) => void) | null = null;
  private buildStart = { at: 0, from: 0 };
  /**
   * The building slot's last batch, committing while the next one is folded (storage.commit `behind`):
   * at most one per runner; the slot's position moves to `to` once it committed.
   */
  private inflight: { slot: Slot; to: number; done: Promise<boolean> } | null = null;
  /**
   * The building slot is built set-based (model.bulk): created empty by this runner, and built by these
   * statements only since. Ends when it caught up with the head (or on any reload): later events are
   * folded by `apply`, from storage.
   */
  private bulk: { slot: Slot; builder: BulkBuilder; dialect: BulkDialect; read: (after: number, until: number, types: readonly string[], where?: string) => Promise<RecordedEvent[]> } | null = null;
  /**
   * The host's read of a chunk's JS events for every model building set-based at once (one scan of the
   * chunk for all of them); null when it cannot share (the models' types overlap): read alone.
   */
  sharedBulkRead: ((from: number, to: number) => Promise<RecordedEvent[]> | null) | null = null;

  /** The events this runner's set-based build folds in JS: their types and the predicate narrowing them (null: not building set-based). */
  get bulkSpec(): { from: number; types: readonly string[]; where?: string } | null {
    const b = this.bulk;
    if (!b) return null;
    // Where its next chunk starts: after the batch in flight, else at the slot's checkpoint.
    const from = this.inflight?.slot === b.slot ? this.inflight.to : b.slot.position;
    return { from, types: b.builder.js.types, where: b.builder.js.where?.(b.dialect) };
  }

  constructor(readonly model: ReadModel, private readonly store: EventStore, private readonly storage: ReadModelStorage, private readonly batch: number, private readonly buildBatch: number, private readonly readPage: (after: number, max: number) => Promise<RecordedEvent[]>, private readonly cacheRows = CACHE_ROWS, private readonly bulkBuilds = true, private readonly bulkChunk = BULK_CHUNK, private readonly holder = '', private readonly leaseMs = LEASE_MS, private readonly patienceMs = IMPATIENT_MS, private readonly deferMs = CHECKPOINT_DEFER_MS) {
    this.specs = new Map(model.tables.map((t) => [t.name, t]));
  }

  async load(): Promise<void> {
    this.bulk = null;
    this.unstored = null;
    const slots = await this.storage.slots(this.model.name);
    this.superseded = slots.some((s) => s.version > this.model.version);
    const mine = slots.filter((s) => s.version === this.model.version);
    const ready = mine.filter((s) => s.ready);
    this.active = ready[ready.length - 1] ?? null;
    const newer = mine.filter((s) => !s.ready && (!this.active || s.generation > this.active.generation));
    this.building = newer[newer.length - 1] ?? null;
    if (!this.active && !this.building && !this.superseded) await this.startBuilding(1);
    else if (this.building) this.buildStart = { at: Date.now(), from: this.building.position };
  }

  async startBuilding(generation: number): Promise<Slot> {
    const slot: Slot = { name: this.model.name, version: this.model.version, generation, position: 0, ready: false };
    await this.storage.createSlot(slot, this.model.tables);
    // Created empty here: its cache starts whole (see SlotCache).
    this.caches.set(`${slot.version}/${slot.generation}`, new SlotCache(slot.position === 0));
    this.building = slot;
    this.buildStart = { at: Date.now(), from: 0 };
    this.bulk = this.bulkFor(slot);
    return slot;
  }

  /** A set-based build of `slot`, when the model has one, the storage reaches the log and the store reads by type. */
  private bulkFor(slot: Slot): ModelRunner['bulk'] {
    const typed = (this.store as { readTypedPage?: (after: number, until: number, types: readonly string[], where?: string) => RecordedEvent[] | Promise<RecordedEvent[]> }).readTypedPage;
    if (!this.bulkBuilds || !this.model.bulk || !typed) return null;
    const dialect = this.storage.bulkDialect(slot);
    if (!dialect) return null;
    const builder = this.model.bulk();
    // Statements read the raw stored data: a type with older versions upcast on read is folded in JS.
    if (builder.sqlTypes.some(hasUpcasters)) return null;
    return { slot, builder, dialect, read: async (after, until, types, where) => typed.call(this.store, after, until, types, where) };
  }

  /** Drops the slot being built (a rebuild starts over) with the rows cached for it. */
  async dropBuilding(): Promise<void> {
    if (!this.building) return;
    // Its last batch must not commit into the tables dropped here.
    await this.inflight?.done.catch(() => undefined);
    this.inflight = null;
    await this.storage.dropSlot(this.building, this.model.tables);
    this.caches.delete(`${this.building.version}/${this.building.generation}`);
    this.building = null;
    this.bulk = null;
    await this.resignBuild();
  }

  /** Slots whose rows this runner holds in memory (the active one and one being built, at most). */
  get cachedSlots(): number {
    return this.caches.size;
  }

  /** The generation a rebuild gets: one past every generation of this version. */
  async nextGeneration(): Promise<number> {
    const slots = (await this.storage.slots(this.model.name)).filter((s) => s.version === this.model.version);
    return Math.max(0, ...slots.map((s) => s.generation)) + 1;
  }

  private cacheOf(slot: Slot): SlotCache {
    const id = `${slot.version}/${slot.generation}`;
    let c = this.caches.get(id);
    if (!c) this.caches.set(id, (c = new SlotCache(false)));
    return c;
  }

  /**
   * The batch in flight for `slot` has committed: its position moves on. False when the commit found the
   * checkpoint moved by another process (or failed): the state is loaded again from what is stored.
   */
  private async landInflight(): Promise<boolean> {
    const f = this.inflight;
    if (!f) return true;
    this.inflight = null;
    let ok: boolean;
    try {
      ok = await f.done;
    } catch (err) {
      // The batch folded after it (cached already) is not stored: start again from what is.
      this.caches.clear();
      await this.load();
      throw err;
    }
    if (!ok) {
      this.caches.clear();
      await this.load();
      return false;
    }
    f.slot.position = f.to;
    return true;
  }

  /**
   * One chunk of a set-based build: the events `apply` must fold (read by type, decoded), then, in one
   * transaction committing behind the next chunk, their writes, the builder's statements over the chunk
   * and the checkpoint. Once caught up with the head the build goes on (and is promoted) the usual way.
   */
  private async bulkStep(slot: Slot, bulk: NonNullable<ModelRunner['bulk']>): Promise<boolean> {
    const pending = this.inflight?.slot === slot ? this.inflight : null;
    const from = pending ? pending.to : slot.position;
    const head = await this.store.headPosition();
    if (from >= head) {
      if (pending && !(await this.landInflight())) return true;
      // Rows the statements wrote are not cached: from now on `apply` reads what it misses from storage.
      this.bulk = null;
      this.cacheOf(slot).clear();
      return true;
    }
    // A build's first chunk is smaller when more than one follows: its statements (on the writer thread)
    // wait for its JS part, so the thread starts sooner; a small log is still one chunk.
    const size = from === 0 && head > this.bulkChunk ? Math.ceil(this.bulkChunk / FIRST_CHUNK_SHARE) : this.bulkChunk;
    const to = Math.min(from + size, head);
    const { builder, dialect } = bulk;
    const cache = this.cacheOf(slot);
    const shared = this.sharedBulkRead?.(from, to) ?? null;
    const mine = new Set(builder.js.types);
    const events = shared ? (await shared).filter((e) => mine.has(e.type) && this.model.relevant(e)) : (await bulk.read(from, to, builder.js.types, builder.js.where?.(dialect))).filter((e) => this.model.relevant(e));
    const settled = pending ? pending.done.catch(() => false) : null;
    const sqlTables = new Set(builder.sqlTables);
    const read = async (spec: TableSpec, key: Row): Promise<Row | undefined> => {
      // Not cached, nor readable before the chunks in flight commit: a builder that names such a table is wrong.
      if (sqlTables.has(spec.name)) throw new Error(`read model ${this.model.name}: a set-based build read table "${spec.name}", which only its statements write`);
      await settled;
      return this.storage.getRow(slot, spec, key);
    };
    if (this.model.prefetch && !(cache.whole && cache.incomplete.size === 0)) await this.prefetch(slot, events.filter((e) => this.model.prefetch!(e).every((p) => !sqlTables.has(p.table))), cache, settled);
    const tx = new BatchTx(this.specs, cache, read, this.readTables);
    for (const e of events) await this.model.apply(e, tx);
    for (const t of sqlTables) tx.writes.delete(t);
    const statements = builder.statements(dialect, from, to, events);
    // Its `prepare` may start while the chunk in flight commits (it reads the log alone).
    this.storage.prepareAhead?.(slot, statements);
    if (pending && !(await this.landInflight())) return true;
    const committed = this.storage.commit(slot, this.model.tables, tx.writes, slot.position, to, false, to >= head ? 'last' : true, statements);
    this.inflight = { slot, to, done: committed };
    committed.catch(() => undefined);
    this.remember(cache, tx.writes);
    return true;
  }

  /** Folds the next page of events into `slot`. False when there was nothing to fold. */
  private async step(slot: Slot): Promise<boolean> {
    if (this.bulk && this.bulk.slot === slot) return this.bulkStep(slot, this.bulk);
    const pending = this.inflight?.slot === slot ? this.inflight : null;
    const max = slot === this.building ? this.buildBatch : this.batch;
    const events = await this.readPage(pending ? pending.to : slot.position, max);
    if (events.length === 0) {
      if (!pending) return false;
      // Caught up: the last batch commits before the slot can be promoted.
      await this.landInflight();
      return true;
    }
    const cache = this.cacheOf(slot);
    const relevant = events.filter((e) => this.model.relevant(e));
    // Rows read from storage (not cached) include the batch in flight: wait for its commit first.
    const settled = pending ? pending.done.catch(() => false) : null;
    const read = settled ? async (spec: TableSpec, key: Row) => (await settled, this.storage.getRow(slot, spec, key)) : (spec: TableSpec, key: Row) => this.storage.getRow(slot, spec, key);
    // A whole cache answers every `get` (a build from 0, until the cache first fills): nothing to prefetch.
    if (this.model.prefetch && !(cache.whole && cache.incomplete.size === 0)) await this.prefetch(slot, relevant, cache, settled);
    const tx = new BatchTx(this.specs, cache, read, this.readTables);
    for (const e of relevant) await this.model.apply(e, tx);
    const to = events[events.length - 1].globalPosition;
    if (pending && !(await this.landInflight())) return true;
    // A building slot's batch commits behind the next fold; the active slot's before anything waits on it.
    const behind = slot === this.building;
    if (!behind && tx.writes.size === 0 && this.deferMs > 0) {
      const now = Date.now();
      if (!this.unstored) {
        this.unstored = { stored: slot.position, since: now };
        this.onDeferred?.(this.deferMs);
      }
      if (now - this.unstored.since < this.deferMs) {
        slot.position = to;
        return true;
      }
    }
    // A page shorter than asked for reached the head: the build's last batch as far as is known.
    const from = !behind && this.unstored ? this.unstored.stored : slot.position;
    const committed = this.storage.commit(slot, this.model.tables, tx.writes, from, to, false, behind && events.length < max ? 'last' : behind);
    if (behind) {
      this.inflight = { slot, to, done: committed };
      // Its failure is taken up by landInflight (the next step, a drop, or the promotion).
      committed.catch(() => undefined);
    } else if (!(await this.landActive(committed, to))) return true;
    this.remember(cache, tx.writes);
    return true;
  }

  /** The active slot's commit is over: its checkpoint is stored at `to`, or (false) it was not and the state is loaded again. */
  private async landActive(committed: Promise<boolean>, to: number): Promise<boolean> {
    // A failed commit throws with `unstored` kept: the next commit's compare-and-set starts from the checkpoint
    // stored before it (one that did commit after all makes that fail, and the state is loaded again).
    const ok = await committed;
    this.unstored = null;
    if (!ok) {
      // Another process moved this slot (or dropped it): start again from what is stored.
      this.caches.clear();
      await this.load();
      return false;
    }
    this.active!.position = to;
    return true;
  }

  /**
   * Stores the active slot's checkpoint left unstored by rounds that wrote nothing, once it has waited
   * CHECKPOINT_DEFER_MS (`force`: now — the host closes).
   */
  async storeDeferred(force = false): Promise<void> {
    const u = this.unstored;
    const slot = this.active;
    if (!u || !slot) return;
    if (!force && Date.now() - u.since < this.deferMs) return;
    await this.landActive(this.storage.commit(slot, this.model.tables, new Map(), u.stored, slot.position, false, false), slot.position);
  }

  /** Keeps a batch's writes in the slot's cache (once committed, or while committing behind). */
  private remember(cache: SlotCache, writes: WriteSet): void {
    if (cache.size > this.cacheRows) cache.clear();
    // Written rows stay cached only for tables `apply` reads back (members, tokens, entries…), not for
    // write-only ones (the audit rows, the history index): no Map entry for rows never read back.
    for (const [table, w] of writes) {
      if (!this.readTables.has(table)) {
        cache.incomplete.add(table);
        continue;
      }
      const t = cache.table(table);
      const before = t.size;
      for (const [k, { row }] of w) t.set(k, row);
      cache.size += t.size - before;
    }
  }

  /**
   * Reads the rows the batch's relevant events will `get` (model.prefetch) and are not cached yet, one
   * statement per table — once `settled` (the batch in flight committed: storage holds its rows). When
   * every row named is cached or known absent (a whole cache's table), nothing is read and nothing waits.
   */
  private async prefetch(slot: Slot, events: RecordedEvent[], cache: SlotCache, settled: Promise<unknown> | null): Promise<void> {
    const wanted = new Map<string, Map<string, Row>>();
    for (const e of events) {
      for (const { table, key } of this.model.prefetch!(e)) {
        const spec = this.specs.get(table);
        if (!spec) throw new Error(`read model ${this.model.name}: prefetch of unknown table "${table}"`);
        const k = keyString(spec, key);
        // Cached, or known absent (a whole cache: nothing to read during a build from 0).
        if (cache.get(table, k) !== undefined) continue;
        let m = wanted.get(table);
        if (!m) wanted.set(table, (m = new Map()));
        m.set(k, key);
      }
    }
    if (wanted.size === 0) return;
    // A build's tables `apply` never reads back (the audit rows, the history index) make its cache
    // incomplete, but not for the tables named here: waiting for the batch in flight anyway held each
    // build's JS part back until its previous chunk had committed, so its writer thread idled meanwhile.
    await settled;
    // The tables side by side (on PostgreSQL, one round trip for all of them rather than one each).
    const found = await Promise.all([...wanted].map(([table, keys]) => this.storage.getRows(slot, this.specs.get(table)!, [...keys.values()])));
    [...wanted].forEach(([table, keys], i) => {
      const spec = this.specs.get(table)!;
      // Its rows are cached from now on, so this batch's writes to it must be cached too (see step).
      this.readTables.add(table);
      for (const k of keys.keys()) cache.set(table, k, null);
      for (const row of found[i]) cache.set(table, keyString(spec, row), row);
    });
  }

  /**
   * Whether this process folds the active slot now: always, unless the storage is shared (storage.lead) and
   * another process holds the lease — then it follows that process's checkpoint, until a waiter of its own
   * has waited IMPATIENT_MS (the holder may be gone: its lease runs out after LEASE_MS).
   */
  private async folds(now: number): Promise<boolean> {
    if (!this.storage.lead || !this.holder) return true;
    if (now >= this.leadKnownUntil) {
      this.leading = await this.storage.lead(this.model.name, this.holder, this.leaseMs);
      this.leadKnownUntil = now + (this.leading ? this.leaseMs / 3 : FOLLOW_RECHECK_MS);
    }
    return this.leading || this.waiters.some((w) => now - w.since >= this.patienceMs);
  }

  /** Gives up this process's leases, if it holds any (the host closes). */
  async resign(): Promise<void> {
    if (!this.storage.resign) return;
    await this.resignBuild();
    if (!this.leading) return;
    this.leading = false;
    this.leadKnownUntil = 0;
    await this.storage.resign(this.model.name, this.holder);
  }

  private buildLease(slot: Slot): string {
    return `${slot.name}@${slot.version}/${slot.generation}`;
  }

  /** Gives up the building slot's lease (promoted, dropped, or the host closes). */
  private async resignBuild(): Promise<void> {
    const held = this.buildLeaseState;
    this.buildLeaseState = null;
    if (held?.leads && this.storage.resign) await this.storage.resign(held.name, this.holder);
  }

  /**
   * Whether this process steps its building slot now: always, unless the storage is shared (storage.lead) and
   * another process holds that slot's lease — then, every FOLLOW_RECHECK_MS, it looks whether the other has
   * promoted (or dropped) it, and loads what is stored once it has. A holder that dies leaves its lease to
   * run out (LEASE_MS): the build goes on here from the slot's stored checkpoint.
   */
  private async builds(slot: Slot, now: number): Promise<boolean> {
    if (!this.storage.lead || !this.holder) return true;
    const name = this.buildLease(slot);
    const known = this.buildLeaseState;
    if (known?.name === name && now < known.until) return known.leads;
    const held = known?.name === name && known.leads;
    const leads = await this.storage.lead(name, this.holder, this.leaseMs);
    // A caller waiting for the promotion (settle) has it seen within BUILD_FOLLOW_POLL_MS, not a whole recheck later.
    this.buildLeaseState = { name, leads, until: now + (leads ? this.leaseMs / 3 : this.promoted.length > 0 ? BUILD_FOLLOW_POLL_MS : FOLLOW_RECHECK_MS) };
    if (leads && held) return true;
    // Not held, or just taken (the one who built it may have promoted it and let the lease go): the stored slot decides.
    const stored = (await this.storage.slots(this.model.name)).find((x) => sameSlot(x, slot));
    if (stored && !stored.ready) return leads;
    // Promoted or dropped by another process: what this one holds of the slot goes, the stored slots load.
    await this.resignBuild();
    this.caches.delete(`${slot.version}/${slot.generation}`);
    await this.load();
    if (!this.building) {
      const done = this.promoted;
      this.promoted = [];
      for (const d of done) d();
    }
    return false;
  }

  /** Moves the active slot to the checkpoint the folding process stored; true when it moved. */
  private async follow(slot: Slot): Promise<boolean> {
    const stored = await this.storage.position!(slot);
    if (stored === null) {
      // Dropped or replaced by another process (a rebuild's promotion): load what is stored now.
      this.caches.clear();
      await this.load();
      return true;
    }
    if (stored <= slot.position) return false;
    slot.position = stored;
    return true;
  }

  /** One round over the slots. True when something was folded (call again). */
  async round(): Promise<boolean> {
    if (this.superseded) return false;
    let progressed = false;
    let following = false;
    if (this.active && !(await this.folds(Date.now()))) {
      following = true;
      // Another process folds: what this one cached may go stale. Its checkpoint is read only for a query
      // waiting here (a follower woken by every append reads nothing then).
      this.followed = true;
      // A checkpoint this process left unstored while it folded is another's to store now (it folds those events again).
      this.unstored = null;
      if (this.waiters.length > 0) await this.follow(this.active);
    } else if (this.active) {
      if (this.followed) {
        // Rows cached before another process folded are stale: start from what is stored.
        this.followed = false;
        this.caches.clear();
        await this.load();
      }
      if (this.active && (await this.step(this.active))) progressed = true;
      else await this.storeDeferred();
    }
    const b = this.building;
    if (b && !(await this.builds(b, Date.now()))) {
      // Another process builds it: a caller waiting for its promotion (settle) keeps this model's rounds going.
      if (this.building && this.promoted.length > 0) {
        this.settleWaiters();
        await new Promise((r) => setTimeout(r, BUILD_FOLLOW_POLL_MS));
        return true;
      }
    } else if (b) {
      if (await this.step(b)) {
        progressed = true;
        this.onProgress?.({ name: this.model.name, position: b.position, head: await this.store.headPosition(), events: b.position - this.buildStart.from, elapsedMs: Date.now() - this.buildStart.at });
      } else if (this.building && sameSlot(this.building, b)) await this.promote(b);
    }
    this.settleWaiters();
    if (following && this.waiters.length > 0) {
      // Queries wait for the folding process's checkpoint: look again shortly (this round holds only this model).
      await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
      return true;
    }
    return progressed;
  }

  private async promote(winner: Slot): Promise<void> {
    const all = await this.storage.slots(this.model.name);
    const losers = all.filter((s) => !sameSlot(s, winner)).map((s) => ({ slot: s, specs: s.version === this.model.version ? this.model.tables : null }));
    await this.storage.promote(winner, this.model.tables, losers);
    winner.ready = true;
    this.bulk = null;
    await this.resignBuild();
    // The active slot's checkpoint left unstored belongs to a slot just dropped.
    this.unstored = null;
    for (const l of losers) this.caches.delete(`${l.slot.version}/${l.slot.generation}`);
    this.active = winner;
    this.building = null;
    const done = this.promoted;
    this.promoted = [];
    for (const d of done) d();
  }

  waitFor(position: number): Promise<void> {
    if (this.active && this.active.position >= position) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ position, since: Date.now(), resolve, reject }));
  }

  whenPromoted(): Promise<void> {
    if (!this.building) return Promise.resolve();
    return new Promise((resolve) => this.promoted.push(resolve));
  }

  private settleWaiters(): void {
    const pos = this.active?.position ?? -1;
    if (!this.waiters.length) return;
    const keep = [];
    for (const w of this.waiters) (w.position <= pos ? w.resolve() : keep.push(w));
    this.waiters = keep;
  }

  fail(err: unknown): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w.reject(err);
  }
}

/**
 * The read models of one workspace, kept current from the store subscription. Opened on the first
 * query that a read model answers (so start-up does not read the log), then live until the workspace
 * closes.
 */
export class ReadModelHost {
  private readonly runners = new Map<string, ModelRunner>();
  private loaded: Promise<void> | null = null;
  private closed = false;
  private wakeUp: (() => void) | null = null;
  private dirty = true;
  private sub: Subscription | null = null;
  private loop: Promise<void> | null = null;
  /** The round in flight (settled, never rejects), and how many callers hold the loop between rounds. */
  private inRound: Promise<unknown> = Promise.resolve();
  private paused = 0;
  /** The last error of the update loop (the loop retries; queries fall back meanwhile). */
  lastError: unknown = null;

  /** Pages read this round by position, shared by every slot at the same position (models read the log once). */
  private readonly pages = new Map<string, Promise<RecordedEvent[]>>();
  /** Chunks of JS events read for the set-based builds, by (from, to), with the builds yet to take theirs (see sharedBulkRead). */
  private readonly bulkPages = new Map<string, { read: Promise<RecordedEvent[]>; waiting: Set<ModelRunner> }>();
  private readonly bulkChunk: number;

  /**
   * `batch`: events per transaction (live and building); `cacheRows`: rows cached per slot (tests make
   * both small); `bulk: false`: every build folds each event in JS (the path the set-based one is compared
   * with); `bulkChunk`: events per transaction of a set-based build.
   */
  constructor(readonly store: EventStore, readonly storage: ReadModelStorage, models: ReadModel[], options: ReadModelHostOptions = {}) {
    // The stores' own page read when they have one (SQLite, PostgreSQL): one statement per batch, no
    // async iteration per event.
    const page = (store as { readPage?: (after: number, limit: number) => RecordedEvent[] | Promise<RecordedEvent[]> }).readPage?.bind(store);
    const read = (after: number, max: number): Promise<RecordedEvent[]> => {
      const key = `${after}/${max}`;
      let events = this.pages.get(key);
      if (!events) {
        events = page
          ? Promise.resolve(page(after, max))
          : (async () => {
              const out: RecordedEvent[] = [];
              for await (const e of store.readAll({ after, maxCount: max })) out.push(e);
              return out;
            })();
        this.pages.set(key, events);
        // The models step on their own, so a page is kept for the others beyond a round — a few only
        // (the oldest go first): a model far behind reads its own.
        if (this.pages.size > PAGES_KEPT) this.pages.delete(this.pages.keys().next().value!);
      }
      return events;
    };
    // This host's name on the folding leases of a storage shared by several processes (storage.lead).
    const holder = randomUUID();
    for (const m of models) this.runners.set(m.name, new ModelRunner(m, store, storage, options.batch ?? BATCH, options.batch ?? REBUILD_BATCH, read, options.cacheRows, options.bulk ?? true, options.bulkChunk, holder, options.leaseMs, options.patienceMs, options.checkpointDeferMs));
    // A checkpoint left unstored is stored by a round once it is due: the loop wakes for it when idle.
    for (const r of this.runners.values()) r.onDeferred = (ms) => setTimeout(() => this.wake(), ms + 1).unref();
    const typed = (store as { readTypedPage?: (after: number, until: number, types: readonly string[], where?: string) => RecordedEvent[] | Promise<RecordedEvent[]> }).readTypedPage;
    this.bulkChunk = options.bulkChunk ?? BULK_CHUNK;
    if (typed) for (const r of this.runners.values()) r.sharedBulkRead = (from, to) => this.sharedBulkRead(typed, r, from, to);
  }

  /**
   * The JS events of the chunk (from, to] for the asking model's set-based build and for the builds that
   * will ask for the same chunk next — at the same position, or up to BULK_SHARE_CHUNKS chunks behind on
   * the same chunk boundaries — read with one statement: each model's types with its own predicate,
   * OR'ed (each scan of a chunk was ~70 ms per 200k events of the main thread, for a few hundred member
   * events or three rules activations). Each model keeps the events of its types: exactly its own read,
   * since the models included have no type in common (one whose types overlap is left to read alone).
   * Null: the asker reads alone (no other build to share with, or a chunk read without its types).
   */
  private sharedBulkRead(typed: (after: number, until: number, types: readonly string[], where?: string) => RecordedEvent[] | Promise<RecordedEvent[]>, asker: ModelRunner, from: number, to: number): Promise<RecordedEvent[]> | null {
    const key = `${from}/${to}`;
    const page = this.bulkPages.get(key);
    if (page) {
      // Read before, for the builds then at or behind it: this one's events are in it only if it was one of them.
      if (!page.waiting.delete(asker)) return null;
      if (page.waiting.size === 0) this.bulkPages.delete(key);
      return page.read;
    }
    const own = asker.bulkSpec;
    if (!own || own.types.length === 0) return null;
    const chosen: Array<{ r: ModelRunner; spec: NonNullable<ModelRunner['bulkSpec']> }> = [{ r: asker, spec: own }];
    const seen = new Set(own.types);
    for (const r of this.runners.values()) {
      const spec = r === asker ? null : r.bulkSpec;
      if (!spec || spec.types.length === 0 || spec.from > from || (from - spec.from) % this.bulkChunk !== 0 || from - spec.from > BULK_SHARE_CHUNKS * this.bulkChunk) continue;
      if (spec.types.some((t) => seen.has(t))) continue;
      for (const t of spec.types) seen.add(t);
      chosen.push({ r, spec });
    }
    if (chosen.length === 1) return null;
    const quoted = (ts: readonly string[]): string => ts.map((t) => `'${t.replace(/'/g, "''")}'`).join(', ');
    const where = chosen.map(({ spec: x }) => `(type IN (${quoted(x.types)})${x.where ? ` AND (${x.where})` : ''})`).join(' OR ');
    const read = Promise.resolve(typed.call(this.store, from, to, [...seen], where));
    this.bulkPages.set(key, { read, waiting: new Set(chosen.slice(1).map((c) => c.r)) });
    // A build that never asks for it (its head moved, it caught up, it was dropped) leaves it here: the oldest go.
    if (this.bulkPages.size > BULK_PAGES_KEPT) this.bulkPages.delete(this.bulkPages.keys().next().value!);
    return read;
  }

  get names(): string[] {
    return [...this.runners.keys()];
  }

  private runner(name: string): ModelRunner {
    const r = this.runners.get(name);
    if (!r) throw new Error(`read model: unknown "${name}" (known: ${this.names.join(', ')})`);
    return r;
  }

  /** Loads the slots and starts the update loop (idempotent). */
  start(): Promise<void> {
    if (this.loaded) return this.loaded;
    const loading = (async () => {
      for (const r of this.runners.values()) await r.load();
      const head = await this.store.headPosition();
      // The subscription only wakes the loop; the loop reads pages from each slot's own checkpoint.
      this.sub = this.store.subscribeAll({ after: head });
      void (async () => {
        try {
          for await (const _ of this.sub!) this.wake();
        } catch {
          /* the store closed */
        }
      })();
      this.loop = this.run();
    })();
    this.loaded = loading;
    // The store was away (store_unavailable): the next query starts the host again rather than
    // inheriting this failure. The caller still gets `loading` itself (no extra tick on success).
    loading.catch(() => {
      if (this.loaded === loading) this.loaded = null;
    });
    return loading;
  }

  wake(): void {
    this.dirty = true;
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  /**
   * The update loop. Each model steps on its own: a model whose round folded something starts its next
   * round at once, without waiting for the other models' rounds (until session 31 every round waited
   * for every model's, so during a rebuild the audit's writer thread idled while the history's
   * statements ran, and the audit was promoted only once the history caught up). A wake-up (an append,
   * a query, a rebuild) steps every model again — one still in a round, once that round is over.
   */
  private async run(): Promise<void> {
    let backoff = 50;
    /** Each model's round in flight (settled: records its outcome, never rejects). */
    const inFlight = new Map<ModelRunner, Promise<void>>();
    /** Models to step again (folded something, or woken) once their round in flight, if any, is over. */
    const due = new Set<ModelRunner>();
    let failure: { err: unknown } | null = null;
    let roundOver: (() => void) | null = null;
    const begin = (r: ModelRunner): void => {
      const p = r
        .round()
        .then(
          (progressed) => {
            backoff = 50;
            if (progressed) due.add(r);
          },
          (err) => {
            failure ??= { err };
          },
        )
        .finally(() => {
          inFlight.delete(r);
          const w = roundOver;
          roundOver = null;
          w?.();
        });
      inFlight.set(r, p);
    };
    try {
      while (!this.closed) {
        if (this.paused > 0) {
          // Rounds in flight finish (rebuildAll awaits them through inRound); none starts until resumed.
          await new Promise<void>((resolve) => {
            if (this.paused === 0 || this.closed) return resolve();
            this.wakeUp = resolve;
          });
          continue;
        }
        if (failure) {
          // Every round over first: a failing model never leaves another's round running into the retry.
          await Promise.allSettled([...inFlight.values()]);
          if (this.closed) return;
          const { err } = failure;
          failure = null;
          this.lastError = err;
          for (const r of this.runners.values()) r.fail(err);
          await new Promise((res) => setTimeout(res, backoff).unref());
          backoff = Math.min(backoff * 2, 5000);
          this.pages.clear();
          this.bulkPages.clear();
          for (const r of this.runners.values()) due.add(r);
          continue;
        }
        if (this.dirty) {
          this.dirty = false;
          // A page cached before this wake-up may have grown since: read it again.
          this.pages.clear();
          for (const r of this.runners.values()) due.add(r);
        }
        for (const r of [...due]) {
          if (inFlight.has(r)) continue;
          due.delete(r);
          begin(r);
        }
        this.inRound = Promise.allSettled([...inFlight.values()]);
        // Until a round is over (its model may go on) or a wake-up; idle when no round is in flight.
        await new Promise<void>((resolve) => {
          if (this.dirty || this.closed || this.paused > 0) return resolve();
          if (inFlight.size > 0) roundOver = resolve;
          this.wakeUp = resolve;
        });
      }
    } finally {
      // close() awaits this loop before it closes the storage: no round may still be using it.
      await Promise.allSettled([...inFlight.values()]);
    }
  }

  /**
   * The slot that answers `name` exactly as of `until`, once it has folded at least that far; null when
   * no ready slot exists yet (the caller answers by folding the log instead: never a half-built answer).
   */
  async readySlot(name: string, until: number): Promise<Slot | null> {
    await this.start();
    const r = this.runner(name);
    if (r.superseded || !r.active) return null;
    this.wake();
    await r.waitFor(until);
    return r.active;
  }

  /** Builds a fresh generation from position 0 beside the active one and promotes it when it caught up. */
  async rebuild(name: string, onProgress?: (p: RebuildProgress) => void): Promise<Slot> {
    return (await this.rebuildAll([name], onProgress))[0];
  }

  /**
   * Rebuilds several models side by side: their building slots move in step, so each page of the log
   * is read (and its events decoded) once for all of them.
   */
  async rebuildAll(names: string[], onProgress?: (p: RebuildProgress) => void): Promise<Slot[]> {
    await this.start();
    const runners = names.map((n) => this.runner(n));
    for (const r of runners) if (r.superseded) throw new Error(`read model "${r.model.name}": a newer version is stored; rebuild it with the newer code`);
    const done: Promise<void>[] = [];
    // Between rounds: a round in flight must not step (or promote) a building slot dropped here (the
    // loop starts none while paused, and inRound holds every model's round in flight).
    this.paused++;
    try {
      await this.inRound;
      // Chunks read for builds dropped here are not taken any more.
      this.bulkPages.clear();
      for (const r of runners) {
        await r.dropBuilding();
        await r.startBuilding(await r.nextGeneration());
        r.onProgress = onProgress ?? null;
        done.push(r.whenPromoted());
      }
    } finally {
      this.paused--;
      this.wake();
    }
    await Promise.all(done);
    for (const r of runners) r.onProgress = null;
    return runners.map((r) => r.active!);
  }

  /** Waits until every model has a ready slot caught up with the current head. */
  async settle(): Promise<void> {
    await this.start();
    const head = await this.store.headPosition();
    for (const r of this.runners.values()) {
      if (r.superseded) continue;
      if (r.building) {
        const done = r.whenPromoted();
        this.wake();
        await done;
      }
      this.wake();
      await r.waitFor(head);
    }
  }

  /**
   * Every row of the active slot of `name`, table by table in primary-key order, as canonical JSON
   * (without workspace_id): two slots hold the same model exactly when their dumps are equal.
   */
  async dump(name: string): Promise<string> {
    const r = this.runner(name);
    const slot = r.active;
    if (!slot) throw new Error(`read model "${name}": no ready slot`);
    const out: Record<string, unknown[][]> = {};
    for (const spec of r.model.tables) {
      const cols = Object.keys(spec.columns);
      const rows = await this.storage.query(`SELECT * FROM ${tableName(slot, spec.name)} WHERE workspace_id = ? ORDER BY ${spec.key.join(', ')}`, [this.storage.workspaceId]);
      out[spec.name] = rows.map((row) => cols.map((c) => (row[c] === undefined ? null : row[c])));
    }
    return JSON.stringify(out);
  }

  slot(name: string): Slot | null {
    return this.runner(name).active;
  }

  /** How many of `name`'s slots have rows cached in memory (bounded: the active one and one being built). */
  cachedSlots(name: string): number {
    return this.runner(name).cachedSlots;
  }

  model(name: string): ReadModel {
    return this.runner(name).model;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.sub?.close();
    this.wake();
    for (const r of this.runners.values()) r.fail(new Error('read models: the workspace closed'));
    await this.loop?.catch(() => undefined);
    // Checkpoints moved by rounds that wrote nothing: stored now, so the next process starts from them.
    await Promise.all([...this.runners.values()].map((r) => r.storeDeferred(true))).catch(() => undefined);
    // Leases this process held go now: the other servers fold at their next round instead of after LEASE_MS.
    await Promise.all([...this.runners.values()].map((r) => r.resign())).catch(() => undefined);
    await this.storage.close();
  }
}
