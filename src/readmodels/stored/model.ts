import type { RecordedEvent } from '../../events/envelope';
import type { BulkBuilder } from './bulk';

/**
 * A checkpointed read model: rows derived from the workspace log, stored beside it (SQLite tables in a
 * sibling file, PostgreSQL tables in the store's schema), maintained from the store subscription with
 * the checkpoint committed in the same transaction as the rows. `apply` is the model's only logic: one
 * event → row writes, reading earlier rows of the same model when it needs them (a member's role, a
 * token's issuer). It must be deterministic, so a model rebuilt from position 0 equals, row for row,
 * the one maintained incrementally (test/readmodels/conformance.ts).
 */
export interface ReadModel {
  /** Stable name (`audit`, `history`): `read-models rebuild --name audit`. */
  name: string;
  /** Bumped whenever `apply` or `tables` change: a new version is built beside the old one (blue/green). */
  version: number;
  tables: TableSpec[];
  /** Cheap filter: events that cannot write a row are skipped without calling `apply`. */
  relevant(event: RecordedEvent): boolean;
  apply(event: RecordedEvent, tx: ApplyTx): void | Promise<void>;
  /**
   * The rows `apply` will `get` for this event (those it can name before reading anything). A batch
   * reads them with one statement per table before applying, instead of one round trip per `get`: on
   * PostgreSQL the history model's lookups were most of the incremental lag (a 50–150 ms round at
   * 2k appends/s). A key `apply` then does not read costs a lookup, one it reads unnamed a round trip.
   */
  prefetch?(event: RecordedEvent): Array<{ table: string; key: Row }>;
  /**
   * A set-based rebuild (src/readmodels/stored/bulk.ts): a slot built from 0 writes most rows with statements
   * over the log inside the database; `apply` folds only the events the builder names. A fresh builder
   * per build. Without it (or on a store without one) a build folds every event with `apply`.
   */
  bulk?(): BulkBuilder;
}

export type ColumnType = 'int' | 'text';

/**
 * One table of a model. Every table also gets a leading `workspace_id` column (PostgreSQL keeps every
 * workspace in one table set, as the event store does; the SQLite file holds one workspace); it leads
 * the primary key and every index.
 */
export interface TableSpec {
  name: string;
  columns: Record<string, ColumnType>;
  /** Primary key columns (without workspace_id). */
  key: string[];
  /** Secondary indexes, each a column list (without workspace_id). */
  indexes?: string[][];
}

export type Row = Record<string, string | number | null>;

/** What `apply` may do: rows are written by primary key, read back (this batch's writes first). */
export interface ApplyTx {
  put(table: string, row: Row): void;
  delete(table: string, key: Row): void;
  get(table: string, key: Row): Row | undefined | Promise<Row | undefined>;
}
