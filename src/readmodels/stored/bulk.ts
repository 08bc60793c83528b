import type { RecordedEvent } from '../../events/envelope';
import { REVIEW_FUNCTIONS } from './review-stream-sql';

/**
 * Set-based rebuild: a model built from 0 writes most of its rows with `INSERT … SELECT … FROM events`
 * inside the database (json_extract on SQLite, jsonb operators on PostgreSQL), a chunk of the log per
 * transaction, the checkpoint moved in the same transaction. Only the events whose rows need JS — JSON
 * columns written with JSON.stringify, lookups through state the statements cannot express — are read,
 * decoded and folded by the model's own `apply` (`js`), so a build decodes a small part of the log.
 * The rows equal those of the incremental path byte for byte (test/readmodels/bulk.test.ts and the
 * conformance suite compare every table).
 */

/** One statement of a chunk, with `?` placeholders. */
export interface BulkStatement {
  sql: string;
  params: unknown[];
}

/** The SQL of one store technology, for the statements of a BulkBuilder. */
export interface BulkDialect {
  readonly kind: 'sqlite' | 'postgres';
  readonly workspaceId: string;
  /** A model table of the slot being built, qualified. */
  t(table: string): string;
  /**
   * A subquery (use it as `FROM ${src} e`) of the log's events of `types` in (from, to]: columns
   * `position`, `event_id`, `stream_id`, `stream_revision`, `type`, `schema_version`, the raw `data` and `metadata` (on PostgreSQL also `s2`,
   * the stream id without its trailing digits, for its review-stream expressions). Its parameters follow.
   */
  src(types: readonly string[], from: number, to: number): BulkStatement;
  /** The whole log as a subquery with the columns of `src` but `s2` (for correlated lookups); its parameters follow. */
  readonly log: BulkStatement;
  /** `str` / `present` over the events table itself (no `src`): for the `where` of BulkBuilder.js. */
  rawStr(path: string[]): string;
  rawPresent(path: string[]): string;
  /** A string (or null) at `path` of the event's data: the value JSON.parse gives, as text. */
  str(alias: string, path: string[]): string;
  /** An integer at `path` of the data. */
  int(alias: string, path: string[]): string;
  /** A number at `path`, as the JSON text it was stored as (what JS's `${n}` gives for numbers JSON.stringify wrote). */
  num(alias: string, path: string[]): string;
  /** True when the value at `path` is the JSON literal `true`. */
  isTrue(alias: string, path: string[]): string;
  /** True when the data has a non-null value at `path`. */
  present(alias: string, path: string[]): string;
  /** A metadata field, as text (or null). */
  meta(alias: string, field: string): string;
  /** `parseReviewStream(stream_id) !== null` for a `src` row. */
  isReview(alias: string): string;
  /** Its repoId and prNumber, for a row known to be of a review stream (`isReview`). */
  repo(alias: string): string;
  pr(alias: string): string;
  /** Its repoId and prNumber, null when the stream is not a review stream. */
  reviewRepo(alias: string): string;
  reviewPr(alias: string): string;
  /**
   * The event of a `src` row as JSON, byte for byte what JSON.stringify gives for `{ eventId, streamId,
   * streamRevision, globalPosition, type, schemaVersion, data, metadata }` of the decoded event: the
   * stored data and metadata are JSON.stringify's text (both stores write them so), which
   * JSON.stringify(JSON.parse(text)) gives back unchanged; the ids are quoted as JSON.stringify quotes
   * them (checked for every character below U+0800 and beyond). Not for types with upcasters (their
   * decoded data is not the stored text).
   */
  eventJson(alias: string): string;
  /** `a IS NOT b` (null-safe inequality). */
  distinct(a: string, b: string): string;
  /**
   * `INSERT` of `select`'s rows (columns `cols`, without workspace_id) into `table`, keeping per key the
   * row of the greatest `position` when `keep` is `last` (a `put` per event) or the least when `first`
   * (the first one wins, and a row already stored is kept). `select` must not end with ORDER BY.
   */
  insert(table: string, cols: string[], key: string[], select: string, keep: 'last' | 'first' | 'unique'): string;
  /** A temporary table of this transaction (emptied), and the statements writing `rows` into it. */
  temp(name: string, cols: Record<string, 'int' | 'text'>, key: string[], rows: unknown[][]): BulkStatement[];
  /**
   * A temporary table of this transaction (emptied), filled by `select` (columns `cols`, in that order;
   * its parameters `params`), keyed by the integer column `key` (on SQLite its rowid, so reading it in
   * key order sorts nothing). SQLite keeps each value as the select gave it (no column affinity): a
   * statement reading the table sees what it would have seen reading the select.
   */
  tempSelect(name: string, cols: Record<string, 'int' | 'text'>, key: string, select: string, params: unknown[]): BulkStatement[];
}

/** What a model with a set-based rebuild provides: a fresh one per build (it may keep state across chunks). */
export interface BulkBuilder {
  /**
   * The events folded by the model's `apply` (read decoded, in log order, filtered by `relevant`):
   * their types, and a predicate narrowing them per dialect (over the events table's columns).
   */
  js: { types: readonly string[]; where?: (d: BulkDialect) => string };
  /** The event types the statements read from the log (raw: none of them may have upcasters). */
  sqlTypes: readonly string[];
  /** Tables only the statements write: `apply`'s writes to them are dropped, and `apply` must not read them. */
  sqlTables: readonly string[];
  /**
   * The statements of the chunk (from, to]: `apply` runs after the JS events' writes in the checkpoint's
   * transaction; `prepare` (temporary tables only, writing nothing of the slot) runs before it — on
   * SQLite outside the transaction, so it holds no write lock while it computes.
   */
  statements(d: BulkDialect, from: number, to: number, js: readonly RecordedEvent[]): BulkStatements;
}

export interface BulkStatements {
  prepare: BulkStatement[];
  apply: BulkStatement[];
  /**
   * `prepare` reads the log alone (nothing of the slot), so on SQLite it may run ahead, on a second
   * writer thread of the model's file, while the chunk before commits (ReadModelStorage.prepareAhead):
   * for a builder whose `prepare` is a large part of its chunk's work.
   */
  ahead?: boolean;
}

const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const sqlitePath = (path: string[]): string => sqlString(`$.${path.join('.')}`);
const pgPath = (path: string[]): string => sqlString(`{${path.join(',')}}`);

/** Newline characters JS's `.` does not match (the review-stream regex fails on them). */
const LINE_BREAKS = [10, 13, 8232, 8233];

function reviewExprs(charFn: string, posFn: (hay: string, needle: string) => string, cast: (x: string) => string) {
  const isReview = (a: string) =>
    `(substr(${a}.stream_id, 1, 3) = 'pr-' AND length(${a}.s2) < length(${a}.stream_id) AND length(${a}.s2) > 4 AND substr(${a}.s2, length(${a}.s2), 1) = '-' AND ${LINE_BREAKS.map((c) => `${posFn(`${a}.stream_id`, `${charFn}(${c})`)} = 0`).join(' AND ')})`;
  const repo = (a: string) => `substr(${a}.s2, 4, length(${a}.s2) - 4)`;
  const pr = (a: string) => cast(`substr(${a}.stream_id, length(${a}.s2) + 1)`);
  return {
    isReview,
    repo,
    pr,
    reviewRepo: (a: string) => `CASE WHEN ${isReview(a)} THEN ${repo(a)} END`,
    reviewPr: (a: string) => `CASE WHEN ${isReview(a)} THEN ${pr(a)} END`,
  };
}

const typeList = (types: readonly string[]): string => types.map(sqlString).join(', ');

/** SQLite: the log attached to the read-model connection as `rm_log`. */
export function sqliteDialect(workspaceId: string, table: (name: string) => string): BulkDialect {
  const review = {
    isReview: (a: string) => `(${REVIEW_FUNCTIONS.pr}(${a}.stream_id) IS NOT NULL)`,
    repo: (a: string) => `${REVIEW_FUNCTIONS.repo}(${a}.stream_id)`,
    pr: (a: string) => `${REVIEW_FUNCTIONS.pr}(${a}.stream_id)`,
    reviewRepo: (a: string) => `${REVIEW_FUNCTIONS.repo}(${a}.stream_id)`,
    reviewPr: (a: string) => `${REVIEW_FUNCTIONS.pr}(${a}.stream_id)`,
  };
  return {
    kind: 'sqlite',
    workspaceId,
    t: table,
    src: (types, from, to) => ({
      sql: `(SELECT global_position AS position, event_id, stream_id, stream_revision, type, schema_version, data, metadata FROM rm_log.events WHERE global_position > ? AND global_position <= ? AND type IN (${typeList(types)}))`,
      params: [from, to],
    }),
    log: { sql: '(SELECT global_position AS position, event_id, stream_id, type, data, metadata FROM rm_log.events)', params: [] },
    rawStr: (p) => `json_extract(data, ${sqlitePath(p)})`,
    rawPresent: (p) => `(json_extract(data, ${sqlitePath(p)}) IS NOT NULL)`,
    str: (a, p) => `json_extract(${a}.data, ${sqlitePath(p)})`,
    int: (a, p) => `json_extract(${a}.data, ${sqlitePath(p)})`,
    num: (a, p) => `(${a}.data -> ${sqlitePath(p)})`,
    isTrue: (a, p) => `(json_type(${a}.data, ${sqlitePath(p)}) = 'true')`,
    present: (a, p) => `(json_extract(${a}.data, ${sqlitePath(p)}) IS NOT NULL)`,
    meta: (a, f) => `json_extract(${a}.metadata, ${sqlitePath([f])})`,
    ...review,
    eventJson: (a) => `'{"eventId":' || json_quote(${a}.event_id) || ',"streamId":' || json_quote(${a}.stream_id) || ',"streamRevision":' || ${a}.stream_revision || ',"globalPosition":' || ${a}.position || ',"type":' || json_quote(${a}.type) || ',"schemaVersion":' || ${a}.schema_version || ',"data":' || ${a}.data || ',"metadata":' || ${a}.metadata || '}'`,
    distinct: (a, b) => `(${a} IS NOT ${b})`,
    insert(t, cols, _key, select, keep) {
      // Rows are inserted in the SELECT's order: REPLACE keeps the last, IGNORE the first (and any stored row).
      const verb = keep === 'last' ? 'INSERT OR REPLACE' : keep === 'first' ? 'INSERT OR IGNORE' : 'INSERT';
      return `${verb} INTO ${table(t)} (workspace_id, ${cols.join(', ')}) SELECT ?, ${cols.join(', ')} FROM (${select}) ORDER BY position`;
    },
    temp(name, cols, key, rows) {
      const names = Object.keys(cols);
      const out: BulkStatement[] = [
        { sql: `CREATE TEMP TABLE IF NOT EXISTS ${name} (${names.map((c) => `${c} ${cols[c] === 'int' ? 'INTEGER' : 'TEXT'}`).join(', ')}, PRIMARY KEY (${key.join(', ')}))`, params: [] },
        { sql: `DELETE FROM temp.${name}`, params: [] },
      ];
      const insert = `INSERT OR REPLACE INTO temp.${name} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`;
      for (const r of rows) out.push({ sql: insert, params: r });
      return out;
    },
    tempSelect(name, cols, key, select, params) {
      const names = Object.keys(cols);
      return [
        { sql: `CREATE TEMP TABLE IF NOT EXISTS ${name} (${names.map((c) => (c === key ? `${c} INTEGER PRIMARY KEY` : c)).join(', ')})`, params: [] },
        { sql: `DELETE FROM temp.${name}`, params: [] },
        { sql: `INSERT INTO temp.${name} (${names.join(', ')}) ${select}`, params },
      ];
    },
  };
}

/** PostgreSQL: the log is the store's `events` table in the same schema. */
export function postgresDialect(workspaceId: string, schema: string, table: (name: string) => string): BulkDialect {
  const review = reviewExprs('chr', (h, n) => `strpos(${h}, ${n})`, (x) => `(${x})::bigint`);
  return {
    kind: 'postgres',
    workspaceId,
    t: table,
    // OFFSET 0: not inlined, so each row's data and metadata are parsed once (inlined, every `e.d` parsed again).
    src: (types, from, to) => ({
      sql: `(SELECT global_position AS position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, data::jsonb AS d, metadata::jsonb AS m, rtrim(stream_id, '0123456789') AS s2 FROM ${schema}.events WHERE workspace_id = ? AND global_position > ? AND global_position <= ? AND type IN (${typeList(types)}) OFFSET 0)`,
      params: [workspaceId, from, to],
    }),
    log: { sql: `(SELECT global_position AS position, event_id, stream_id, type, data, data::jsonb AS d, metadata::jsonb AS m FROM ${schema}.events WHERE workspace_id = ?)`, params: [workspaceId] },
    rawStr: (p) => `(data::jsonb #>> ${pgPath(p)})`,
    rawPresent: (p) => `(coalesce(jsonb_typeof(data::jsonb #> ${pgPath(p)}), 'null') <> 'null')`,
    str: (a, p) => `(${a}.d #>> ${pgPath(p)})`,
    int: (a, p) => `(${a}.d #>> ${pgPath(p)})::bigint`,
    // The json type (not jsonb) keeps a number's text as stored.
    num: (a, p) => `(${a}.data::json #>> ${pgPath(p)})`,
    isTrue: (a, p) => `((${a}.d #> ${pgPath(p)}) = 'true'::jsonb)`,
    present: (a, p) => `(coalesce(jsonb_typeof(${a}.d #> ${pgPath(p)}), 'null') <> 'null')`,
    meta: (a, f) => `(${a}.m ->> ${sqlString(f)})`,
    ...review,
    eventJson: (a) => `'{"eventId":' || to_json(${a}.event_id)::text || ',"streamId":' || to_json(${a}.stream_id)::text || ',"streamRevision":' || ${a}.stream_revision || ',"globalPosition":' || ${a}.position || ',"type":' || to_json(${a}.type)::text || ',"schemaVersion":' || ${a}.schema_version || ',"data":' || ${a}.data || ',"metadata":' || ${a}.metadata || '}'`,
    distinct: (a, b) => `(${a} IS DISTINCT FROM ${b})`,
    insert(t, cols, key, select, keep) {
      const target = `INSERT INTO ${table(t)} (workspace_id, ${cols.join(', ')})`;
      if (keep === 'unique') return `${target} SELECT ?::text, ${cols.join(', ')} FROM (${select}) x`;
      // One row per key (ON CONFLICT DO UPDATE may not touch a row twice in one statement).
      const pick = `SELECT DISTINCT ON (${key.join(', ')}) ?::text, ${cols.join(', ')} FROM (${select}) x ORDER BY ${key.join(', ')}, position${keep === 'last' ? ' DESC' : ''}`;
      const nonKey = cols.filter((c) => !key.includes(c));
      return `${target} ${pick} ON CONFLICT (workspace_id, ${key.join(', ')}) ${keep === 'last' && nonKey.length ? `DO UPDATE SET ${nonKey.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}` : 'DO NOTHING'}`;
    },
    temp(name, cols, key, rows) {
      const names = Object.keys(cols);
      return [
        { sql: `CREATE TEMP TABLE IF NOT EXISTS ${name} (${names.map((c) => `${c} ${cols[c] === 'int' ? 'bigint' : 'text COLLATE "C"'}`).join(', ')}, PRIMARY KEY (${key.join(', ')})) ON COMMIT DROP`, params: [] },
        {
          sql: `INSERT INTO ${name} (${names.join(', ')}) SELECT * FROM unnest(${names.map((c) => `?::${cols[c] === 'int' ? 'bigint' : 'text'}[]`).join(', ')})`,
          params: names.map((_, i) => rows.map((r) => r[i])),
        },
      ];
    },
    tempSelect(name, cols, key, select, params) {
      const names = Object.keys(cols);
      return [
        { sql: `CREATE TEMP TABLE IF NOT EXISTS ${name} (${names.map((c) => `${c} ${cols[c] === 'int' ? 'bigint' : 'text COLLATE "C"'}${c === key ? ' PRIMARY KEY' : ''}`).join(', ')}) ON COMMIT DROP`, params: [] },
        { sql: `TRUNCATE ${name}`, params: [] },
        { sql: `INSERT INTO ${name} (${names.join(', ')}) ${select}`, params },
      ];
    },
  };
}
