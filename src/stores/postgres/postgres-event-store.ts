import { randomBytes } from 'node:crypto';
import { Client, Pool, PoolClient, types, type ClientBase, type QueryResultRow } from 'pg';
import { DomainError } from '../../domain-error';
import { DEFAULT_POSTGRES_BOUNDS } from '../../operator-config';
import { encodedJsonOf, type EventMetadata, type NewEvent, type RecordedEvent } from '../../events/envelope';
import { eventCatalogue, internedType, upcastEvent } from '../../events/catalogue';
import {
  AppendResult,
  AppendOptions,
  DuplicateEventId,
  EventStore,
  ExpectedRevision,
  GuardMoved,
  NoopRecord,
  ReadAllOptions,
  ReadStreamOptions,
  StoreFreshness,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevision,
  StoreClosed,
} from '../../events/store/port';
import { EXCLUSIVE_POLL_MS, EXCLUSIVE_WAIT_MS } from '../../events/store/port';
import { LiveSubscription } from '../../events/store/subscription';
import { isConnectionError, isIdleSessionEnd, isQueryTimeout, isReadOnlyError, STORE_RETRY_AFTER_MS, unavailable } from './connection-errors';

export { isConnectionError, STORE_RETRY_AFTER_MS, unavailable } from './connection-errors';
import type { AuditLogStore, ChainInfo, ChainRow, StoredCheckpoint } from '../../events/chain';

/**
 * PostgreSQL event store. Layout: ONE `events` table for every workspace with a `workspace_id` column
 * that every statement is scoped by (not a schema per workspace): one set of prepared statements and
 * one migration for the whole server, a catalogue that is just another table, and no DDL when a
 * workspace is created. Isolation is enforced by the adapter (a store instance is bound to one
 * workspace id and every statement filters on it first: it is the leading column of every index).
 *
 * Global order (the sequence-gap problem): positions are NOT taken from a sequence. Every append
 * transaction first locks its workspace's row in `heads` (SELECT … FOR UPDATE) and numbers its events
 * from that row; the lock is held until COMMIT, and PostgreSQL makes a transaction visible before it
 * releases its locks. So position N+1 can only be assigned after the transaction holding N is visible:
 * a reader that has seen N+1 has necessarily been able to see N, and `position > checkpoint` never
 * skips a late commit. Positions are consecutive (a refused or rolled-back append returns nothing to a
 * sequence). The price — one writing transaction per workspace at a time — is paid back by group
 * commit: concurrent appends of one process share one transaction (one round trip, one fsync), so the
 * serialized section is a single `SELECT append_batch(…)` statement plus its commit.
 */

const INT8_OID = 20;
/** Positions and revisions are bigint columns; they stay far below 2^53, so plain numbers are exact. */
const parseTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? Number : types.getTypeParser(oid, format as 'text'))) as typeof types.getTypeParser,
};

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,40}$/;
/** How often a process checks the heads of the workspaces it watches, in case a NOTIFY was lost. */
const HEADS_POLL_MS = 1000;

/**
 * A process that listens and has heard no other process for this long (no announcement, no hello) is
 * alone on the channel and announces nothing (PostgresBackendOptions.aloneAfterMs). Every listening
 * process says hello when its LISTEN starts and with each heads poll (HEADS_POLL_MS), so while another
 * one listens this never elapses.
 */
const ALONE_AFTER_MS = 5000;

/** Expected revision as the append function's bigint: ≥ 0 exact; the named cases as negative codes. */
const EXPECTED_CODE = { no_stream: -1, stream_exists: -2, any: -3 } as const;
const encodeExpected = (e: ExpectedRevision): number => (typeof e === 'number' ? e : EXPECTED_CODE[e]);

/**
 * The chain hash as SQL, shared by step 1's SQL function and step 5's PL/pgSQL one: the same bytes as
 * chainHash() in src/events/chain.ts (length-prefixed fields, sha256, hex). The steps' text is pinned by
 * digest (test/scale/migrations.test.ts), so this text must not change.
 */
const CHAIN_HASH_EXPR = `encode(sha256(convert_to(
    octet_length(p_prev) || ':' || p_prev || octet_length(p_pos::text) || ':' || p_pos::text ||
    octet_length(p_stream) || ':' || p_stream || octet_length(p_rev::text) || ':' || p_rev::text ||
    octet_length(p_type) || ':' || p_type || octet_length(p_ver::text) || ':' || p_ver::text ||
    octet_length(p_data) || ':' || p_data || octet_length(p_meta) || ':' || p_meta ||
    octet_length(p_id) || ':' || p_id, 'UTF8')), 'hex')`;
const chainHashSignature = (s: string): string =>
  `CREATE OR REPLACE FUNCTION ${s}.chain_hash(p_prev text, p_pos bigint, p_stream text, p_rev bigint, p_type text, p_ver int, p_data text, p_meta text, p_id text)`;

/**
 * Migration step 1 (schema v1): every table and function of a fresh database, idempotent. It also upgrades
 * a database from before versioning in place. Frozen: later changes are new steps (migrationSteps).
 */
export function migrationSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.events (
  workspace_id    text    NOT NULL,
  global_position bigint  NOT NULL,
  event_id        text    NOT NULL,
  stream_id       text    NOT NULL,
  stream_revision bigint  NOT NULL,
  type            text    NOT NULL,
  schema_version  integer NOT NULL,
  data            text    NOT NULL,
  metadata        text    NOT NULL,
  hash            bytea,
  PRIMARY KEY (workspace_id, global_position),
  UNIQUE (workspace_id, event_id),
  UNIQUE (workspace_id, stream_id, stream_revision)
);
CREATE TABLE IF NOT EXISTS ${s}.heads (
  workspace_id text   PRIMARY KEY,
  position     bigint NOT NULL
);
-- The hash chain (src/events/chain.ts): added in place to stores created before it. The first chained
-- layout kept prev_hash and hash as 64-character hex text; now the hash is 32 bytes and prev_hash is not
-- stored (it is the previous row's hash). Converted in place, nothing re-hashed: signed checkpoints hold.
DO $mig$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = '${schema}' AND table_name = 'events' AND column_name = 'hash' AND data_type = 'text') THEN
    -- A text that is not 64 hex digits (tampered) keeps its bytes: verify reports that row as edited.
    ALTER TABLE ${s}.events ALTER COLUMN hash TYPE bytea USING (CASE WHEN hash ~ '^[0-9a-f]{64}$' THEN decode(hash, 'hex') ELSE convert_to(hash, 'UTF8') END);
  END IF;
END
$mig$;
ALTER TABLE ${s}.events DROP COLUMN IF EXISTS prev_hash;
ALTER TABLE ${s}.events ADD COLUMN IF NOT EXISTS hash bytea;
ALTER TABLE ${s}.heads ADD COLUMN IF NOT EXISTS hash text;
ALTER TABLE ${s}.heads ADD COLUMN IF NOT EXISTS chained_from bigint NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS ${s}.audit_checkpoints (
  workspace_id text   NOT NULL,
  seq          bigint NOT NULL,
  body         text   NOT NULL,
  PRIMARY KEY (workspace_id, seq)
);
-- The same bytes as chainHash() in src/events/chain.ts: length-prefixed fields, sha256, hex.
${chainHashSignature(s)}
RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT ${CHAIN_HASH_EXPR}
$fn$;
CREATE OR REPLACE FUNCTION ${s}.chain_genesis(p_ws text) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT encode(sha256(convert_to('review-ledger/chain/v1' || chr(10) || p_ws, 'UTF8')), 'hex')
$fn$;
-- Upgrade: a workspace whose head has no hash yet gets its existing rows hashed in order, under its
-- head lock; chained_from records the head at that moment (verify states it).
CREATE OR REPLACE FUNCTION ${s}.chain_backfill(p_ws text) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  v_prev text := ${s}.chain_genesis(p_ws);
  v_last bigint := 0;
  v_hash text;
  r record;
BEGIN
  PERFORM 1 FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  FOR r IN SELECT * FROM ${s}.events e WHERE e.workspace_id = p_ws ORDER BY e.global_position LOOP
    v_hash := ${s}.chain_hash(v_prev, r.global_position, r.stream_id, r.stream_revision, r.type, r.schema_version, r.data, r.metadata, r.event_id);
    UPDATE ${s}.events SET hash = decode(v_hash, 'hex') WHERE workspace_id = p_ws AND global_position = r.global_position;
    v_prev := v_hash;
    v_last := r.global_position;
  END LOOP;
  UPDATE ${s}.heads SET hash = v_prev, chained_from = v_last WHERE workspace_id = p_ws;
END
$fn$;
SELECT ${s}.chain_backfill(workspace_id) FROM ${s}.heads WHERE hash IS NULL;
CREATE TABLE IF NOT EXISTS ${s}.workspaces (
  workspace_id text PRIMARY KEY,
  name         text NOT NULL,
  created_at   text NOT NULL
);
-- Who a workspace created over RPC counts against (maxWorkspacesPerOwner); NULL for the operator's.
ALTER TABLE ${s}.workspaces ADD COLUMN IF NOT EXISTS created_by text;
-- Idempotency keys of commands that wrote nothing (src/commands/noop-keys.ts): claimed under the head
-- lock appends take, so a key is held by a no-op or by events, never both, on every server.
CREATE TABLE IF NOT EXISTS ${s}.noop_keys (
  workspace_id text NOT NULL,
  key          text NOT NULL,
  principal    text NOT NULL,
  command      text NOT NULL,
  digest       text NOT NULL,
  json         text NOT NULL,
  PRIMARY KEY (workspace_id, key)
);
CREATE OR REPLACE FUNCTION ${s}.claim_noop(p_ws text, p_key text, p_principal text, p_command text, p_digest text, p_json text)
RETURNS TABLE (held_by_event boolean, principal text, command text, digest text, json text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO ${s}.heads (workspace_id, position, hash) VALUES (p_ws, 0, ${s}.chain_genesis(p_ws)) ON CONFLICT DO NOTHING;
    PERFORM 1 FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  END IF;
  IF EXISTS (SELECT 1 FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_key) THEN
    held_by_event := true;
    RETURN NEXT;
    RETURN;
  END IF;
  INSERT INTO ${s}.noop_keys (workspace_id, key, principal, command, digest, json) VALUES (p_ws, p_key, p_principal, p_command, p_digest, p_json) ON CONFLICT DO NOTHING;
  RETURN QUERY SELECT false, n.principal, n.command, n.digest, n.json FROM ${s}.noop_keys n WHERE n.workspace_id = p_ws AND n.key = p_key;
END
$fn$;
CREATE OR REPLACE FUNCTION ${s}.append_batch(
  p_ws text, p_streams text[], p_expected bigint[], p_counts int[],
  p_ids text[], p_types text[], p_versions int[], p_data text[], p_meta text[])
RETURNS TABLE (item int, status text, first_pos bigint, last_pos bigint, next_rev bigint, detail text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_head bigint;
  v_start bigint;
  v_off int := 0;
  v_n int;
  v_cur bigint;
  v_exp bigint;
  v_first record;
  v_row record;
  v_hash text;
  v_hashes bytea[];
BEGIN
  -- The workspace's head row lock serializes appends until COMMIT: see the header of postgres.ts.
  -- The same lock orders the hash chain: the head row carries the hash of the last event.
  SELECT h.position, h.hash INTO v_head, v_hash FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO ${s}.heads (workspace_id, position, hash) VALUES (p_ws, 0, ${s}.chain_genesis(p_ws)) ON CONFLICT DO NOTHING;
    SELECT h.position, h.hash INTO v_head, v_hash FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  END IF;
  IF v_hash IS NULL THEN
    PERFORM ${s}.chain_backfill(p_ws);
    SELECT h.hash INTO v_hash FROM ${s}.heads h WHERE h.workspace_id = p_ws;
  END IF;
  v_start := v_head;
  FOR i IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
    item := i - 1; status := NULL; first_pos := NULL; last_pos := NULL; next_rev := NULL; detail := NULL;
    v_n := p_counts[i];
    -- Idempotency first: a retry of an append that landed answers as the original did.
    SELECT e.stream_id, e.stream_revision, e.global_position, e.metadata INTO v_first
      FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_ids[v_off + 1];
    IF FOUND THEN
      -- Only the same caller, command and payload digest is a retry (port.ts sameCommand): one key sent at
      -- once with two payloads derives the same ids, and the loser must not be told "recorded".
      IF v_first.stream_id <> p_streams[i]
         OR (v_first.metadata::jsonb ->> 'principal') IS DISTINCT FROM (p_meta[v_off + 1]::jsonb ->> 'principal')
         OR (v_first.metadata::jsonb ->> 'command') IS DISTINCT FROM (p_meta[v_off + 1]::jsonb ->> 'command')
         OR (v_first.metadata::jsonb ->> 'commandDigest') IS DISTINCT FROM (p_meta[v_off + 1]::jsonb ->> 'commandDigest') THEN
        status := 'duplicate_id'; detail := p_ids[v_off + 1];
      ELSE
        status := 'duplicate'; first_pos := v_first.global_position; last_pos := first_pos; next_rev := v_first.stream_revision;
        FOR k IN 2 .. v_n LOOP
          SELECT e.stream_id, e.stream_revision, e.global_position INTO v_row
            FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_ids[v_off + k];
          IF NOT FOUND OR v_row.stream_id <> p_streams[i] OR v_row.stream_revision <> v_first.stream_revision + k - 1 THEN
            status := 'duplicate_id'; detail := p_ids[v_off + k]; first_pos := NULL; last_pos := NULL; next_rev := NULL;
            EXIT;
          END IF;
          last_pos := v_row.global_position; next_rev := v_row.stream_revision;
        END LOOP;
      END IF;
    ELSE
      SELECT coalesce(max(e.stream_revision), -1) INTO v_cur FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.stream_id = p_streams[i];
      v_exp := p_expected[i];
      IF NOT (v_exp = -3 OR (v_exp = -1 AND v_cur = -1) OR (v_exp = -2 AND v_cur >= 0) OR v_exp = v_cur) THEN
        status := 'wrong_expected'; next_rev := v_cur;
      ELSE
        -- Checked up front so a refused append never raises: no subtransaction per item is needed.
        SELECT x.id INTO detail FROM unnest(p_ids[v_off + 1 : v_off + v_n]) AS x(id)
          WHERE EXISTS (SELECT 1 FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = x.id) LIMIT 1;
        IF detail IS NULL AND (SELECT count(DISTINCT x.id) FROM unnest(p_ids[v_off + 1 : v_off + v_n]) AS x(id)) <> v_n THEN
          detail := p_ids[v_off + 1];
        END IF;
        -- A key a no-op command already spent (claim_noop) is not free for events.
        IF detail IS NULL AND EXISTS (SELECT 1 FROM ${s}.noop_keys n WHERE n.workspace_id = p_ws AND n.key = p_ids[v_off + 1]) THEN
          detail := p_ids[v_off + 1];
        END IF;
        IF detail IS NOT NULL THEN
          status := 'duplicate_id';
        ELSE
          -- The chain is sequential: hashes are computed one by one, the rows inserted in one statement.
          v_hashes := '{}';
          FOR k IN 1 .. v_n LOOP
            v_hash := ${s}.chain_hash(v_hash, v_head + k, p_streams[i], v_cur + k, p_types[v_off + k], p_versions[v_off + k], p_data[v_off + k], p_meta[v_off + k], p_ids[v_off + k]);
            v_hashes := v_hashes || decode(v_hash, 'hex');
          END LOOP;
          INSERT INTO ${s}.events (workspace_id, global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash)
            SELECT p_ws, v_head + k, p_ids[v_off + k], p_streams[i], v_cur + k, p_types[v_off + k], p_versions[v_off + k], p_data[v_off + k], p_meta[v_off + k], v_hashes[k]
            FROM generate_series(1, v_n) AS k;
          status := 'ok'; first_pos := v_head + 1; last_pos := v_head + v_n; next_rev := v_cur + v_n;
          v_head := v_head + v_n;
        END IF;
      END IF;
    END IF;
    v_off := v_off + v_n;
    RETURN NEXT;
  END LOOP;
  IF v_head > v_start THEN
    UPDATE ${s}.heads SET position = v_head, hash = v_hash WHERE workspace_id = p_ws;
  END IF;
END
$fn$;
`;
}

/**
 * Schema v2: `append_batch` with the same signature and answers, reading the tables once per BATCH
 * instead of once per item. v1 ran six statements per append (its retry look-up, max() over the stream,
 * an EXISTS over its ids, …) from plans cached per connection: a plan made while the table was small
 * (a hash join over every event of the workspace) was kept as it grew, so each append cost more the
 * longer the log (measured: 2,000 → 400 ev/s over 20k events). Now, per batch: the last revision of each
 * distinct stream (one index step each), the ids of the batch already stored or spent by a no-op, the
 * ids sent twice — planned afresh each time (EXECUTE), so the plan fits the table's size, or for a batch of
 * at most 16 events (one command's append) by point look-ups on the unique indexes, whose cached plans
 * stay right at any size and cost no planning; then the items are decided and hashed in memory and the
 * rows inserted by one statement. An item touching a stored,
 * repeated or spent id (a retry, a conflict: rare) takes v1's path, item by item, after the rows decided
 * so far are written — a copy of step 1's per-item body, on purpose: step 1 is frozen (databases ran its
 * text; its digest is pinned) and this function replaces it, so there is no v1 function left to call. Purely additive: replacing a function locks no table, so live appends of
 * processes still on v1's code carry on (they call the same function).
 */
export function appendBatchV2Sql(schema: string): string {
  const s = `"${schema}"`;
  /** Up to this many events, a batch is checked by point look-ups instead of planned set queries. */
  const SMALL_BATCH = 16;
  return `
CREATE OR REPLACE FUNCTION ${s}.append_batch(
  p_ws text, p_streams text[], p_expected bigint[], p_counts int[],
  p_ids text[], p_types text[], p_versions int[], p_data text[], p_meta text[])
RETURNS TABLE (item int, status text, first_pos bigint, last_pos bigint, next_rev bigint, detail text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_items int := coalesce(array_length(p_streams, 1), 0);
  v_head bigint;
  v_start bigint;
  v_off int := 0;
  v_n int;
  v_cur bigint;
  v_exp bigint;
  v_first record;
  v_row record;
  v_hash text;
  v_hashes bytea[];
  v_revs bigint[];
  v_slot int[];
  v_special text[];
  v_names text[];
  v_k int;
  r_ix int[] := '{}';
  r_item int[] := '{}';
  r_pos bigint[] := '{}';
  r_rev bigint[] := '{}';
  r_hash bytea[] := '{}';
BEGIN
  -- The workspace's head row lock serializes appends until COMMIT: see the header of postgres.ts.
  -- The same lock orders the hash chain: the head row carries the hash of the last event.
  SELECT h.position, h.hash INTO v_head, v_hash FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO ${s}.heads (workspace_id, position, hash) VALUES (p_ws, 0, ${s}.chain_genesis(p_ws)) ON CONFLICT DO NOTHING;
    SELECT h.position, h.hash INTO v_head, v_hash FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  END IF;
  IF v_hash IS NULL THEN
    PERFORM ${s}.chain_backfill(p_ws);
    SELECT h.hash INTO v_hash FROM ${s}.heads h WHERE h.workspace_id = p_ws;
  END IF;
  v_start := v_head;
  IF v_items = 0 THEN
    RETURN;
  END IF;
  IF cardinality(p_ids) <= ${SMALL_BATCH} THEN
    -- A small batch (one command's append, mostly): point look-ups by the unique indexes, cached plans
    -- that stay right at any table size; planning the set queries below would cost more than they save.
    v_names := '{}';
    v_slot := '{}';
    v_revs := '{}';
    FOR i IN 1 .. v_items LOOP
      v_k := array_position(v_names, p_streams[i]);
      IF v_k IS NULL THEN
        v_names := array_append(v_names, p_streams[i]);
        v_k := cardinality(v_names);
        v_revs := array_append(v_revs, coalesce((SELECT e.stream_revision FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.stream_id = p_streams[i] ORDER BY e.stream_revision DESC LIMIT 1), -1));
      END IF;
      v_slot := array_append(v_slot, v_k);
    END LOOP;
    v_special := '{}';
    FOR k IN 1 .. cardinality(p_ids) LOOP
      IF EXISTS (SELECT 1 FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_ids[k])
         OR EXISTS (SELECT 1 FROM ${s}.noop_keys n WHERE n.workspace_id = p_ws AND n.key = p_ids[k]) THEN
        v_special := array_append(v_special, p_ids[k]);
      END IF;
    END LOOP;
  ELSE
    -- Each item's stream as a slot 1..d of the batch's distinct streams (in name order), and each slot's
    -- last revision: one step down the (workspace, stream, revision) index per distinct stream.
    SELECT array_agg(d.slot ORDER BY u.ord) INTO v_slot
      FROM unnest(p_streams) WITH ORDINALITY AS u(name, ord)
      JOIN (SELECT z.name, (row_number() OVER (ORDER BY z.name))::int AS slot FROM (SELECT DISTINCT name FROM unnest(p_streams) AS x(name)) z) d ON d.name = u.name;
    EXECUTE 'SELECT array_agg(coalesce((SELECT e.stream_revision FROM ${s}.events e WHERE e.workspace_id = $1 AND e.stream_id = z.name ORDER BY e.stream_revision DESC LIMIT 1), -1) ORDER BY z.name)'
         || ' FROM (SELECT DISTINCT name FROM unnest($2::text[]) AS x(name)) z'
      INTO v_revs USING p_ws, p_streams;
    -- The ids that need v1's item-by-item path: already stored (a retry or a conflict), spent by a no-op
    -- command, or sent more than once in this batch. One index probe per id (a LATERAL with LIMIT cannot
    -- become a hash join over the workspace's rows, which stale statistics made the planner choose for
    -- EXISTS).
    EXECUTE 'SELECT coalesce(array_agg(x.id), ''{}'') FROM unnest($2::text[]) AS x(id), LATERAL (SELECT 1 FROM ${s}.events e WHERE e.workspace_id = $1 AND e.event_id = x.id LIMIT 1) f'
      INTO v_special USING p_ws, p_ids;
    EXECUTE 'SELECT $3 || coalesce(array_agg(x.id), ''{}'') FROM unnest($2::text[]) AS x(id), LATERAL (SELECT 1 FROM ${s}.noop_keys n WHERE n.workspace_id = $1 AND n.key = x.id LIMIT 1) f'
      INTO v_special USING p_ws, p_ids, v_special;
  END IF;
  IF cardinality(p_ids) > 1 THEN
    v_special := v_special || coalesce((SELECT array_agg(x.id) FROM (SELECT id FROM unnest(p_ids) AS y(id) GROUP BY id HAVING count(*) > 1) x), '{}');
  END IF;
  FOR i IN 1 .. v_items LOOP
    item := i - 1; status := NULL; first_pos := NULL; last_pos := NULL; next_rev := NULL; detail := NULL;
    v_n := p_counts[i];
    IF cardinality(v_special) = 0 OR NOT (p_ids[v_off + 1 : v_off + v_n] && v_special) THEN
      -- Fresh ids: decided from the batch's own state, rows kept for one INSERT.
      v_cur := v_revs[v_slot[i]];
      v_exp := p_expected[i];
      IF NOT (v_exp = -3 OR (v_exp = -1 AND v_cur = -1) OR (v_exp = -2 AND v_cur >= 0) OR v_exp = v_cur) THEN
        status := 'wrong_expected'; next_rev := v_cur;
      ELSE
        FOR k IN 1 .. v_n LOOP
          v_k := v_off + k;
          v_hash := ${s}.chain_hash(v_hash, v_head + k, p_streams[i], v_cur + k, p_types[v_k], p_versions[v_k], p_data[v_k], p_meta[v_k], p_ids[v_k]);
          r_ix := array_append(r_ix, v_k);
          r_item := array_append(r_item, i);
          r_pos := array_append(r_pos, v_head + k);
          r_rev := array_append(r_rev, v_cur + k);
          r_hash := array_append(r_hash, decode(v_hash, 'hex'));
        END LOOP;
        status := 'ok'; first_pos := v_head + 1; last_pos := v_head + v_n; next_rev := v_cur + v_n;
        v_head := v_head + v_n;
        v_revs[v_slot[i]] := v_cur + v_n;
      END IF;
    ELSE
      -- v1's path, item by item, on the rows written so far.
      IF cardinality(r_ix) > 0 THEN
        INSERT INTO ${s}.events (workspace_id, global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash)
          SELECT p_ws, r.pos, p_ids[r.ix], p_streams[r.it], r.rev, p_types[r.ix], p_versions[r.ix], p_data[r.ix], p_meta[r.ix], r.h
          FROM unnest(r_ix, r_item, r_pos, r_rev, r_hash) AS r(ix, it, pos, rev, h);
        r_ix := '{}'; r_item := '{}'; r_pos := '{}'; r_rev := '{}'; r_hash := '{}';
      END IF;
      -- Idempotency first: a retry of an append that landed answers as the original did.
      SELECT e.stream_id, e.stream_revision, e.global_position, e.metadata INTO v_first
        FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_ids[v_off + 1];
      IF FOUND THEN
        -- Only the same caller, command and payload digest is a retry (port.ts sameCommand): one key sent at
        -- once with two payloads derives the same ids, and the loser must not be told "recorded".
        IF v_first.stream_id <> p_streams[i]
           OR (v_first.metadata::jsonb ->> 'principal') IS DISTINCT FROM (p_meta[v_off + 1]::jsonb ->> 'principal')
           OR (v_first.metadata::jsonb ->> 'command') IS DISTINCT FROM (p_meta[v_off + 1]::jsonb ->> 'command')
           OR (v_first.metadata::jsonb ->> 'commandDigest') IS DISTINCT FROM (p_meta[v_off + 1]::jsonb ->> 'commandDigest') THEN
          status := 'duplicate_id'; detail := p_ids[v_off + 1];
        ELSE
          status := 'duplicate'; first_pos := v_first.global_position; last_pos := first_pos; next_rev := v_first.stream_revision;
          FOR k IN 2 .. v_n LOOP
            SELECT e.stream_id, e.stream_revision, e.global_position INTO v_row
              FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_ids[v_off + k];
            IF NOT FOUND OR v_row.stream_id <> p_streams[i] OR v_row.stream_revision <> v_first.stream_revision + k - 1 THEN
              status := 'duplicate_id'; detail := p_ids[v_off + k]; first_pos := NULL; last_pos := NULL; next_rev := NULL;
              EXIT;
            END IF;
            last_pos := v_row.global_position; next_rev := v_row.stream_revision;
          END LOOP;
        END IF;
      ELSE
        v_cur := coalesce((SELECT e.stream_revision FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.stream_id = p_streams[i] ORDER BY e.stream_revision DESC LIMIT 1), -1);
        v_exp := p_expected[i];
        IF NOT (v_exp = -3 OR (v_exp = -1 AND v_cur = -1) OR (v_exp = -2 AND v_cur >= 0) OR v_exp = v_cur) THEN
          status := 'wrong_expected'; next_rev := v_cur;
        ELSE
          -- Checked up front so a refused append never raises: no subtransaction per item is needed.
          FOR k IN 1 .. v_n LOOP
            PERFORM 1 FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_ids[v_off + k];
            IF FOUND THEN
              detail := p_ids[v_off + k];
              EXIT;
            END IF;
          END LOOP;
          IF detail IS NULL AND (SELECT count(DISTINCT x.id) FROM unnest(p_ids[v_off + 1 : v_off + v_n]) AS x(id)) <> v_n THEN
            detail := p_ids[v_off + 1];
          END IF;
          -- A key a no-op command already spent (claim_noop) is not free for events.
          IF detail IS NULL AND EXISTS (SELECT 1 FROM ${s}.noop_keys n WHERE n.workspace_id = p_ws AND n.key = p_ids[v_off + 1]) THEN
            detail := p_ids[v_off + 1];
          END IF;
          IF detail IS NOT NULL THEN
            status := 'duplicate_id';
          ELSE
            v_hashes := '{}';
            FOR k IN 1 .. v_n LOOP
              v_hash := ${s}.chain_hash(v_hash, v_head + k, p_streams[i], v_cur + k, p_types[v_off + k], p_versions[v_off + k], p_data[v_off + k], p_meta[v_off + k], p_ids[v_off + k]);
              v_hashes := v_hashes || decode(v_hash, 'hex');
            END LOOP;
            INSERT INTO ${s}.events (workspace_id, global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash)
              SELECT p_ws, v_head + k, p_ids[v_off + k], p_streams[i], v_cur + k, p_types[v_off + k], p_versions[v_off + k], p_data[v_off + k], p_meta[v_off + k], v_hashes[k]
              FROM generate_series(1, v_n) AS k;
            status := 'ok'; first_pos := v_head + 1; last_pos := v_head + v_n; next_rev := v_cur + v_n;
            v_head := v_head + v_n;
            v_revs[v_slot[i]] := v_cur + v_n;
          END IF;
        END IF;
      END IF;
    END IF;
    v_off := v_off + v_n;
    RETURN NEXT;
  END LOOP;
  IF cardinality(r_ix) > 0 THEN
    INSERT INTO ${s}.events (workspace_id, global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash)
      SELECT p_ws, r.pos, p_ids[r.ix], p_streams[r.it], r.rev, p_types[r.ix], p_versions[r.ix], p_data[r.ix], p_meta[r.ix], r.h
      FROM unnest(r_ix, r_item, r_pos, r_rev, r_hash) AS r(ix, it, pos, rev, h);
  END IF;
  IF v_head > v_start THEN
    UPDATE ${s}.heads SET position = v_head, hash = v_hash WHERE workspace_id = p_ws;
  END IF;
END
$fn$;
`;
}

/** Up to this many positions between what a process accounts for and its append, the append names their streams. */
export const SEEN_RANGE_MAX = 256;
/** Schema v3's announcement carried its commit's rows only when there were at most this many (v6: every row, in chunks). */
const ANNOUNCED_ROWS_MAX_V3 = 16;

/**
 * The parts of `append_commit` that steps 3 and 6 share, text for text (each step's digest is pinned):
 * its signature, the loop over append_batch's answers up to each appended item's own work, and the
 * `seen` row.
 */
const appendCommitSignature = (s: string): string => `CREATE OR REPLACE FUNCTION ${s}.append_commit(
  p_ws text, p_streams text[], p_expected bigint[], p_counts int[],
  p_ids text[], p_types text[], p_versions int[], p_data text[], p_meta text[],
  p_after bigint, p_channel text, p_origin text)
RETURNS TABLE (item int, status text, first_pos bigint, last_pos bigint, next_rev bigint, detail text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
`;
const appendCommitBatchLoop = (s: string): string => `  -- Where each item's events start in the id/type/data arrays (for the announcement's rows).
  FOR i IN 1 .. coalesce(array_length(p_counts, 1), 0) LOOP
    v_offs := array_append(v_offs, v_o);
    v_o := v_o + p_counts[i];
  END LOOP;
  FOR r IN SELECT b.item, b.status, b.first_pos, b.last_pos, b.next_rev, b.detail
      FROM ${s}.append_batch(p_ws, p_streams, p_expected, p_counts, p_ids, p_types, p_versions, p_data, p_meta) b LOOP
    item := r.item; status := r.status; first_pos := r.first_pos; last_pos := r.last_pos; next_rev := r.next_rev; detail := r.detail;
    RETURN NEXT;
    IF r.status = 'ok' THEN
      v_first := least(coalesce(v_first, r.first_pos), r.first_pos);
      v_last := greatest(coalesce(v_last, r.last_pos), r.last_pos);
      IF NOT (p_streams[r.item + 1] = ANY (v_streams)) THEN
        v_streams := array_append(v_streams, p_streams[r.item + 1]);
      END IF;
`;
const appendCommitSeenRow = (s: string): string => `  -- append_batch holds the head row lock (or took none: an empty batch) until COMMIT.
  IF v_first IS NOT NULL THEN
    v_start := v_first - 1;
  ELSE
    v_start := coalesce((SELECT h.position FROM ${s}.heads h WHERE h.workspace_id = p_ws), 0);
  END IF;
  item := -1; status := 'seen'; first_pos := p_after + 1; last_pos := v_start; next_rev := NULL; detail := NULL;
  IF p_after >= 0 AND v_start > p_after AND v_start - p_after <= ${SEEN_RANGE_MAX} THEN
    detail := (SELECT to_json(coalesce(array_agg(DISTINCT e.stream_id), '{}'))::text FROM ${s}.events e
      WHERE e.workspace_id = p_ws AND e.global_position > p_after AND e.global_position <= v_start);
  ELSIF p_after >= 0 AND v_start <= p_after THEN
    detail := '[]';
  END IF;
  RETURN NEXT;
`;

/**
 * Schema v3: `append_commit`, the group commit as ONE round trip that also tells (issue 35, freshness per
 * stream). It runs `append_batch` (v2, unchanged: same answers for each item) and then, still under the
 * workspace's head lock:
 *  - one row more (item −1, status `seen`): the positions (p_after, start] other transactions appended
 *    since the position the caller accounts for (`p_after`), and in `detail` the JSON array of their
 *    streams (NULL when there are more than SEEN_RANGE_MAX of them, or p_after < 0: the caller
 *    then cannot place them). A process thus learns from its own append which streams the others moved,
 *    with no gap, whether or not their announcements have reached it;
 *  - with `p_channel` set, the announcement of what this commit appended, sent in the same transaction
 *    (pg_notify, delivered at COMMIT, so it is never lost while the commit stands): JSON
 *    {"w": workspace, "f": first, "l": last position, "o": p_origin, "s": [streams], "r": [rows]}: "r" the
 *    commit's rows as stored ([position, id, stream, revision, type, version, data, metadata]) when there are
 *    at most ANNOUNCED_ROWS_MAX_V3 of them, so the others fold them without reading; "r", then "s", left out
 *    when the payload would near PostgreSQL's 8000-byte limit. NULL: the caller announces after the commit
 *    (at synchronous_commit = on: see PostgresBackend.announce).
 * A new function beside append_batch: processes still on v2's code keep calling append_batch.
 */
export function appendCommitSql(schema: string): string {
  const s = `"${schema}"`;
  return `
${appendCommitSignature(s)}DECLARE
  r record;
  v_first bigint;
  v_last bigint;
  v_start bigint;
  v_streams text[] := '{}';
  v_payload text;
  v_offs int[] := '{}';
  v_rows json[] := '{}';
  v_no_rows boolean := false;
  v_o int := 0;
BEGIN
${appendCommitBatchLoop(s)}      IF p_channel IS NOT NULL AND NOT v_no_rows THEN
        IF cardinality(v_rows) + p_counts[r.item + 1] > ${ANNOUNCED_ROWS_MAX_V3} THEN
          v_no_rows := true;
          v_rows := '{}';
        ELSE
          FOR k IN 1 .. p_counts[r.item + 1] LOOP
            v_o := v_offs[r.item + 1] + k;
            v_rows := array_append(v_rows, json_build_array(r.first_pos + k - 1, p_ids[v_o], p_streams[r.item + 1], r.next_rev - p_counts[r.item + 1] + k, p_types[v_o], p_versions[v_o], p_data[v_o], p_meta[v_o]));
          END LOOP;
        END IF;
      END IF;
    END IF;
  END LOOP;
${appendCommitSeenRow(s)}  IF v_last IS NOT NULL AND p_channel IS NOT NULL THEN
    -- The rows themselves when they fit (ordered by position: the loop saw the items in batch order,
    -- and append_batch numbers them in that order), so the others fold them without reading.
    IF NOT v_no_rows THEN
      v_payload := json_build_object('w', p_ws, 'f', v_first, 'l', v_last, 'o', p_origin, 's', v_streams, 'r', array_to_json(v_rows))::text;
    END IF;
    IF v_no_rows OR octet_length(v_payload) > 7900 THEN
      v_payload := json_build_object('w', p_ws, 'f', v_first, 'l', v_last, 'o', p_origin, 's', v_streams)::text;
    END IF;
    IF octet_length(v_payload) > 7900 THEN
      v_payload := json_build_object('w', p_ws, 'f', v_first, 'l', v_last, 'o', p_origin)::text;
    END IF;
    PERFORM pg_notify(p_channel, v_payload);
  END IF;
END
$fn$;
`;
}

/**
 * Schema v4: `append_guarded`, append_commit with a guard per item (issue 35: the token check without a
 * read). `p_guard_streams[i]` (NULL: no guard) must still be at revision `p_guard_revs[i]` (-1: no such
 * stream) under the workspace's head lock, else item i is answered `guard_moved` (next_rev: the revision
 * found, detail: the stream) and nothing of it is written; the other items go to append_commit as they
 * are (its item numbers mapped back). A guard on a stream that an earlier item of the batch appends to
 * counts as moved: that item may land first. Without guards (NULL arrays) it is append_commit itself.
 */
export function appendGuardedSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE OR REPLACE FUNCTION ${s}.append_guarded(
  p_ws text, p_streams text[], p_expected bigint[], p_counts int[],
  p_ids text[], p_types text[], p_versions int[], p_data text[], p_meta text[],
  p_after bigint, p_channel text, p_origin text, p_guard_streams text[], p_guard_revs bigint[])
RETURNS TABLE (item int, status text, first_pos bigint, last_pos bigint, next_rev bigint, detail text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_items int := coalesce(array_length(p_streams, 1), 0);
  v_keep int[] := '{}';
  v_streams text[] := '{}';
  v_expected bigint[] := '{}';
  v_counts int[] := '{}';
  v_ids text[] := '{}';
  v_types text[] := '{}';
  v_versions int[] := '{}';
  v_data text[] := '{}';
  v_meta text[] := '{}';
  v_off int := 0;
  v_n int;
  v_rev bigint;
  r record;
BEGIN
  IF p_guard_streams IS NULL THEN
    RETURN QUERY SELECT * FROM ${s}.append_commit(p_ws, p_streams, p_expected, p_counts, p_ids, p_types, p_versions, p_data, p_meta, p_after, p_channel, p_origin);
    RETURN;
  END IF;
  -- The head row lock first (as append_batch takes it): no append of this workspace commits between the
  -- guards' reads below and this transaction's COMMIT, and each read sees every commit before it.
  PERFORM 1 FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO ${s}.heads (workspace_id, position, hash) VALUES (p_ws, 0, ${s}.chain_genesis(p_ws)) ON CONFLICT DO NOTHING;
    PERFORM 1 FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  END IF;
  FOR i IN 1 .. v_items LOOP
    v_n := p_counts[i];
    v_rev := NULL;
    IF p_guard_streams[i] IS NOT NULL THEN
      IF p_guard_streams[i] = ANY (v_streams) THEN
        v_rev := -2;
      ELSE
        v_rev := coalesce((SELECT e.stream_revision FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.stream_id = p_guard_streams[i] ORDER BY e.stream_revision DESC LIMIT 1), -1);
      END IF;
    END IF;
    IF v_rev IS NOT NULL AND v_rev IS DISTINCT FROM p_guard_revs[i] THEN
      item := i - 1; status := 'guard_moved'; first_pos := NULL; last_pos := NULL; next_rev := v_rev; detail := p_guard_streams[i];
      RETURN NEXT;
    ELSE
      v_keep := array_append(v_keep, i - 1);
      v_streams := array_append(v_streams, p_streams[i]);
      v_expected := array_append(v_expected, p_expected[i]);
      v_counts := array_append(v_counts, v_n);
      v_ids := v_ids || p_ids[v_off + 1 : v_off + v_n];
      v_types := v_types || p_types[v_off + 1 : v_off + v_n];
      v_versions := v_versions || p_versions[v_off + 1 : v_off + v_n];
      v_data := v_data || p_data[v_off + 1 : v_off + v_n];
      v_meta := v_meta || p_meta[v_off + 1 : v_off + v_n];
    END IF;
    v_off := v_off + v_n;
  END LOOP;
  FOR r IN SELECT c.item, c.status, c.first_pos, c.last_pos, c.next_rev, c.detail
      FROM ${s}.append_commit(p_ws, v_streams, v_expected, v_counts, v_ids, v_types, v_versions, v_data, v_meta, p_after, p_channel, p_origin) c LOOP
    item := CASE WHEN r.item < 0 THEN r.item ELSE v_keep[r.item + 1] END;
    status := r.status; first_pos := r.first_pos; last_pos := r.last_pos; next_rev := r.next_rev; detail := r.detail;
    RETURN NEXT;
  END LOOP;
END
$fn$;
`;
}

/** The largest announcement payload sent (PostgreSQL refuses 8,000 bytes or more, and the whole commit with it). */
export const ANNOUNCE_PAYLOAD_MAX = 7900;

/**
 * Schema v6: a commit of at most this many rows is announced with all of them (in chunks); a larger one
 * (a bulk import, a replay) by its range and streams only, and the others read it — one page for many
 * rows. Announcing every row of 500-item bulk commits cost PostgreSQL ~8 µs more per event (JSON rows,
 * ~60 notifications per commit) and bulk appends ~12 % of their rate (bench:store --grow 200k).
 */
export const ANNOUNCED_ROWS_MAX = 64;

/**
 * Schema v6: `append_commit` announces every row of its commit (issue 35: a pg×2 server read 0.28 PR
 * streams and 0.29 subscription pages per command, because v3 sent rows only for commits of at most
 * ANNOUNCED_ROWS_MAX_V3 rows in one payload — ~7 filings — and a group commit under load is larger). The
 * rows of a commit of at most ANNOUNCED_ROWS_MAX are split into consecutive chunks, each one announcement
 * {"w","f","l","o","s","r"} of at most ANNOUNCE_PAYLOAD_MAX bytes over its own positions and streams: a
 * receiver places each chunk as a commit of its own (the chunks of one transaction are delivered together
 * at COMMIT, in order). A row too large for a payload of its own is announced without rows (its range and
 * stream: the others read it), and so is a larger commit, whole. Everything else as v3 (the same answers,
 * the same `seen` row); append_guarded calls it unchanged.
 */
export function appendCommitChunkedSql(schema: string): string {
  const s = `"${schema}"`;
  return `
${appendCommitSignature(s)}DECLARE
  r record;
  v_first bigint;
  v_last bigint;
  v_start bigint;
  v_streams text[] := '{}';
  v_payload text;
  v_offs int[] := '{}';
  v_rows json[] := '{}';
  v_row_pos bigint[] := '{}';
  v_row_stream text[] := '{}';
  v_no_rows boolean := false;
  v_o int := 0;
  v_i int;
  v_n int;
  v_base int;
  v_size int;
  v_len int;
  v_chunk json[];
  v_chunk_streams text[];
  v_chunk_first bigint;
BEGIN
${appendCommitBatchLoop(s)}      IF p_channel IS NOT NULL AND NOT v_no_rows THEN
        IF cardinality(v_rows) + p_counts[r.item + 1] > ${ANNOUNCED_ROWS_MAX} THEN
          v_no_rows := true;
          v_rows := '{}';
        ELSE
          FOR k IN 1 .. p_counts[r.item + 1] LOOP
            v_o := v_offs[r.item + 1] + k;
            v_rows := array_append(v_rows, json_build_array(r.first_pos + k - 1, p_ids[v_o], p_streams[r.item + 1], r.next_rev - p_counts[r.item + 1] + k, p_types[v_o], p_versions[v_o], p_data[v_o], p_meta[v_o]));
            v_row_pos := array_append(v_row_pos, r.first_pos + k - 1);
            v_row_stream := array_append(v_row_stream, p_streams[r.item + 1]);
          END LOOP;
        END IF;
      END IF;
    END IF;
  END LOOP;
${appendCommitSeenRow(s)}  IF v_last IS NOT NULL AND p_channel IS NOT NULL AND v_no_rows THEN
    -- A bulk commit: its range and streams (the others read it: one page for many rows).
    v_payload := json_build_object('w', p_ws, 'f', v_first, 'l', v_last, 'o', p_origin, 's', v_streams)::text;
    IF octet_length(v_payload) > ${ANNOUNCE_PAYLOAD_MAX} THEN
      v_payload := json_build_object('w', p_ws, 'f', v_first, 'l', v_last, 'o', p_origin)::text;
    END IF;
    PERFORM pg_notify(p_channel, v_payload);
  ELSIF v_last IS NOT NULL AND p_channel IS NOT NULL THEN
    -- Rows in position order (append_batch numbers the items in batch order, the loop saw them so).
    -- Chunks: as many consecutive rows as fit, by an upper bound of their bytes in the payload; the
    -- payload built is checked again, so pg_notify never gets more than ${ANNOUNCE_PAYLOAD_MAX} bytes.
    v_base := octet_length(json_build_object('w', p_ws, 'f', v_last, 'l', v_last, 'o', p_origin, 's', '{}'::text[], 'r', '[]'::json)::text);
    v_n := cardinality(v_rows);
    v_i := 1;
    WHILE v_i <= v_n LOOP
      v_chunk := '{}';
      v_chunk_streams := '{}';
      v_chunk_first := v_row_pos[v_i];
      v_size := v_base;
      LOOP
        v_len := octet_length(v_rows[v_i]::text) + 2;
        IF NOT (v_row_stream[v_i] = ANY (v_chunk_streams)) THEN
          v_len := v_len + octet_length(to_json(v_row_stream[v_i])::text) + 2;
        END IF;
        EXIT WHEN cardinality(v_chunk) > 0 AND v_size + v_len > ${ANNOUNCE_PAYLOAD_MAX};
        v_chunk := array_append(v_chunk, v_rows[v_i]);
        IF NOT (v_row_stream[v_i] = ANY (v_chunk_streams)) THEN
          v_chunk_streams := array_append(v_chunk_streams, v_row_stream[v_i]);
        END IF;
        v_size := v_size + v_len;
        v_i := v_i + 1;
        EXIT WHEN v_i > v_n;
      END LOOP;
      v_payload := json_build_object('w', p_ws, 'f', v_chunk_first, 'l', v_chunk_first + cardinality(v_chunk) - 1, 'o', p_origin, 's', v_chunk_streams, 'r', array_to_json(v_chunk))::text;
      IF octet_length(v_payload) > ${ANNOUNCE_PAYLOAD_MAX} THEN
        v_payload := json_build_object('w', p_ws, 'f', v_chunk_first, 'l', v_chunk_first + cardinality(v_chunk) - 1, 'o', p_origin, 's', v_chunk_streams)::text;
      END IF;
      IF octet_length(v_payload) > ${ANNOUNCE_PAYLOAD_MAX} THEN
        v_payload := json_build_object('w', p_ws, 'f', v_chunk_first, 'l', v_chunk_first + cardinality(v_chunk) - 1, 'o', p_origin)::text;
      END IF;
      PERFORM pg_notify(p_channel, v_payload);
    END LOOP;
  END IF;
END
$fn$;
`;
}

/**
 * Schema v5: `chain_hash` in PL/pgSQL, the same expression (the same bytes as chainHash() in
 * src/events/chain.ts). As an SQL function called from PL/pgSQL it was not inlined: its body was parsed
 * and planned again at its first call in every transaction — 0.16–0.20 ms of PostgreSQL's CPU per group
 * commit, against 0.03 ms now (pg_stat_user_functions, one-event commits: append_guarded 0.41–0.50 →
 * 0.29–0.30 ms per call). A PL/pgSQL function keeps its compiled body for the session.
 */
export function chainHashPlpgsqlSql(schema: string): string {
  const s = `"${schema}"`;
  return `
${chainHashSignature(s)}
RETURNS text LANGUAGE plpgsql IMMUTABLE AS $fn$
BEGIN
  RETURN ${CHAIN_HASH_EXPR};
END
$fn$;
`;
}

/**
 * Schema v7: `append_fused`, the group commit of append_guarded (v4) → append_commit (v6) → append_batch (v2)
 * as ONE PL/pgSQL function, with the same arguments as append_guarded and the same answers (issue 35). PL/pgSQL
 * prepares each expression it evaluates once per transaction, and every group commit is a transaction of its
 * own: the three layers' expressions, two nested set-returning calls (each answer row stored in a tuplestore
 * and copied into the next layer's) and append_guarded's copies of every array cost PostgreSQL more than the
 * append itself. Measured (a script calling each function with 6 one-event appends, PostgreSQL's CPU per
 * call, 4 rounds): append_batch alone 473–673 µs, append_guarded with guards 780–1,087 µs. One function
 * also takes the head lock once and knows the head before the commit without reading it again (the seen
 * row's start). The bodies are the earlier steps' own, joined: append_batch's loop answers each item after
 * append_commit's bookkeeping for it, and guards are checked first under the same lock. append_batch's body
 * is copied here, not called: a call is the layer this step removes, and a step's text is frozen once a
 * database ran it (pinned by digest), so neither may later change under the other. The earlier
 * functions stay (processes on older code call them; they take the same lock and write the same rows).
 */
export function appendFusedSql(schema: string): string {
  const s = `"${schema}"`;
  /** As append_batch (v2): up to this many events, a batch is checked by point look-ups. */
  const SMALL_BATCH = 16;
  return `
CREATE OR REPLACE FUNCTION ${s}.append_fused(
  p_ws text, p_streams text[], p_expected bigint[], p_counts int[],
  p_ids text[], p_types text[], p_versions int[], p_data text[], p_meta text[],
  p_after bigint, p_channel text, p_origin text, p_guard_streams text[], p_guard_revs bigint[])
RETURNS TABLE (item int, status text, first_pos bigint, last_pos bigint, next_rev bigint, detail text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_items int := coalesce(array_length(p_streams, 1), 0);
  v_head bigint;
  v_start bigint;
  v_off int := 0;
  v_n int;
  v_cur bigint;
  v_exp bigint;
  v_first record;
  v_row record;
  v_hash text;
  v_hashes bytea[];
  v_revs bigint[];
  v_slot int[];
  v_special text[];
  v_names text[];
  v_k int;
  r_ix int[] := '{}';
  r_item int[] := '{}';
  r_pos bigint[] := '{}';
  r_rev bigint[] := '{}';
  r_hash bytea[] := '{}';
  v_keep int[];
  v_kept_streams text[] := '{}';
  v_grev bigint;
  v_k_expected bigint[];
  v_k_counts int[];
  v_k_ids text[];
  v_k_types text[];
  v_k_versions int[];
  v_k_data text[];
  v_k_meta text[];
  v_cfirst bigint;
  v_clast bigint;
  v_streams text[] := '{}';
  v_payload text;
  v_rows json[] := '{}';
  v_row_pos bigint[] := '{}';
  v_row_stream text[] := '{}';
  v_no_rows boolean := false;
  v_i int;
  v_cn int;
  v_base int;
  v_size int;
  v_len int;
  v_chunk json[];
  v_chunk_streams text[];
  v_chunk_first bigint;
  v_look text[] := '{}';
  v_look_revs bigint[] := '{}';
BEGIN
  -- The workspace's head row lock serializes appends until COMMIT: see the header of postgres.ts.
  -- The same lock orders the hash chain: the head row carries the hash of the last event.
  SELECT h.position, h.hash INTO v_head, v_hash FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO ${s}.heads (workspace_id, position, hash) VALUES (p_ws, 0, ${s}.chain_genesis(p_ws)) ON CONFLICT DO NOTHING;
    SELECT h.position, h.hash INTO v_head, v_hash FROM ${s}.heads h WHERE h.workspace_id = p_ws FOR UPDATE;
  END IF;
  IF v_hash IS NULL THEN
    PERFORM ${s}.chain_backfill(p_ws);
    SELECT h.hash INTO v_hash FROM ${s}.heads h WHERE h.workspace_id = p_ws;
  END IF;
  v_start := v_head;
  -- append_guarded's part (v4): each guard under the head lock; an item whose guard moved is answered
  -- guard_moved and taken out, the others go on renumbered (v_keep maps back; NULL: none taken out).
  IF p_guard_streams IS NOT NULL THEN
    v_keep := '{}';
    FOR i IN 1 .. v_items LOOP
      v_grev := NULL;
      IF p_guard_streams[i] IS NOT NULL THEN
        IF p_guard_streams[i] = ANY (v_kept_streams) THEN
          v_grev := -2;
        ELSE
          -- One look-up per guarded stream (nothing is written before every guard is checked).
          v_k := array_position(v_look, p_guard_streams[i]);
          IF v_k IS NULL THEN
            v_look := array_append(v_look, p_guard_streams[i]);
            v_look_revs := array_append(v_look_revs, coalesce((SELECT e.stream_revision FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.stream_id = p_guard_streams[i] ORDER BY e.stream_revision DESC LIMIT 1), -1));
            v_k := cardinality(v_look);
          END IF;
          v_grev := v_look_revs[v_k];
        END IF;
      END IF;
      IF v_grev IS NOT NULL AND v_grev IS DISTINCT FROM p_guard_revs[i] THEN
        item := i - 1; status := 'guard_moved'; first_pos := NULL; last_pos := NULL; next_rev := v_grev; detail := p_guard_streams[i];
        RETURN NEXT;
      ELSE
        v_keep := array_append(v_keep, i - 1);
        v_kept_streams := array_append(v_kept_streams, p_streams[i]);
      END IF;
    END LOOP;
    IF cardinality(v_keep) = v_items THEN
      v_keep := NULL;
    ELSE
      -- Rare (a revocation raced the command): the kept items' arrays, as append_guarded passed them on.
      v_k_expected := '{}'; v_k_counts := '{}'; v_k_ids := '{}'; v_k_types := '{}'; v_k_versions := '{}'; v_k_data := '{}'; v_k_meta := '{}';
      FOR i IN 1 .. v_items LOOP
        v_n := p_counts[i];
        IF (i - 1) = ANY (v_keep) THEN
          v_k_expected := array_append(v_k_expected, p_expected[i]);
          v_k_counts := array_append(v_k_counts, v_n);
          v_k_ids := v_k_ids || p_ids[v_off + 1 : v_off + v_n];
          v_k_types := v_k_types || p_types[v_off + 1 : v_off + v_n];
          v_k_versions := v_k_versions || p_versions[v_off + 1 : v_off + v_n];
          v_k_data := v_k_data || p_data[v_off + 1 : v_off + v_n];
          v_k_meta := v_k_meta || p_meta[v_off + 1 : v_off + v_n];
        END IF;
        v_off := v_off + v_n;
      END LOOP;
      v_off := 0;
      p_streams := v_kept_streams; p_expected := v_k_expected; p_counts := v_k_counts; p_ids := v_k_ids;
      p_types := v_k_types; p_versions := v_k_versions; p_data := v_k_data; p_meta := v_k_meta;
      v_items := cardinality(v_keep);
    END IF;
  END IF;
  IF v_items > 0 THEN
    IF cardinality(p_ids) <= ${SMALL_BATCH} THEN
      -- A small batch (one command's append, mostly): point look-ups by the unique indexes, cached plans
      -- that stay right at any table size; planning the set queries below would cost more than they save.
      v_names := '{}';
      v_slot := '{}';
      v_revs := '{}';
      FOR i IN 1 .. v_items LOOP
        v_k := array_position(v_names, p_streams[i]);
        IF v_k IS NULL THEN
          v_names := array_append(v_names, p_streams[i]);
          v_k := cardinality(v_names);
          v_revs := array_append(v_revs, coalesce((SELECT e.stream_revision FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.stream_id = p_streams[i] ORDER BY e.stream_revision DESC LIMIT 1), -1));
        END IF;
        v_slot := array_append(v_slot, v_k);
      END LOOP;
      v_special := '{}';
      FOR k IN 1 .. cardinality(p_ids) LOOP
        IF EXISTS (SELECT 1 FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_ids[k])
           OR EXISTS (SELECT 1 FROM ${s}.noop_keys n WHERE n.workspace_id = p_ws AND n.key = p_ids[k]) THEN
          v_special := array_append(v_special, p_ids[k]);
        END IF;
      END LOOP;
    ELSE
      -- Each item's stream as a slot 1..d of the batch's distinct streams (in name order), and each slot's
      -- last revision: one step down the (workspace, stream, revision) index per distinct stream.
      SELECT array_agg(d.slot ORDER BY u.ord) INTO v_slot
        FROM unnest(p_streams) WITH ORDINALITY AS u(name, ord)
        JOIN (SELECT z.name, (row_number() OVER (ORDER BY z.name))::int AS slot FROM (SELECT DISTINCT name FROM unnest(p_streams) AS x(name)) z) d ON d.name = u.name;
      EXECUTE 'SELECT array_agg(coalesce((SELECT e.stream_revision FROM ${s}.events e WHERE e.workspace_id = $1 AND e.stream_id = z.name ORDER BY e.stream_revision DESC LIMIT 1), -1) ORDER BY z.name)'
           || ' FROM (SELECT DISTINCT name FROM unnest($2::text[]) AS x(name)) z'
        INTO v_revs USING p_ws, p_streams;
      -- The ids that need v1's item-by-item path: already stored (a retry or a conflict), spent by a no-op
      -- command, or sent more than once in this batch. One index probe per id (a LATERAL with LIMIT cannot
      -- become a hash join over the workspace's rows, which stale statistics made the planner choose for
      -- EXISTS).
      EXECUTE 'SELECT coalesce(array_agg(x.id), ''{}'') FROM unnest($2::text[]) AS x(id), LATERAL (SELECT 1 FROM ${s}.events e WHERE e.workspace_id = $1 AND e.event_id = x.id LIMIT 1) f'
        INTO v_special USING p_ws, p_ids;
      EXECUTE 'SELECT $3 || coalesce(array_agg(x.id), ''{}'') FROM unnest($2::text[]) AS x(id), LATERAL (SELECT 1 FROM ${s}.noop_keys n WHERE n.workspace_id = $1 AND n.key = x.id LIMIT 1) f'
        INTO v_special USING p_ws, p_ids, v_special;
    END IF;
    IF cardinality(p_ids) > 1 THEN
      v_special := v_special || coalesce((SELECT array_agg(x.id) FROM (SELECT id FROM unnest(p_ids) AS y(id) GROUP BY id HAVING count(*) > 1) x), '{}');
    END IF;
    FOR i IN 1 .. v_items LOOP
      item := i - 1; status := NULL; first_pos := NULL; last_pos := NULL; next_rev := NULL; detail := NULL;
      v_n := p_counts[i];
      IF cardinality(v_special) = 0 OR NOT (p_ids[v_off + 1 : v_off + v_n] && v_special) THEN
        -- Fresh ids: decided from the batch's own state, rows kept for one INSERT.
        v_cur := v_revs[v_slot[i]];
        v_exp := p_expected[i];
        IF NOT (v_exp = -3 OR (v_exp = -1 AND v_cur = -1) OR (v_exp = -2 AND v_cur >= 0) OR v_exp = v_cur) THEN
          status := 'wrong_expected'; next_rev := v_cur;
        ELSE
          FOR k IN 1 .. v_n LOOP
            v_k := v_off + k;
            v_hash := ${s}.chain_hash(v_hash, v_head + k, p_streams[i], v_cur + k, p_types[v_k], p_versions[v_k], p_data[v_k], p_meta[v_k], p_ids[v_k]);
            r_ix := array_append(r_ix, v_k);
            r_item := array_append(r_item, i);
            r_pos := array_append(r_pos, v_head + k);
            r_rev := array_append(r_rev, v_cur + k);
            r_hash := array_append(r_hash, decode(v_hash, 'hex'));
          END LOOP;
          status := 'ok'; first_pos := v_head + 1; last_pos := v_head + v_n; next_rev := v_cur + v_n;
          v_head := v_head + v_n;
          v_revs[v_slot[i]] := v_cur + v_n;
        END IF;
      ELSE
        -- v1's path, item by item, on the rows written so far.
        IF cardinality(r_ix) > 0 THEN
          INSERT INTO ${s}.events (workspace_id, global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash)
            SELECT p_ws, r.pos, p_ids[r.ix], p_streams[r.it], r.rev, p_types[r.ix], p_versions[r.ix], p_data[r.ix], p_meta[r.ix], r.h
            FROM unnest(r_ix, r_item, r_pos, r_rev, r_hash) AS r(ix, it, pos, rev, h);
          r_ix := '{}'; r_item := '{}'; r_pos := '{}'; r_rev := '{}'; r_hash := '{}';
        END IF;
        -- Idempotency first: a retry of an append that landed answers as the original did.
        SELECT e.stream_id, e.stream_revision, e.global_position, e.metadata INTO v_first
          FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_ids[v_off + 1];
        IF FOUND THEN
          -- Only the same caller, command and payload digest is a retry (port.ts sameCommand): one key sent at
          -- once with two payloads derives the same ids, and the loser must not be told "recorded".
          IF v_first.stream_id <> p_streams[i]
             OR (v_first.metadata::jsonb ->> 'principal') IS DISTINCT FROM (p_meta[v_off + 1]::jsonb ->> 'principal')
             OR (v_first.metadata::jsonb ->> 'command') IS DISTINCT FROM (p_meta[v_off + 1]::jsonb ->> 'command')
             OR (v_first.metadata::jsonb ->> 'commandDigest') IS DISTINCT FROM (p_meta[v_off + 1]::jsonb ->> 'commandDigest') THEN
            status := 'duplicate_id'; detail := p_ids[v_off + 1];
          ELSE
            status := 'duplicate'; first_pos := v_first.global_position; last_pos := first_pos; next_rev := v_first.stream_revision;
            FOR k IN 2 .. v_n LOOP
              SELECT e.stream_id, e.stream_revision, e.global_position INTO v_row
                FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_ids[v_off + k];
              IF NOT FOUND OR v_row.stream_id <> p_streams[i] OR v_row.stream_revision <> v_first.stream_revision + k - 1 THEN
                status := 'duplicate_id'; detail := p_ids[v_off + k]; first_pos := NULL; last_pos := NULL; next_rev := NULL;
                EXIT;
              END IF;
              last_pos := v_row.global_position; next_rev := v_row.stream_revision;
            END LOOP;
          END IF;
        ELSE
          v_cur := coalesce((SELECT e.stream_revision FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.stream_id = p_streams[i] ORDER BY e.stream_revision DESC LIMIT 1), -1);
          v_exp := p_expected[i];
          IF NOT (v_exp = -3 OR (v_exp = -1 AND v_cur = -1) OR (v_exp = -2 AND v_cur >= 0) OR v_exp = v_cur) THEN
            status := 'wrong_expected'; next_rev := v_cur;
          ELSE
            -- Checked up front so a refused append never raises: no subtransaction per item is needed.
            FOR k IN 1 .. v_n LOOP
              PERFORM 1 FROM ${s}.events e WHERE e.workspace_id = p_ws AND e.event_id = p_ids[v_off + k];
              IF FOUND THEN
                detail := p_ids[v_off + k];
                EXIT;
              END IF;
            END LOOP;
            IF detail IS NULL AND (SELECT count(DISTINCT x.id) FROM unnest(p_ids[v_off + 1 : v_off + v_n]) AS x(id)) <> v_n THEN
              detail := p_ids[v_off + 1];
            END IF;
            -- A key a no-op command already spent (claim_noop) is not free for events.
            IF detail IS NULL AND EXISTS (SELECT 1 FROM ${s}.noop_keys n WHERE n.workspace_id = p_ws AND n.key = p_ids[v_off + 1]) THEN
              detail := p_ids[v_off + 1];
            END IF;
            IF detail IS NOT NULL THEN
              status := 'duplicate_id';
            ELSE
              v_hashes := '{}';
              FOR k IN 1 .. v_n LOOP
                v_hash := ${s}.chain_hash(v_hash, v_head + k, p_streams[i], v_cur + k, p_types[v_off + k], p_versions[v_off + k], p_data[v_off + k], p_meta[v_off + k], p_ids[v_off + k]);
                v_hashes := v_hashes || decode(v_hash, 'hex');
              END LOOP;
              INSERT INTO ${s}.events (workspace_id, global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash)
                SELECT p_ws, v_head + k, p_ids[v_off + k], p_streams[i], v_cur + k, p_types[v_off + k], p_versions[v_off + k], p_data[v_off + k], p_meta[v_off + k], v_hashes[k]
                FROM generate_series(1, v_n) AS k;
              status := 'ok'; first_pos := v_head + 1; last_pos := v_head + v_n; next_rev := v_cur + v_n;
              v_head := v_head + v_n;
              v_revs[v_slot[i]] := v_cur + v_n;
            END IF;
          END IF;
        END IF;
      END IF;
      -- append_commit's part (v6): what the announcement and the seen row need of each item written.
      IF status = 'ok' THEN
        v_cfirst := least(coalesce(v_cfirst, first_pos), first_pos);
        v_clast := greatest(coalesce(v_clast, last_pos), last_pos);
        IF NOT (p_streams[i] = ANY (v_streams)) THEN
          v_streams := array_append(v_streams, p_streams[i]);
        END IF;
        IF p_channel IS NOT NULL AND NOT v_no_rows THEN
          IF cardinality(v_rows) + v_n > ${ANNOUNCED_ROWS_MAX} THEN
            v_no_rows := true;
            v_rows := '{}';
          ELSE
            FOR k IN 1 .. v_n LOOP
              v_rows := array_append(v_rows, json_build_array(first_pos + k - 1, p_ids[v_off + k], p_streams[i], next_rev - v_n + k, p_types[v_off + k], p_versions[v_off + k], p_data[v_off + k], p_meta[v_off + k]));
              v_row_pos := array_append(v_row_pos, first_pos + k - 1);
              v_row_stream := array_append(v_row_stream, p_streams[i]);
            END LOOP;
          END IF;
        END IF;
      END IF;
      v_off := v_off + v_n;
      -- append_guarded's part (v4): the caller's item number when guards took items out.
      IF v_keep IS NOT NULL THEN
        item := v_keep[i];
      END IF;
      RETURN NEXT;
    END LOOP;
    IF cardinality(r_ix) > 0 THEN
      INSERT INTO ${s}.events (workspace_id, global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash)
        SELECT p_ws, r.pos, p_ids[r.ix], p_streams[r.it], r.rev, p_types[r.ix], p_versions[r.ix], p_data[r.ix], p_meta[r.ix], r.h
        FROM unnest(r_ix, r_item, r_pos, r_rev, r_hash) AS r(ix, it, pos, rev, h);
    END IF;
    IF v_head > v_start THEN
      UPDATE ${s}.heads SET position = v_head, hash = v_hash WHERE workspace_id = p_ws;
    END IF;
  END IF;
  -- append_commit's part (v6): the seen row. v_start is the head before this commit (its first row − 1,
  -- or the head when it wrote none), as append_commit derived it.
  item := -1; status := 'seen'; first_pos := p_after + 1; last_pos := v_start; next_rev := NULL; detail := NULL;
  IF p_after >= 0 AND v_start > p_after AND v_start - p_after <= ${SEEN_RANGE_MAX} THEN
    detail := (SELECT to_json(coalesce(array_agg(DISTINCT e.stream_id), '{}'))::text FROM ${s}.events e
      WHERE e.workspace_id = p_ws AND e.global_position > p_after AND e.global_position <= v_start);
  ELSIF p_after >= 0 AND v_start <= p_after THEN
    detail := '[]';
  END IF;
  RETURN NEXT;
  IF v_clast IS NOT NULL AND p_channel IS NOT NULL AND v_no_rows THEN
    -- A bulk commit: its range and streams (the others read it: one page for many rows).
    v_payload := json_build_object('w', p_ws, 'f', v_cfirst, 'l', v_clast, 'o', p_origin, 's', v_streams)::text;
    IF octet_length(v_payload) > ${ANNOUNCE_PAYLOAD_MAX} THEN
      v_payload := json_build_object('w', p_ws, 'f', v_cfirst, 'l', v_clast, 'o', p_origin)::text;
    END IF;
    PERFORM pg_notify(p_channel, v_payload);
  ELSIF v_clast IS NOT NULL AND p_channel IS NOT NULL THEN
    -- Rows in position order, in chunks of as many consecutive rows as fit (as v6's append_commit).
    v_base := octet_length(json_build_object('w', p_ws, 'f', v_clast, 'l', v_clast, 'o', p_origin, 's', '{}'::text[], 'r', '[]'::json)::text);
    v_cn := cardinality(v_rows);
    v_i := 1;
    WHILE v_i <= v_cn LOOP
      v_chunk := '{}';
      v_chunk_streams := '{}';
      v_chunk_first := v_row_pos[v_i];
      v_size := v_base;
      LOOP
        v_len := octet_length(v_rows[v_i]::text) + 2;
        IF NOT (v_row_stream[v_i] = ANY (v_chunk_streams)) THEN
          v_len := v_len + octet_length(to_json(v_row_stream[v_i])::text) + 2;
        END IF;
        EXIT WHEN cardinality(v_chunk) > 0 AND v_size + v_len > ${ANNOUNCE_PAYLOAD_MAX};
        v_chunk := array_append(v_chunk, v_rows[v_i]);
        IF NOT (v_row_stream[v_i] = ANY (v_chunk_streams)) THEN
          v_chunk_streams := array_append(v_chunk_streams, v_row_stream[v_i]);
        END IF;
        v_size := v_size + v_len;
        v_i := v_i + 1;
        EXIT WHEN v_i > v_cn;
      END LOOP;
      v_payload := json_build_object('w', p_ws, 'f', v_chunk_first, 'l', v_chunk_first + cardinality(v_chunk) - 1, 'o', p_origin, 's', v_chunk_streams, 'r', array_to_json(v_chunk))::text;
      IF octet_length(v_payload) > ${ANNOUNCE_PAYLOAD_MAX} THEN
        v_payload := json_build_object('w', p_ws, 'f', v_chunk_first, 'l', v_chunk_first + cardinality(v_chunk) - 1, 'o', p_origin, 's', v_chunk_streams)::text;
      END IF;
      IF octet_length(v_payload) > ${ANNOUNCE_PAYLOAD_MAX} THEN
        v_payload := json_build_object('w', p_ws, 'f', v_chunk_first, 'l', v_chunk_first + cardinality(v_chunk) - 1, 'o', p_origin)::text;
      END IF;
      PERFORM pg_notify(p_channel, v_payload);
    END LOOP;
  END IF;
END
$fn$;
`;
}

/**
 * The migration steps: step v brings a schema from version v − 1 to v. A database at version n runs only
 * the steps after n, each in its own transaction with its version recorded (under the advisory lock), so
 * an upgrade never re-runs an earlier step. Step 1 is the whole script of a fresh database (its ALTER
 * TABLEs lock tables: they only ever run where there is nothing to lock out, or on a database from
 * before versioning); every later step must take no ACCESS EXCLUSIVE lock on a live table (functions,
 * new tables, CREATE INDEX CONCURRENTLY outside a transaction) — it runs beside live appends.
 */
export function migrationSteps(schema: string): string[] {
  return [migrationSql(schema), appendBatchV2Sql(schema), appendCommitSql(schema), appendGuardedSql(schema), chainHashPlpgsqlSql(schema), appendCommitChunkedSql(schema), appendFusedSql(schema)];
}

/**
 * The schema version this code needs: the number of migration steps (a test pins each step's digest,
 * so a step changed in place instead of added fails). A database at this version is never touched by
 * DDL again, so starting a process or reconnecting takes no lock on a live table.
 */
export const SCHEMA_VERSION = migrationSteps('review_ledger').length;

/** The one-row table that records which version of `migrationSql` the schema was brought to. */
export function schemaVersionSql(schema: string): { create: string; exists: string; read: string; write: string } {
  const s = `"${schema}"`;
  return {
    create: `CREATE TABLE IF NOT EXISTS ${s}.schema_version (id int PRIMARY KEY CHECK (id = 1), version int NOT NULL, migrated_at timestamptz NOT NULL DEFAULT now())`,
    exists: `SELECT to_regclass('${s}.schema_version') IS NOT NULL AS present`,
    read: `SELECT version FROM ${s}.schema_version WHERE id = 1`,
    write: `INSERT INTO ${s}.schema_version (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = greatest(${s}.schema_version.version, EXCLUDED.version), migrated_at = now()`,
  };
}

/** Stable advisory-lock key for migrations of one schema. */
export const migrationLockKey = (schema: string): number => {
  let h = 0x5eed;
  for (const c of schema) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
  return h;
};

/** The refusal of a process that may not migrate (CLI reads, reconnects) on a schema older than it needs. */
export function schemaOutdated(schema: string, found: number | null): DomainError {
  return new DomainError(
    'schema_outdated',
    `database: schema "${schema}" is ${found === null ? 'not migrated (no schema_version table)' : `at version ${found}`}, this server needs version ${SCHEMA_VERSION}: run \`review-ledger migrate\` (same --database-url) first`,
    { schema, found, needed: SCHEMA_VERSION },
  );
}

export interface PostgresBackendOptions {
  connectionString: string;
  /** Schema holding the tables (default `review_ledger`); tests use a fresh one per run. */
  schema?: string;
  /** Pool size of this process (default 10). */
  poolSize?: number;
  /**
   * On open: `true` (default) brings the schema to SCHEMA_VERSION under the advisory lock when it is
   * behind (`serve`, `migrate`, tests); `false` only checks the version and refuses with
   * `schema_outdated` (CLI reads). Nothing ever migrates on a reconnect.
   */
  migrate?: boolean;
  /** How long a query waits for a pooled connection before it fails with store_unavailable (default 5000 ms). */
  connectTimeoutMs?: number;
  /**
   * How long one statement may take (default DEFAULT_QUERY_TIMEOUT_MS; `postgres.queryTimeoutMs` in the
   * operator config). PostgreSQL cancels a statement past it (`statement_timeout`: a lock it waits on, a
   * slow disk), and this process gives up on an answer that has not come QUERY_READ_GRACE_MS later (a
   * network partition: the connection stays open and nothing arrives; a TCP retransmission timeout is
   * minutes) and drops that connection. Either way the call fails with the retryable store_unavailable:
   * a command is answered within a bound, never held for as long as the network is away. A COMMIT cut
   * this way may have landed; the kernel's retry with the same key answers as the original did if so.
   * Migrations run on a connection of their own without either bound.
   */
  queryTimeoutMs?: number;
  /**
   * Durability of an acknowledged append (`--synchronous`, as for SQLite). true (default, FULL): every
   * commit waits for its WAL flush, so it survives a PostgreSQL crash or power loss. false (NORMAL):
   * this process's sessions run with `synchronous_commit = off`: a commit returns once its WAL record
   * is written, not flushed. It survives a crash of the ledger process (the database has it), but a
   * PostgreSQL crash or power loss may lose the last commits (up to 3 × wal_writer_delay, 600 ms by
   * default) — never half of one, and never corrupts anything. The heads lock is then held only until
   * the WAL write, which is what bounds appends per workspace at FULL (one fsync per transaction).
   */
  synchronousCommit?: boolean;
  /**
   * How long this process, listening and hearing no other process on the channel, waits before it stops
   * announcing its commits (default ALONE_AFTER_MS; Infinity: always announce). Announcing is what a
   * single server spent most on beyond its appends: bench:cluster pg×1 went from 3,350 to 4,280 commands/s
   * without it. A process that joins says hello at once, so the others announce again within a round trip;
   * anything committed before they heard it reaches the newcomer by its heads poll and its next append.
   */
  aloneAfterMs?: number;
  /** The clock of aloneAfterMs (ms; default Date.now): tests move it instead of waiting. */
  clock?: () => number;
  /** Each pooled connection raises its backend's malloc trim threshold first (RAISE_TRIM_THRESHOLD; default true: off only to measure it). */
  raiseTrimThreshold?: boolean;
}

/** What /health shows of the database connection (`since`: ISO time of the first failure of this outage). */
export interface StoreHealth {
  status: 'ok' | 'degraded';
  reason?: string;
  since?: string;
}

/** PostgresBackendOptions.queryTimeoutMs when none is given (the operator config's default). */
export const DEFAULT_QUERY_TIMEOUT_MS = DEFAULT_POSTGRES_BOUNDS.queryTimeoutMs;
/** Past the server-side statement_timeout, how long the client still waits for PostgreSQL's own cancellation. */
export const QUERY_READ_GRACE_MS = 2000;
/** A heads probe unanswered this long makes health() degraded (before any call times out). */
const PROBE_OVERDUE_MS = 3000;
/** How long a pooled connection may stay idle before the pool closes it (pg-pool's default). */
const POOL_IDLE_MS = 10_000;

/**
 * Run once on each pooled connection: makes its backend allocate and free one block of ~1 MiB. Why: a
 * group commit's transaction takes ~144 KiB more of the backend's heap than it keeps (PL/pgSQL's
 * per-transaction expression state, the answer's tuplestore), just above glibc's default trim threshold
 * (128 KiB), so every commit grew the heap with brk, touched the new pages (page faults) and gave them
 * back at its end (brk again, with a TLB flush on every core): traced on a loaded backend, 3 brk calls
 * and ~36 page faults per transaction, about a quarter of PostgreSQL's CPU per command in a perf profile
 * (issue 35). glibc raises its thresholds when a block it served with mmap is freed (its dynamic mmap
 * threshold: the trim threshold becomes twice the block), so after this one statement the backend keeps
 * up to ~2 MiB free at the top of its heap instead of returning it. Elsewhere (musl, a threshold the
 * operator set with MALLOC_MMAP_THRESHOLD_) it is one cheap statement that changes nothing.
 */
const RAISE_TRIM_THRESHOLD = `SELECT length(repeat('x', ${1100 * 1024}))`;
/** Reconnect delays of the LISTEN connection: doubling from the first, capped (a restart is seconds). */
const LISTEN_RETRY_MS = { first: 100, max: 1000 };
/** A subscription whose read fails with store_unavailable retries after this (doubling up to max). */
const SUBSCRIPTION_RETRY_MS = { first: 100, max: 1000 };
const noop = (): void => undefined;
/** How old PostgresEventStore.logBytes's last sum may be before a command's call takes another. */
const LOG_SIZE_FRESH_MS = 1000;

/**
 * What one process shares across all its workspaces on one PostgreSQL database: the connection pool,
 * the schema (migrated on open) and one LISTEN connection that fans notifications out by workspace.
 *
 * Faults: no connection error reaches the process as an unhandled 'error' (every pooled client gets a
 * listener when it is created, the LISTEN client has one, the timers catch); store calls fail with a
 * retryable `store_unavailable`; the pool reconnects on the next query, the LISTEN connection with
 * backoff, and `health()` says `degraded` from the first failed call or probe until one succeeds.
 */
export class PostgresBackend {
  readonly pool: Pool;
  readonly schema: string;
  readonly channel: string;
  private listener: Client | null = null;
  private listening: Promise<void> | null = null;
  /** When the current LISTEN started (ms), and when another process was last heard on the channel. */
  private listeningSince = 0;
  private otherHeardAt = 0;
  private readonly aloneAfterMs: number;
  private readonly clock: () => number;
  private readonly wakers = new Map<string, Set<() => void>>();
  /** Per workspace, the commits still to announce after the fact (synchronous_commit on), sent in order. */
  private readonly announcing = new Map<string, { queue: CommitNotice[]; sending: boolean }>();
  /** Names this process in its announcements: it skips its own (its append's answer placed them). */
  readonly origin = randomBytes(8).toString('hex');
  /** How this process's origin appears in an announcement (JSON.stringify's, json_build_object's spacing). */
  private readonly ownOriginJson = `"o":"${this.origin}"`;
  private readonly ownOriginSql = `"o" : "${this.origin}"`;
  /** A hello: no workspace ("w" empty; earlier versions' receivers ignore it), only the sender. */
  private readonly helloPayload = JSON.stringify({ w: '', o: this.origin });
  /** Whether append_commit sends the announcement inside the commit (synchronous_commit off: see announce). */
  readonly notifyInCommit: boolean;
  /** Source of stamps: every change of any workspace's knowledge takes the next value. */
  private tick = 0;
  /** Per workspace, this process's stores: they take the rows other processes' announcements carry. */
  /** Per workspace, who hears each announcement of another process: its rows, or null when it came without them. */
  private readonly rowSinks = new Map<string, Set<RowSink>>();
  private readonly seenHeads = new Map<string, number>();
  /**
   * Per workspace, what this process knows of its log without reading it: `accounted`, the position up to
   * which every event is either this process's own append or was announced (so readers holding older
   * state were told to read: `stamp` moved). See PostgresEventStore.freshness.
   */
  private readonly known = new Map<string, Knowledge>();
  private polling = false;
  /** When the heads probe in flight was sent (Date.now(); not this.clock, which tests move): an unanswered probe is how a partition shows first. */
  private pollSentAt = 0;
  /** The last heads probe failed with a connection error (cleared by the next that succeeds). */
  private probeFailed: { message: string; since: number } | null = null;
  /** Set by the poll timer when the probe in flight has gone unanswered for PROBE_OVERDUE_MS. */
  private probeOverdue = false;
  /** When a pooled connection last came back without an error: the database answered someone then. */
  private lastAnswerAt = Date.now();
  private lastPollTickAt = Date.now();
  /**
   * The heads probe's own connection, outside the pool: it measures whether the database answers, not
   * whether the pool has a free connection under load, and it is what finds the database back while
   * the pool's callers are refused.
   */
  private probeClient: Client | null = null;
  private probeConnecting = false;
  readonly queryTimeoutMs: number;
  /** The session settings every connection of this process runs first (the statement bound, commit mode). */
  private readonly sessionSettings: string;
  /**
   * PostgreSQL's `idle_session_timeout` for this role and database, read at open (0: none). A session idle
   * longer is terminated by the server: pooled connections are closed by the pool before that, and the
   * connections that must stay open while idle (LISTEN, an exclusive section's lock) are pinged.
   */
  private idleSessionTimeoutMs = 0;
  private readonly poller: NodeJS.Timeout;
  private closed = false;
  private failure: { since: Date; message: string } | null = null;
  /**
   * PostgreSQL answers but refuses writes (SQLSTATE 25006: a standby, default_transaction_read_only): set
   * by a refused write or by the heads probe, cleared only by a probe that finds the database writable.
   * Not a reason to refuse calls at once (reads are still answered, a write fails in one round trip).
   */
  private readOnly: { since: Date; message: string } | null = null;
  private listenerLost: Date | null = null;
  private relistening = false;
  /** What open() did to the schema (undefined when it only checked the version). */
  migration?: { from: number | null; to: number; ran: boolean };

  private constructor(readonly options: PostgresBackendOptions) {
    this.schema = options.schema ?? 'review_ledger';
    if (!SCHEMA_RE.test(this.schema)) throw new DomainError('invalid_config', `schema: "${this.schema}" must match ${SCHEMA_RE}`);
    // Announcements name their streams (CommitNotice, JSON): a channel of their own, so a process of v2's code
    // (which listens on `_events` for "<workspace> <head>") never misreads one; it hears this version's
    // commits through its heads poll (within a second), and this version hears its through the same poll.
    this.channel = `${this.schema}_commits`;
    this.notifyInCommit = options.synchronousCommit === false;
    this.aloneAfterMs = options.aloneAfterMs ?? ALONE_AFTER_MS;
    this.clock = options.clock ?? Date.now;
    this.queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    this.sessionSettings = `${this.boundedSettings()}${options.synchronousCommit === false ? '; SET synchronous_commit = off' : ''}${options.raiseTrimThreshold === false ? '' : `; ${RAISE_TRIM_THRESHOLD}`}`;
    this.pool = new Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      idleTimeoutMillis: POOL_IDLE_MS,
      types: parseTypes,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      keepAlive: true,
      query_timeout: this.queryTimeoutMs + QUERY_READ_GRACE_MS,
      // Run on each new connection before the pool lends it (a failure ends it and fails the borrower). A
      // SET, not the startup packet's `options`: PgBouncer refuses a connection whose startup carries them.
      onConnect: async (client: ClientBase) => void (await client.query(this.sessionSettings)),
    });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    this.pool.on('error', (err) => this.noteFailure(err));
    // A client released with an error leaves the pool (pg-pool ends it). One whose answer never came
    // (pg's query_timeout) would otherwise hold its socket, and the statement's place on it, until TCP gives
    // up minutes later: it is destroyed now, and the failure is recorded for health().
    this.pool.on('release', (err, client) => {
      if (!err) this.lastAnswerAt = Date.now();
      if (!err || !isQueryTimeout(err)) return;
      this.noteFailure(err);
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    });
    // A CHECKED-OUT client (a transaction in progress) has no pool listener: pg emits its socket error
    // on the client as well as failing the query, and an 'error' nobody listens to kills the process.
    // The query's own rejection is what the caller handles; this listener only keeps the process up.
    this.pool.on('connect', (client) => client.on('error', noop));
    // While the heads probe says the database is away (it failed, or has gone unanswered for
    // PROBE_OVERDUE_MS), store calls answer store_unavailable at once instead of each waiting out its own
    // connect or query timeout: behind one stuck append, every command of the workspace would otherwise
    // queue for the length of the partition. The probe has a connection of its own (probe()).
    const poolQuery = this.pool.query.bind(this.pool) as (...args: unknown[]) => Promise<unknown>;
    const poolConnect = this.pool.connect.bind(this.pool) as (...args: unknown[]) => Promise<unknown>;
    const gate = <T>(run: (...args: unknown[]) => Promise<T>) => (...args: unknown[]): Promise<T> => {
      const refusal = this.awayRefusal();
      if (!refusal) return run(...args);
      const callback = args.find((a) => typeof a === 'function') as ((err: Error) => void) | undefined;
      if (callback) {
        queueMicrotask(() => callback(refusal));
        return undefined as unknown as Promise<T>;
      }
      return Promise.reject(refusal);
    };
    (this.pool as unknown as { query: unknown }).query = gate(poolQuery);
    (this.pool as unknown as { connect: unknown }).connect = gate(poolConnect);
    this.poller = setInterval(() => this.pollHeads(), HEADS_POLL_MS).unref();
  }

  static async open(options: PostgresBackendOptions): Promise<PostgresBackend> {
    const backend = new PostgresBackend(options);
    try {
      await backend.checkSessions();
      if (options.migrate === false) await backend.checkSchema();
      else backend.migration = await backend.migrate();
    } catch (err) {
      await backend.close();
      if (err instanceof DomainError) throw err;
      // Only a database that is away (refused, reset, starting up, too many connections) is worth a retry;
      // a wrong password, a missing database or a missing privilege stays wrong until the operator acts.
      if (isConnectionError(err)) throw new DomainError('store_unavailable', `database: cannot open PostgreSQL store (${(err as Error).message})`, { retryAfterMs: STORE_RETRY_AFTER_MS });
      throw new DomainError('store_unavailable', `database: cannot open PostgreSQL store (${(err as Error).message}); not a connection failure: check the database URL, its role and database`);
    }
    return backend;
  }

  /** The schema's recorded version; null when the schema predates versioning or does not exist. */
  async schemaVersion(): Promise<number | null> {
    const sql = schemaVersionSql(this.schema);
    const { rows } = await this.pool.query<{ present: boolean }>(sql.exists);
    if (!rows[0]?.present) return null;
    const r = await this.pool.query<{ version: number }>(sql.read);
    return r.rows[0]?.version ?? null;
  }

  /**
   * A connection of its own, outside the pool, with the pool's statement and answer bounds: for a
   * session-level advisory lock held while its holder talks to the outside world (PostgresEventStore.exclusive),
   * which must neither take a pooled connection from the appends nor outlive its holder's session.
   */
  async sessionClient(): Promise<Client> {
    const refusal = this.awayRefusal();
    if (refusal) throw refusal;
    const client = this.boundedClient();
    client.on('error', noop);
    try {
      await client.connect();
      await client.query(this.boundedSettings());
    } catch (err) {
      await client.end().catch(noop);
      this.noteFailure(err);
      throw unavailable(err);
    }
    return client;
  }

  /** How often a connection that must stay open while idle says something: half the idle-session timeout (0: never). */
  private sessionPingMs(): number {
    return this.idleSessionTimeoutMs > 0 ? Math.max(100, Math.floor(this.idleSessionTimeoutMs / 2)) : 0;
  }

  /**
   * Keeps `client` from being ended by `idle_session_timeout` while it idles on purpose (LISTEN, a held
   * advisory lock): a `SELECT 1` every sessionPingMs until the returned function is called or the client
   * ends. Start it once the client's own statements are done (pings never overlap them or each other).
   */
  keepSessionAlive(client: Client): () => void {
    const every = this.sessionPingMs();
    if (every === 0) return noop;
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      client.query('SELECT 1').then(
        () => void (busy = false),
        () => void (busy = false),
      );
    }, every).unref();
    const stop = () => clearInterval(timer);
    client.once('end', stop);
    return stop;
  }

  /**
   * What every connection of this process runs first (the pool's adds its commit mode). Settings a
   * database or role may carry that the store's design does not allow for are pinned: the appends
   * serialize on the workspace's head row and wait for it, so `lock_timeout` is off (the statement bound
   * covers a wait); their locking reads rely on READ COMMITTED (under REPEATABLE READ a head row moved by
   * another server's commit fails with "could not serialize access"). Before, a database-level
   * `default_transaction_isolation = 'repeatable read'` or `lock_timeout = '2ms'` made two servers
   * answer 15 % / 4 % of commands `internal`.
   */
  private boundedSettings(): string {
    return `SET statement_timeout = ${this.queryTimeoutMs}; SET lock_timeout = 0; SET default_transaction_isolation = 'read committed'`;
  }

  /**
   * Refuses (invalid_config) a connection string that reaches PostgreSQL through a transaction- or
   * statement-pooling proxy (PgBouncer's pool_mode = transaction / statement, and the like), before
   * anything is migrated: such a proxy hands each statement to whichever server session is free, and this
   * store relies on sessions — named prepared statements, LISTEN, advisory locks held across statements
   * (a migration's, a publication's). Behind one it failed at start with "prepared statement … already
   * exists" (internal), or worse, would have run with locks that lock nothing.
   *
   * How: one client marks its session (a custom setting, session-level), then another client looks for
   * the mark. Behind a direct connection or session pooling the two are different sessions and the mark is
   * never seen; a statement pooler typically gives the second client the session just released (PgBouncer
   * reuses the most recently used one) and the mark shows, or the first client loses its own mark on its
   * next statement. Three rounds, since a busy shared proxy may hand out another session by chance.
   *
   * Also reads `idle_session_timeout` (see idleSessionTimeoutMs; pg_settings gives it in ms).
   */
  private async checkSessions(): Promise<void> {
    // Two connections of their own (a pool of one, as `migrate` opens, could not lend two at once).
    const a = this.boundedClient();
    const b = this.boundedClient();
    a.on('error', noop);
    b.on('error', noop);
    try {
      await a.connect();
      await b.connect();
      for (let round = 0; round < 3; round++) {
        const mark = randomBytes(8).toString('hex');
        await a.query(`SELECT set_config('review_ledger.session_mark', $1, false)`, [mark]);
        const seen = (await b.query<{ v: string | null }>(`SELECT current_setting('review_ledger.session_mark', true) AS v`)).rows[0]?.v;
        const kept = (await a.query<{ v: string | null }>(`SELECT current_setting('review_ledger.session_mark', true) AS v`)).rows[0]?.v;
        if (seen === mark || kept !== mark) {
          throw new DomainError(
            'invalid_config',
            'database: the connection string reaches PostgreSQL through a transaction- or statement-pooling proxy (e.g. PgBouncer pool_mode = transaction): one connection\'s session setting ' +
              (seen === mark ? 'showed in another connection' : 'was gone at its next statement') +
              '. review-ledger needs its own sessions (named prepared statements, LISTEN, advisory locks held across statements): connect directly, or through pool_mode = session (docs/stores.md)',
          );
        }
      }
      const idle = await a.query<{ ms: string }>(`SELECT coalesce((SELECT setting FROM pg_settings WHERE name = 'idle_session_timeout'), '0') AS ms`);
      this.idleSessionTimeoutMs = Number(idle.rows[0]?.ms) || 0;
      const ping = this.sessionPingMs();
      // pg-pool reads this when a client goes idle: an idle connection is closed here before the server ends it.
      if (ping > 0) (this.pool as unknown as { options: { idleTimeoutMillis: number } }).options.idleTimeoutMillis = Math.min(POOL_IDLE_MS, ping);
    } finally {
      await Promise.all([a.end().catch(noop), b.end().catch(noop)]);
    }
  }

  /**
   * A client outside the pool with the pool's settings: int8 as numbers (a head read as a string would
   * compare as text), the statement and answer bounds. Not yet connected.
   */
  private boundedClient(): Client {
    return new Client({
      connectionString: this.options.connectionString,
      types: parseTypes,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000,
      keepAlive: true,
      query_timeout: this.queryTimeoutMs + QUERY_READ_GRACE_MS,
    });
  }

  /** The workspace catalogue (its table lives in this schema), through the pool: asynchronous, bounded. */
  async listWorkspaces(): Promise<Array<{ workspaceId: string; name: string; createdAt: string }>> {
    try {
      const { rows } = await this.pool.query<{ workspaceId: string; name: string; createdAt: string }>(`SELECT workspace_id AS "workspaceId", name, created_at AS "createdAt" FROM "${this.schema}".workspaces ORDER BY workspace_id`);
      return rows;
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Refuses (schema_outdated) when the schema is older than this code needs. Takes no lock. */
  async checkSchema(): Promise<number> {
    const v = await this.schemaVersion();
    if (v === null || v < SCHEMA_VERSION) throw schemaOutdated(this.schema, v);
    return v;
  }

  /**
   * Brings the schema to SCHEMA_VERSION; idempotent. A schema already there is only read (no DDL, no
   * lock on any table). Otherwise, under an advisory lock, the version is re-read (processes starting
   * together migrate once) and each missing step runs in its own transaction that records its version:
   * v1 → v2 runs step 2 alone. The lock is taken at session level BEFORE any transaction begins: a
   * transaction that began before another one's migration committed would still see the old catalogue
   * (PostgreSQL accepts catalogue invalidations at transaction start, not after an advisory lock) and
   * run the steps a second time.
   */
  async migrate(): Promise<{ from: number | null; to: number; ran: boolean }> {
    const before = await this.schemaVersion();
    if (before !== null && before >= SCHEMA_VERSION) return { from: before, to: before, ran: false };
    const sql = schemaVersionSql(this.schema);
    const steps = migrationSteps(this.schema);
    // A connection of its own, outside the pool's statement and answer timeouts: a step on a large table
    // (an index over a million events) may take longer than any command should, and the advisory lock
    // may wait for another process's migration.
    const client = new Client({ connectionString: this.options.connectionString, connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000, keepAlive: true });
    client.on('error', noop);
    await client.connect();
    let locked = false;
    try {
      // Unbounded (a database-level statement_timeout would cut a step on a large table), and the wait for
      // another process's migration is not subject to a database-level lock_timeout (two servers starting
      // together: the second failed to start with "canceling statement due to lock timeout"); the steps'
      // own DDL locks are (RESET: the database's or role's value), so they never queue live writes for long.
      await client.query('SET statement_timeout = 0; SET lock_timeout = 0');
      await client.query('SELECT pg_advisory_lock($1)', [migrationLockKey(this.schema)]);
      await client.query('RESET lock_timeout');
      locked = true;
      const present = (await client.query<{ present: boolean }>(sql.exists)).rows[0]?.present;
      const found = present ? ((await client.query<{ version: number }>(sql.read)).rows[0]?.version ?? null) : null;
      if (found !== null && found >= SCHEMA_VERSION) return { from: found, to: found, ran: false };
      for (let version = (found ?? 0) + 1; version <= SCHEMA_VERSION; version++) {
        try {
          await client.query('BEGIN');
          await client.query(steps[version - 1]);
          if (version === 1) await client.query(sql.create);
          await client.query(sql.write, [version]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }
      return { from: found, to: SCHEMA_VERSION, ran: true };
    } finally {
      // A lost connection releases the lock with its session.
      if (locked) await client.query('SELECT pg_advisory_unlock($1)', [migrationLockKey(this.schema)]).catch(() => undefined);
      await client.end().catch(() => undefined);
    }
  }

  /**
   * Why the database counts as away right now (null: it does not): the last heads probe failed to reach
   * it, or the probe in flight has had no answer for PROBE_OVERDUE_MS (a partition sends no reset).
   */
  unreachable(): string | null {
    return this.away()?.reason ?? null;
  }

  /** The refusal of a call while the database counts as away, or null. */
  private awayRefusal(): DomainError | null {
    const away = this.unreachable();
    return away ? new DomainError('store_unavailable', `database: ${away}; retry later`, { retryAfterMs: STORE_RETRY_AFTER_MS }) : null;
  }

  private away(): { reason: string; since: number } | null {
    if (this.closed) return null;
    // A slow probe alone is not an outage: away only when nothing else has been answered meanwhile either.
    if (this.probeOverdue && this.polling && Date.now() - this.lastAnswerAt >= PROBE_OVERDUE_MS) return { reason: `PostgreSQL has not answered for ${Date.now() - Math.max(this.pollSentAt, this.lastAnswerAt)} ms`, since: Math.max(this.pollSentAt, this.lastAnswerAt) };
    if (this.probeFailed) return { reason: `PostgreSQL unreachable (${this.probeFailed.message})`, since: this.probeFailed.since };
    return null;
  }

  /** `degraded` from the first failed call or probe of an outage until a call or probe succeeds. */
  health(): StoreHealth {
    const away = this.away();
    if (!this.failure && away) return { status: 'degraded', reason: `${away.reason}: calls answer store_unavailable until a probe succeeds`, since: new Date(away.since).toISOString() };
    if (this.failure) return { status: 'degraded', reason: `PostgreSQL unreachable: ${this.failure.message}; calls answer store_unavailable and are retried by clients`, since: this.failure.since.toISOString() };
    if (this.readOnly) return { status: 'degraded', reason: `PostgreSQL refuses writes (read-only: a standby, or default_transaction_read_only is on; ${this.readOnly.message}): commands answer store_unavailable, reads are answered`, since: this.readOnly.since.toISOString() };
    if (this.listenerLost && this.wakers.size > 0) return { status: 'degraded', reason: 'PostgreSQL LISTEN connection lost, reconnecting: live updates from other servers are delayed', since: this.listenerLost.toISOString() };
    return { status: 'ok' };
  }

  /** Records the outcome of a store call for health(). Only connection failures count. */
  noteFailure(err: unknown): void {
    // An idle session ended by the server's idle_session_timeout: the database is there.
    if (isIdleSessionEnd(err)) return;
    if (isReadOnlyError(err)) this.readOnly ??= { since: new Date(), message: (err as Error).message };
    if (!isConnectionError(err) && !(err instanceof DomainError && err.code === 'store_unavailable')) return;
    this.failure ??= { since: new Date(), message: (err as Error).message ?? String(err) };
  }

  noteSuccess(): void {
    this.failure = null;
  }

  /**
   * Registers a wake-up for a workspace's commits. The returned promise resolves once LISTEN is
   * active: a subscription must not do its first catch-up read before that, or a commit landing in
   * between would notify no one.
   */
  listen(workspaceId: string, wake: () => void): { ready: Promise<void>; unlisten: () => void } {
    let set = this.wakers.get(workspaceId);
    if (!set) this.wakers.set(workspaceId, (set = new Set()));
    set.add(wake);
    const ready = this.ensureListening();
    // Awaited by the subscription's first read (which retries); never an unhandled rejection meanwhile.
    ready.catch(noop);
    return {
      ready,
      unlisten: () => {
        set!.delete(wake);
        if (set!.size === 0 && this.wakers.get(workspaceId) === set) this.wakers.delete(workspaceId);
      },
    };
  }

  addRowSink(workspaceId: string, sink: RowSink): () => void {
    let set = this.rowSinks.get(workspaceId);
    if (!set) this.rowSinks.set(workspaceId, (set = new Set()));
    set.add(sink);
    return () => {
      set!.delete(sink);
      if (set!.size === 0 && this.rowSinks.get(workspaceId) === set) this.rowSinks.delete(workspaceId);
    };
  }

  knowledge(workspaceId: string): Knowledge {
    let k = this.known.get(workspaceId);
    if (!k) this.known.set(workspaceId, (k = { stamp: 0, epoch: 0, accounted: -1, placed: [], highest: -1, pollMark: -1, marks: new Map(), unplaced: 0 }));
    return k;
  }

  /** The stamp of one stream (StoreFreshness.stampOf): the later of the workspace's epoch and the stream's mark. */
  stampOf(k: Knowledge, streamId: string): number {
    return Math.max(k.epoch, k.marks.get(streamId) ?? 0);
  }

  /** Something may have been added that this process cannot place: every stream reads again. */
  private bumpAll(k: Knowledge): void {
    k.epoch = k.stamp = ++this.tick;
    k.marks.clear();
    k.unplaced++;
  }

  /** Other processes appended to these streams (and, of what this process accounts for, to no other). */
  private bumpStreams(k: Knowledge, streams: readonly string[]): void {
    if (streams.length === 0) return;
    const t = (k.stamp = ++this.tick);
    for (const s of streams) k.marks.set(s, t);
    if (k.marks.size > MAX_MARKS) this.bumpAll(k);
  }

  /**
   * Positions first..last were appended by others, to `streams` (null: unknown): those streams read again
   * (every stream, without a list). Announcements may arrive before this process's own append's answer
   * for a position below theirs: such a range is kept (placed) until the positions below it are, so
   * `accounted` never passes a position this process cannot place.
   */
  othersAppended(workspaceId: string, first: number, last: number, streams: readonly string[] | null): void {
    const k = this.knowledge(workspaceId);
    if (last <= k.accounted) return;
    if (streams) this.bumpStreams(k, streams);
    else this.bumpAll(k);
    this.place(k, first, last);
  }

  /** This process appended first..last. */
  ownAppended(workspaceId: string, first: number, last: number): void {
    this.place(this.knowledge(workspaceId), first, last);
  }

  private place(k: Knowledge, first: number, last: number): void {
    if (last > k.highest) k.highest = last;
    if (last <= k.accounted) return;
    if (first <= k.accounted + 1) k.accounted = last;
    else k.placed.push([first, last]);
    if (k.placed.length === 0) return;
    k.placed.sort((x, y) => x[0] - y[0]);
    let i = 0;
    for (; i < k.placed.length && k.placed[i][0] <= k.accounted + 1; i++) k.accounted = Math.max(k.accounted, k.placed[i][1]);
    k.placed.splice(0, i);
    if (k.placed.length > MAX_PLACED) this.skipTo(k, k.highest);
  }

  /** Positions up to `position` are given up on: every stream reads again. */
  private skipTo(k: Knowledge, position: number): void {
    this.bumpAll(k);
    if (position > k.accounted) k.accounted = position;
    k.placed = k.placed.filter((r) => r[1] > k.accounted);
    if (k.placed.length) this.place(k, k.placed[0][0], k.placed[0][1]);
  }

  /**
   * The heads poll's head (the safety net for an announcement that never came: its sender died between
   * its commit and a NOTIFY sent after it). A position at or below the previous poll's head that is still
   * not placed a whole poll later will not be: every stream reads again.
   */
  headPolled(workspaceId: string, head: number): boolean {
    const k = this.knowledge(workspaceId);
    if (head > k.highest) k.highest = head;
    const givenUp = k.pollMark > k.accounted;
    if (givenUp) this.skipTo(k, k.pollMark);
    k.pollMark = head;
    return givenUp;
  }

  /** Something may have been added that this process cannot place (a lost channel). */
  unsure(workspaceId?: string): void {
    for (const [id, k] of this.known) if (workspaceId === undefined || id === workspaceId) this.bumpAll(k);
  }

  /** Whether announcements from other processes reach this one now (LISTEN is up). */
  get hearing(): boolean {
    return this.listener !== null && !this.closed;
  }

  /**
   * Whether another process may be listening for this one's announcements. Yes unless this one has
   * listened for aloneAfterMs and heard nobody meanwhile (every listener says hello each heads poll): a
   * process that does not listen cannot know, so it always announces.
   */
  get othersMayListen(): boolean {
    if (!this.hearing) return true;
    const now = this.clock();
    return now - this.listeningSince < this.aloneAfterMs || now - this.otherHeardAt < this.aloneAfterMs;
  }

  /** Tells the other listening processes that this one listens (see othersMayListen). */
  private sayHello(): void {
    if (!this.hearing) return;
    this.pool.query({ name: `${this.schema}.hello`, text: 'SELECT pg_notify($1, $2)', values: [this.channel, this.helloPayload] }).catch(noop);
  }

  /** Wakes this process's subscribers of a workspace at once, without waiting for the NOTIFY echo. */
  wakeLocal(workspaceId: string): void {
    for (const w of this.wakers.get(workspaceId) ?? []) w();
  }

  /**
   * After a commit: wake local subscribers now and, unless append_commit announced it inside the commit,
   * tell the other processes. At synchronous_commit = on the NOTIFY is NOT sent inside the append
   * transaction: PostgreSQL serializes the commits of every notifying transaction in the cluster on one
   * lock, held through the commit's WAL flush — that would make appends to different workspaces queue
   * behind each other's fsync. Sent afterwards as a transaction of its own that writes nothing else, its
   * commit needs no WAL flush (PostgreSQL commits such transactions asynchronously; measured ~0.5 ms here
   * against ~2.5 ms for a flushed commit), so the lock is held briefly. At synchronous_commit = off no
   * commit waits for a flush, so append_commit notifies inside the commit: one round trip, never lost.
   * Sent afterwards, announcements go out one at a time in commit order (a receiver places a commit only
   * right after the one before); a backlog is sent as one notice without streams. If the process dies
   * between the commit and the NOTIFY, the heads poll below wakes the others, and their next append's
   * answer names the streams.
   */
  announce(workspaceId: string, commit: CommitNotice | null, alreadySent: boolean): void {
    this.wakeLocal(workspaceId);
    if (alreadySent || !commit || !this.othersMayListen) return;
    let state = this.announcing.get(workspaceId);
    if (!state) this.announcing.set(workspaceId, (state = { queue: [], sending: false }));
    state.queue.push(commit);
    if (state.queue.length > ANNOUNCE_BACKLOG) {
      const first = Math.min(...state.queue.map((c) => c.f));
      const last = Math.max(...state.queue.map((c) => c.l));
      state.queue = [{ w: workspaceId, f: first, l: last, o: this.origin }];
    }
    if (state.sending) return;
    const st = state;
    st.sending = true;
    const send = (): void => {
      const next = st.queue.shift();
      if (!next || this.closed) {
        st.sending = false;
        if (st.queue.length === 0) this.announcing.delete(workspaceId);
        return;
      }
      // One statement for every chunk of the commit: delivered together, in order (unnest's).
      this.pool
        .query({ name: `${this.schema}.notify_all`, text: 'SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', values: [this.channel, noticePayloads(next)] })
        .catch(() => undefined)
        .finally(send);
    };
    send();
  }

  /**
   * The safety net for a NOTIFY that never came (its sender died after committing): once a second,
   * one query over the heads of the workspaces this process watches; an advanced head wakes them.
   * It runs with no watched workspace too: it is also the probe that turns health() back to ok (or
   * degraded) on an idle server. Its failure is caught and recorded, never thrown from the timer.
   */
  private pollHeads(): void {
    const now = Date.now();
    // A tick that comes late means this thread was busy: the probe's answer may be unread, not missing.
    const late = now - this.lastPollTickAt > HEADS_POLL_MS + 500;
    this.lastPollTickAt = now;
    if (this.polling && !late && now - this.pollSentAt >= PROBE_OVERDUE_MS && now - this.lastAnswerAt >= PROBE_OVERDUE_MS) this.probeOverdue = true;
    if (this.closed || this.polling) return;
    this.sayHello();
    const ids = [...this.wakers.keys()];
    this.polling = true;
    this.pollSentAt = Date.now();
    // One row at least (the outer side of the join), carrying whether this session's transactions are
    // read-only: that is how a failover to a standby, or a read-only switch, shows on an idle server.
    this.probe<{ workspace_id: string | null; position: number | null; read_only: string }>(
      `SELECT h.workspace_id, h.position, current_setting('transaction_read_only') AS read_only FROM (SELECT 1) one LEFT JOIN "${this.schema}".heads h ON h.workspace_id = ANY($1::text[])`,
      [ids],
    )
      .then(({ rows }) => {
        this.noteSuccess();
        this.probeFailed = null;
        if (rows[0]?.read_only !== 'on') this.readOnly = null;
        else this.readOnly ??= { since: new Date(), message: 'transaction_read_only is on' };
        const heads = new Map(rows.filter((r) => r.workspace_id !== null).map((r) => [r.workspace_id!, r.position!]));
        for (const id of ids) {
          // A workspace with no head row yet has head 0: its first commit must wake too.
          const head = heads.get(id) ?? 0;
          const seen = this.seenHeads.get(id);
          this.seenHeads.set(id, head);
          // Positions given up on wake too: a subscription waits at the first position it cannot place
          // (PostgresEventStore.recentPage), and now reads them.
          const givenUp = this.headPolled(id, head);
          // First sight wakes too (one spare read): the commit may predate this process's first poll.
          if (seen === undefined || head > seen || givenUp) this.wakeLocal(id);
        }
        // A LISTEN connection lost while nobody watched is reconnected when the next subscriber comes.
        if (ids.length > 0 && !this.listener && !this.listening) this.relisten();
      })
      .catch((err) => {
        this.noteFailure(err);
        // The probe's connection ended for idling as the probe was sent: dropped, the next poll reconnects.
        if (isConnectionError(err) && !isIdleSessionEnd(err)) this.probeFailed ??= { message: (err as Error).message, since: Date.now() };
      })
      .finally(() => {
        this.polling = false;
        this.probeOverdue = false;
      });
  }

  /** One query on the probe's connection (connecting first when it has none); a failed connection is dropped. */
  private async probe<T>(text: string, values: unknown[]): Promise<{ rows: T[] }> {
    let client = this.probeClient;
    if (!client) {
      const c = this.boundedClient();
      c.on('error', () => this.dropProbe(c));
      this.probeClient = client = c;
      this.probeConnecting = true;
      try {
        await c.connect();
        await c.query(this.boundedSettings());
      } catch (err) {
        this.dropProbe(c);
        throw err;
      } finally {
        this.probeConnecting = false;
      }
      // Closed while connecting: close() leaves a connecting client alone (destroying its socket then
      // would leave pg's connect unsettled), so it is ended here.
      if (this.closed) {
        this.dropProbe(c);
        throw new Error('closed');
      }
    }
    try {
      return await client.query<T & QueryResultRow>(text, values);
    } catch (err) {
      if (isConnectionError(err)) this.dropProbe(client);
      throw err;
    }
  }

  private dropProbe(c: Client): void {
    if (this.probeClient === c) this.probeClient = null;
    c.removeAllListeners('error');
    c.on('error', noop);
    (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    c.end().catch(noop);
  }

  /** Resolves once LISTEN is active (connecting if needed); rejects when it cannot connect now. */
  ensureListening(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.listening ??= this.connectListener().catch((err) => {
      this.listening = null;
      throw err;
    });
    return this.listening;
  }

  /**
   * Reconnects the LISTEN connection with backoff, then wakes every subscriber of this process:
   * notifications sent while it was away are lost, and the catch-up read every subscription does on
   * wake-up (from its own position) recovers those events, other servers' included.
   */
  private relisten(): void {
    if (this.relistening) return;
    this.relistening = true;
    const retry = (delay: number) =>
      setTimeout(() => {
        if (this.closed || this.wakers.size === 0) {
          this.relistening = false;
          return;
        }
        this.ensureListening().then(
          () => {
            this.relistening = false;
            for (const ws of this.wakers.keys()) this.wakeLocal(ws);
          },
          () => retry(Math.min(delay * 2, LISTEN_RETRY_MS.max)),
        );
      }, delay).unref();
    retry(LISTEN_RETRY_MS.first);
  }

  private async connectListener(): Promise<void> {
    const client = new Client({ connectionString: this.options.connectionString, connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000, keepAlive: true });
    client.on('notification', (msg) => {
      let n: CommitNotice;
      // Its own announcements come back too (the listener is another session): skipped unparsed. No string
      // value can hold an unescaped quote, so only the top-level key matches (both encoders' spacing).
      const payload = msg.payload ?? '';
      if (payload.includes(this.ownOriginJson) || payload.includes(this.ownOriginSql)) {
        this.wakeLocal(ownWorkspaceOf(payload));
        return;
      }
      // Another process listens (a hello) or appends: this one is not alone (othersMayListen).
      this.otherHeardAt = this.clock();
      if (payload.startsWith('{"w":"",')) return; // a hello (workspace ids are never empty)
      try {
        n = JSON.parse(payload);
      } catch {
        return;
      }
      if (typeof n?.w !== 'string') return;
      // Its own commits this process placed from its append's answer (or will, from the next one's).
      if (n.o !== this.origin) {
        let streams = Array.isArray(n.s) && n.s.every((x) => typeof x === 'string') ? n.s : null;
        if (Number.isSafeInteger(n.f) && Number.isSafeInteger(n.l)) {
          // The commit's rows, when they came (every position f..l, in order): this process's stores of
          // the workspace fold them without reading, so no stream is marked for them.
          const rows = commitRows(n);
          const sinks = this.rowSinks.get(n.w);
          if (rows && sinks?.size) {
            for (const sink of sinks) sink(rows, n.f, n.l);
            streams = [];
          } else if (sinks?.size) for (const sink of sinks) sink(null, n.f, n.l);
          this.othersAppended(n.w, n.f, n.l, streams);
        } else this.unsure(n.w);
      }
      this.wakeLocal(n.w);
    });
    const lost = () => {
      if (this.listener !== client) return;
      this.unsure();
      this.listener = null;
      this.listening = null;
      if (this.closed) return;
      this.listenerLost ??= new Date();
      this.relisten();
    };
    // Both, always: a socket error is emitted as 'error' (unhandled, it would kill the process), a
    // server that closes the connection (pg_terminate_backend, restart) as 'end'.
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.keepSessionAlive(client);
    this.listenerLost = null;
    this.listeningSince = this.clock();
    // Announcements sent while nobody listened are lost: whatever was folded before reads again.
    this.unsure();
    // The others that had stopped announcing (alone) announce again once they hear this.
    this.sayHello();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.poller);
    // A probe's query in flight is cut (it rejects at once); one still connecting ends itself (probe()).
    if (this.probeClient && !this.probeConnecting) this.dropProbe(this.probeClient);
    for (const set of this.wakers.values()) for (const w of set) w();
    this.wakers.clear();
    const l = this.listener;
    this.listener = null;
    await this.listening?.catch(() => undefined);
    await (l ?? this.listener)?.end().catch(() => undefined);
    // The probe needs no wait: it has a connection of its own, not the pool's.
    while (this.announcing.size) await new Promise((r) => setTimeout(r, 1));
    await this.pool.end().catch(() => undefined);
  }
}

/** What a process knows of a workspace's log without reading it (PostgresBackend.knowledge). */
interface Knowledge {
  /** Changes with every change below: a state folded at this stamp is current for every stream. */
  stamp: number;
  /** Every stream's state folded before this stamp may be behind (a gap, a lost channel). */
  epoch: number;
  /** Every position up to here is this process's own append or placed (its streams known) or under `epoch`. */
  accounted: number;
  /** Ranges above `accounted + 1` already placed (their streams marked), waiting for the positions below. */
  placed: Array<[number, number]>;
  /** The highest position known to exist (own appends, announcements, the heads poll). */
  highest: number;
  /** The head the last heads poll saw. */
  pollMark: number;
  /** Per stream, the stamp of the last placed append of another process to it (bounded: MAX_MARKS). */
  marks: Map<string, number>;
  /** How often every stream had to read again (diagnostics, tests). */
  unplaced: number;
}

/** Hears another process's announced commit of positions first..last: its rows, or null when they did not come with it. */
type RowSink = (rows: Row[] | null, first: number, last: number) => void;

/**
 * How long a subscription waits for the announcement of another process's commit that it learned of from
 * its own append's answer (the `seen` row) before it reads those positions. The announcement was sent at
 * that commit, before this process's own append could take the head lock, so it normally arrives within
 * milliseconds; it does not come when its sender died between its commit and a NOTIFY sent after it.
 */
const ROWS_ON_THEIR_WAY_MS = 250;

/** A commit as announced on the channel: workspace, first and last position, origin process, its streams. */
interface CommitNotice {
  w: string;
  f: number;
  l: number;
  o: string;
  s?: string[];
  /** The commit's rows (every position f..l, as stored), when they fit in the payload. */
  r?: Row[];
}

/** The workspace of an announcement (its first key, "w"), read without parsing the rest. */
function ownWorkspaceOf(payload: string): string {
  const m = /^\{"w"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(payload);
  try {
    return m ? (JSON.parse(m[1]) as string) : '';
  } catch {
    return '';
  }
}

/**
 * A commit's announcement as payloads of at most ANNOUNCE_PAYLOAD_MAX bytes (as schema v6's append_commit
 * sends them): consecutive chunks of its rows, each with its own range and streams; a row too large for a
 * payload of its own goes without rows, and a notice without rows as it is (streams dropped if too long).
 */
export function noticePayloads(n: CommitNotice): string[] {
  const bounded = (c: CommitNotice, text = JSON.stringify(c)): string => {
    if (Buffer.byteLength(text) > ANNOUNCE_PAYLOAD_MAX) text = JSON.stringify({ w: c.w, f: c.f, l: c.l, o: c.o, s: c.s });
    if (Buffer.byteLength(text) > ANNOUNCE_PAYLOAD_MAX) text = JSON.stringify({ w: c.w, f: c.f, l: c.l, o: c.o });
    return text;
  };
  if (!n.r || n.r.length !== n.l - n.f + 1) return [bounded(n)];
  // Each row serialized once: its text both sizes the chunk and goes into the payload, which is
  // JSON.stringify's text of {w, f, l, o, s, r} assembled from those pieces (the same bytes).
  const base = Buffer.byteLength(JSON.stringify({ w: n.w, f: n.l, l: n.l, o: n.o, s: [], r: [] }));
  const out: string[] = [];
  let rows: Row[] = [];
  let texts: string[] = [];
  let streams: string[] = [];
  let size = base;
  const flush = () => {
    const f = rows[0][0];
    const c: CommitNotice = { w: n.w, f, l: f + rows.length - 1, o: n.o, s: streams, r: rows };
    out.push(bounded(c, `{"w":${JSON.stringify(c.w)},"f":${c.f},"l":${c.l},"o":${JSON.stringify(c.o)},"s":${JSON.stringify(streams)},"r":[${texts.join(',')}]}`));
    rows = [];
    texts = [];
    streams = [];
    size = base;
  };
  for (const row of n.r) {
    const text = JSON.stringify(row);
    const rowBytes = Buffer.byteLength(text) + 1;
    const streamBytes = Buffer.byteLength(JSON.stringify(row[2])) + 1;
    // Sized against the chunk it would join; a row that starts a new chunk brings its stream too.
    if (rows.length > 0 && size + rowBytes + (streams.includes(row[2]) ? 0 : streamBytes) > ANNOUNCE_PAYLOAD_MAX) flush();
    if (!streams.includes(row[2])) {
      streams.push(row[2]);
      size += streamBytes;
    }
    rows.push(row);
    texts.push(text);
    size += rowBytes;
  }
  if (rows.length) flush();
  return out;
}

/** The rows of an announced commit, checked: exactly positions f..l in order, each a well-formed row; else null. */
function commitRows(n: CommitNotice): Row[] | null {
  if (!Array.isArray(n.r) || n.r.length !== n.l - n.f + 1) return null;
  for (let i = 0; i < n.r.length; i++) {
    const r = n.r[i] as unknown[];
    if (!Array.isArray(r) || r.length !== 8 || r[0] !== n.f + i || typeof r[1] !== 'string' || typeof r[2] !== 'string' || !Number.isSafeInteger(r[3]) || typeof r[4] !== 'string' || !Number.isSafeInteger(r[5]) || typeof r[6] !== 'string' || typeof r[7] !== 'string') return null;
  }
  return n.r;
}

/** Streams whose marks a workspace's knowledge keeps; past it, every stream reads again once. */
const MAX_MARKS = 50_000;
/** Ranges kept waiting for the positions below them; past it, every stream reads again. */
const MAX_PLACED = 1000;
/** Announcements queued after the fact beyond this are sent as one without streams. */
const ANNOUNCE_BACKLOG = 64;

/** Own (and announced) rows kept for this process's subscriptions, per workspace: the last 2,048 to 2,560. */
const RECENT_EVENTS = 2048;
/** … and at most this many characters of their data and metadata (a tenant's large events, 4 Mi). */
const RECENT_CHARS = 4 * 1024 * 1024;
/** A row larger than this is not kept (recent rows, tails): its readers read it. */
const KEPT_ROW_MAX_CHARS = 64 * 1024;
/** Characters of all streams' tails together (8 Mi). */
const TAIL_CHARS = 8 * 1024 * 1024;
const rowChars = (row: Row): number => row[6].length + row[7].length;
/** Streams whose last rows are kept (freshness' ownTail), and how many rows each. */
const RECENT_STREAMS = 1024;
const TAIL_ROWS = 32;

type Row = [number, string, string, number, string, number, string, string];
const COLUMNS = 'global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata';

const currentVersion = (type: string): number => eventCatalogue.get(type)?.schemaVersion ?? 0;

/** A stored event; metadata is decoded on first access (most readers only need the data). */
export class DecodedEvent implements RecordedEvent {
  readonly type: string;
  schemaVersion: number;
  data: unknown;
  private decodedMetadata?: EventMetadata;

  constructor(
    readonly eventId: string,
    readonly streamId: string,
    readonly streamRevision: number,
    readonly globalPosition: number,
    type: string,
    storedVersion: number,
    data: unknown,
    private readonly rawMetadata: string | EventMetadata,
  ) {
    this.type = internedType(type);
    this.schemaVersion = storedVersion;
    this.data = data;
    if (storedVersion < currentVersion(type)) {
      const up = upcastEvent(type, storedVersion, data, this.metadata);
      this.schemaVersion = up.schemaVersion;
      this.data = up.data;
    }
  }

  get metadata(): EventMetadata {
    return (this.decodedMetadata ??= typeof this.rawMetadata === 'string' ? JSON.parse(this.rawMetadata) : this.rawMetadata);
  }

  set metadata(m: EventMetadata) {
    this.decodedMetadata = m;
  }

  toJSON(): RecordedEvent {
    const { eventId, streamId, streamRevision, globalPosition, type, schemaVersion, data, metadata } = this;
    return { eventId, streamId, streamRevision, globalPosition, type, schemaVersion, data, metadata };
  }
}

const fromRow = (r: Row): RecordedEvent => new DecodedEvent(r[1], r[2], r[3], r[0], r[4], r[5], JSON.parse(r[6]), r[7]);

interface PendingAppend {
  streamId: string;
  expected: ExpectedRevision;
  events: NewEvent[];
  data: string[];
  metadata: string[];
  guard?: AppendOptions['guard'];
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

interface BatchRow {
  item: number;
  status: 'ok' | 'duplicate' | 'wrong_expected' | 'guard_moved' | 'duplicate_id';
  first_pos: number | null;
  last_pos: number | null;
  next_rev: number | null;
  detail: string | null;
}

export interface PostgresStoreOptions {
  backend: PostgresBackend;
  workspaceId: string;
  /** Close the backend with the store (a store opened on its own connection string). */
  ownsBackend?: boolean;
  /** Most appends one transaction carries (default 500). */
  maxBatch?: number;
  /** How long a subscription waits for another process's announced rows before reading them (default ROWS_ON_THEIR_WAY_MS). */
  rowsOnTheirWayMs?: number;
  /**
   * Test hook: runs inside the append transaction after the rows are written and the head lock is
   * held, before COMMIT (the gap test sleeps here).
   */
  beforeCommit?: (client: PoolClient) => Promise<void>;
}

const PAGE = 1000;

export class PostgresEventStore implements EventStore, AuditLogStore {
  readonly adapter = 'postgres';
  // LISTEN/NOTIFY (PostgreSQL) or a server-side subscription (KurrentDB) wakes subscribers on every process's appends.
  readonly wakesOnEveryWriter = true;
  readonly appendsAreExact = true;
  // append_batch looks every id up (stored: duplicate / duplicate_id; spent by a no-op: duplicate_id).
  readonly appendChecksKeys = true;
  // append_guarded checks each item's guard under the head lock (schema v4).
  readonly appendGuards = true;
  readonly workspaceId: string;
  private readonly backend: PostgresBackend;
  private readonly s: string;
  private readonly q;
  private pending: PendingAppend[] = [];
  private writing = false;
  private flushScheduled = false;
  private closed = false;
  private readonly subscriptions = new Set<Subscription>();
  /** The last revision this process knows of each stream without reading (its own appends, others' announced rows). */
  private readonly knownRevisions = new Map<string, number>();
  /** Per recently appended stream, its last rows of consecutive revisions, as stored (bounded). */
  private readonly tails = new Map<string, Row[]>();
  private readonly removeSink: () => void;
  /** This process's recent appends by position, as stored: subscriptions take them from here. */
  private readonly recent = new Map<number, Row>();
  /**
   * Ranges of other processes' positions this process learned of from its own appends' answers (the `seen`
   * row) before their announcements came, each with the time (Date.now()) until which a subscription waits
   * for their rows instead of reading them (recentPage).
   */
  private awaited: Array<[number, number, number]> = [];
  /** Wakes this process's subscriptions when the first awaited range runs out (nothing came: they read). */
  private awaitedTimer: NodeJS.Timeout | null = null;
  private recentChars = 0;
  private tailChars = 0;
  /**
   * logQuotaBytes (see logBytes): the characters of data and metadata the workspace's rows held up to
   * `position` as last summed, when; and this process's own appends committed since, per batch.
   */
  private size: { position: number; bytes: number; at: number } | null = null;
  private sizing = false;
  private ownSinceSize: Array<{ last: number; chars: number }> = [];
  private ownSinceChars = 0;

  /**
   * EventStore.exclusive: a session-level advisory lock on a connection of its own (sessionClient), taken
   * with pg_try_advisory_lock every EXCLUSIVE_POLL_MS (a waiter holds no lock and no pooled connection)
   * and released by ending the session — which a crash or a lost connection also does.
   */
  async exclusive<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const key = `${this.workspaceId}/${name}`;
    const client = await this.backend.sessionClient();
    try {
      const deadline = Date.now() + EXCLUSIVE_WAIT_MS;
      for (;;) {
        let held: boolean;
        try {
          held = (await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS held', [key])).rows[0].held;
        } catch (err) {
          throw unavailable(err);
        }
        if (held) break;
        if (Date.now() > deadline) throw new DomainError('store_unavailable', `exclusive section "${name}": another server has held it for ${EXCLUSIVE_WAIT_MS} ms; retry later`, { retryAfterMs: STORE_RETRY_AFTER_MS });
        await new Promise((r) => setTimeout(r, EXCLUSIVE_POLL_MS));
      }
      // The lock lives as long as this session: one idle past idle_session_timeout would be ended, and the
      // lock with it, while the section still talks to the outside world.
      this.backend.keepSessionAlive(client);
      return await fn();
    } finally {
      // Ending the session releases the lock (no unlock statement to lose on a dying connection).
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      await client.end().catch(noop);
    }
  }

  constructor(private readonly options: PostgresStoreOptions) {
    this.backend = options.backend;
    this.workspaceId = options.workspaceId;
    this.removeSink = this.backend.addRowSink(this.workspaceId, (rows, first, last) => {
      if (rows) for (const r of rows) this.noteRow(r);
      // Announced without its rows (too large to travel): subscriptions read these positions now.
      else this.awaited = this.awaited.filter((r) => r[1] < first || r[0] > last);
    });
    this.s = `"${this.backend.schema}"`;
    const s = this.s;
    // Named statements: prepared once per pooled connection.
    this.q = {
      append: `${s}.append_fused`,
      all: { name: `${s}.all`, text: `SELECT ${COLUMNS} FROM ${s}.events WHERE workspace_id = $1 AND global_position > $2 AND global_position <= $3 ORDER BY global_position LIMIT $4`, rowMode: 'array' },
      forward: { name: `${s}.fwd`, text: `SELECT ${COLUMNS} FROM ${s}.events WHERE workspace_id = $1 AND stream_id = $2 AND stream_revision >= $3 ORDER BY stream_revision LIMIT $4`, rowMode: 'array' },
      backward: { name: `${s}.bwd`, text: `SELECT ${COLUMNS} FROM ${s}.events WHERE workspace_id = $1 AND stream_id = $2 AND stream_revision <= $3 ORDER BY stream_revision DESC LIMIT $4`, rowMode: 'array' },
      byId: { name: `${s}.byid`, text: `SELECT ${COLUMNS} FROM ${s}.events WHERE workspace_id = $1 AND event_id = $2`, rowMode: 'array' },
      revision: { name: `${s}.rev`, text: `SELECT coalesce((SELECT stream_revision FROM ${s}.events WHERE workspace_id = $1 AND stream_id = $2 ORDER BY stream_revision DESC LIMIT 1), -1)`, rowMode: 'array' },
      head: { name: `${s}.head`, text: `SELECT coalesce((SELECT position FROM ${s}.heads WHERE workspace_id = $1), 0)`, rowMode: 'array' },
      chainPage: { name: `${s}.chainpage`, text: `SELECT ${COLUMNS}, encode(hash, 'hex') FROM ${s}.events WHERE workspace_id = $1 AND global_position > $2 ORDER BY global_position LIMIT $3`, rowMode: 'array' },
      chainInfo: {
        name: `${s}.chaininfo`,
        text: `SELECT coalesce(h.chained_from, 0), coalesce(e.global_position, 0), coalesce(encode(e.hash, 'hex'), ''), ${s}.chain_genesis($1) FROM (SELECT 1) one LEFT JOIN ${s}.heads h ON h.workspace_id = $1 LEFT JOIN LATERAL (SELECT global_position, hash FROM ${s}.events WHERE workspace_id = $1 ORDER BY global_position DESC LIMIT 1) e ON true`,
        rowMode: 'array',
      },
      checkpoints: { name: `${s}.cps`, text: `SELECT seq, body FROM ${s}.audit_checkpoints WHERE workspace_id = $1 ORDER BY seq`, rowMode: 'array' },
      claimNoop: { name: `${s}.claimnoop`, text: `SELECT held_by_event, principal, command, digest, json FROM ${s}.claim_noop($1, $2, $3, $4, $5, $6)` },
      findNoop: { name: `${s}.findnoop`, text: `SELECT principal, command, digest, json FROM ${s}.noop_keys WHERE workspace_id = $1 AND key = $2` },
      keyUnused: { name: `${s}.keyunused`, text: `SELECT NOT EXISTS (SELECT 1 FROM ${s}.events WHERE workspace_id = $1 AND event_id = $2) AND NOT EXISTS (SELECT 1 FROM ${s}.noop_keys WHERE workspace_id = $1 AND key = $2)`, rowMode: 'array' },
      // Incremental from the last sum: positions are taken under the head lock and committed in order, so
      // the rows visible past `position` are every row past it (the (workspace, position) primary key).
      logSize: { name: `${s}.logsize`, text: `SELECT coalesce(sum(octet_length(data) + octet_length(metadata)), 0)::float8, coalesce(max(global_position), $2) FROM ${s}.events WHERE workspace_id = $1 AND global_position > $2`, rowMode: 'array' },
      // Rows updated or deleted in the events table since the statistics were last reset (any workspace): appends
      // only insert, so this moves when stored rows were changed. The statistics reach the view within about a
      // second of the changing transaction's end (a session that then idles reports up to 10 s later).
      editMark: { name: `${s}.editmark`, text: `SELECT coalesce((SELECT (n_tup_upd + n_tup_del)::text || '/' || coalesce(extract(epoch from stats_reset)::text, '') FROM pg_stat_user_tables JOIN pg_stat_database ON datname = current_database() WHERE relid = to_regclass('${s}.events')), '')`, rowMode: 'array' },
      addCheckpoint: { name: `${s}.addcp`, text: `INSERT INTO ${s}.audit_checkpoints (workspace_id, seq, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, rowMode: 'array' },
    } as const;
  }

  /**
   * The characters of data and metadata the workspace's events hold (what its members wrote: rows, not
   * the table's pages or indexes), for the operator's logQuotaBytes — one member must not fill the database
   * every tenant shares. Not read per command: the sum is taken incrementally in the background (from the
   * position last summed, by the primary key) at most once per LOG_SIZE_FRESH_MS while commands ask, and
   * this process's own appends count as soon as they commit; another server's within a second. Undefined
   * until the first sum of an opened workspace is in (~0.1 s for 200k events; a lost connection keeps the last figure).
   */
  logBytes(): number | undefined {
    if (!this.sizing && !this.closed && (this.size === null || Date.now() - this.size.at >= LOG_SIZE_FRESH_MS)) this.refreshSize();
    return this.size === null ? undefined : this.size.bytes + this.ownSinceChars;
  }

  private refreshSize(): void {
    this.sizing = true;
    const from = this.size?.position ?? 0;
    this.rows(this.q.logSize, [this.workspaceId, from])
      .then((rows) => {
        const [bytes, position] = rows[0] as unknown as [number, string | number];
        const at = Number(position);
        this.size = { position: at, bytes: (this.size?.bytes ?? 0) + Number(bytes), at: Date.now() };
        // Own appends the sum now holds are no longer added on top of it.
        this.ownSinceSize = this.ownSinceSize.filter((x) => x.last > at);
        this.ownSinceChars = this.ownSinceSize.reduce((n, x) => n + x.chars, 0);
      })
      .catch(noop) // unavailable: the last figure stands, the next command's call tries again
      .finally(() => {
        this.sizing = false;
      });
  }

  /** An own append's characters, counted until a sum covers its last position. */
  private noteOwnSize(last: number, chars: number): void {
    if (this.size === null || last <= this.size.position) return; // the first sum will count it, or one did
    this.ownSinceSize.push({ last, chars });
    this.ownSinceChars += chars;
    // Bounded when nobody asks (no member command refreshes the sum): the older half merged into one entry,
    // dropped by the first sum past its last position — until then counted, never lost.
    if (this.ownSinceSize.length > 1024) {
      const old = this.ownSinceSize.splice(0, 512);
      this.ownSinceSize.unshift({ last: old[old.length - 1].last, chars: old.reduce((n, x) => n + x.chars, 0) });
    }
  }

  /** Opens a store on a shared backend, or on its own connection (closed with the store). */
  static async open(options: { workspaceId: string; backend: PostgresBackend } | ({ workspaceId: string } & PostgresBackendOptions)): Promise<PostgresEventStore> {
    if ('backend' in options) return new PostgresEventStore({ backend: options.backend, workspaceId: options.workspaceId });
    const backend = await PostgresBackend.open(options);
    return new PostgresEventStore({ backend, workspaceId: options.workspaceId, ownsBackend: true });
  }

  append(streamId: string, expected: ExpectedRevision, events: NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new StoreClosed());
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    // PostgreSQL text cannot hold NUL; JSON.stringify escapes it inside data, but ids are raw strings.
    if (streamId.includes('\u0000') || events.some((e) => e.eventId.includes('\u0000') || e.type.includes('\u0000'))) {
      return Promise.reject(new DomainError('invalid_payload', 'streamId/eventId/type: must not contain NUL characters'));
    }
    let data: string[];
    let metadata: string[];
    try {
      // Encode before queueing: serialization errors belong to this caller, not to the whole batch.
      const encoded = events.map(encodedJsonOf);
      data = encoded.map((j) => j.data);
      metadata = encoded.map((j) => j.metadata);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      const guard = options?.guard;
      this.pending.push(guard ? { streamId, expected, events, data, metadata, guard, resolve, reject } : { streamId, expected, events, data, metadata, resolve, reject });
      this.scheduleFlush();
    });
  }

  /**
   * Group commit: one batch in flight per store; appends arriving meanwhile wait for the next batch,
   * so under load each transaction (one round trip, one fsync) carries everything that queued.
   */
  private scheduleFlush(): void {
    if (this.writing || this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.writing || this.pending.length === 0) return;
    this.writing = true;
    const max = this.options.maxBatch ?? 500;
    const batch = this.pending.slice(0, max);
    this.pending = this.pending.slice(batch.length);
    let commit: CommitNotice | null = null;
    try {
      const all = await this.writeBatch(batch);
      this.backend.noteSuccess();
      // In item order (append_guarded answers a moved guard before the items it passes on).
      const rows = all.filter((row) => row.item >= 0).sort((a, b) => a.item - b.item);
      // What this process now knows without reading, recorded before any caller hears of its append: first
      // the others' appends its own follow (their streams read again), then its own.
      const seen = all.find((row) => row.item === -1);
      if (seen) {
        // Only a range it can place stream by stream (detail: at most SEEN_RANGE_MAX positions past one this
        // process accounted for): not the history before a process's first append, nor a backlog.
        if (seen.detail !== null && seen.last_pos! >= seen.first_pos! && this.backend.hearing) this.awaitRows(seen.first_pos!, seen.last_pos!);
        this.backend.othersAppended(this.workspaceId, seen.first_pos!, seen.last_pos!, seen.detail === null ? null : (JSON.parse(seen.detail) as string[]));
      }
      const ok = rows.map((row, i) => ({ row, req: batch[i] })).filter((x) => x.row.status === 'ok').sort((a, b) => a.row.first_pos! - b.row.first_pos!);
      for (const { row, req } of ok) this.noteOwnAppend(req, row);
      // A refused append (wrong_expected) needs no more: what it was refused for is at or before the
      // `seen` row's end, so its stream was read again or is marked now.
      if (ok.length) {
        const f = ok[0].row.first_pos!;
        const l = ok[ok.length - 1].row.last_pos!;
        // Every row (noticePayloads splits them), up to ANNOUNCED_ROWS_MAX as append_commit does.
        const r: Row[] = [];
        if (l - f < ANNOUNCED_ROWS_MAX) for (let p = f; p <= l; p++) {
          const row = this.recent.get(p);
          if (!row) break;
          r.push(row);
        }
        commit = { w: this.workspaceId, f, l, o: this.backend.origin, s: [...new Set(ok.map((x) => x.req.streamId))], ...(r.length === l - f + 1 ? { r } : {}) };
      }
      rows.forEach((row, i) => {
        const req = batch[i];
        switch (row.status) {
          case 'ok':
            req.resolve({ streamId: req.streamId, nextExpectedRevision: row.next_rev!, firstPosition: row.first_pos!, lastPosition: row.last_pos!, duplicate: false });
            break;
          case 'duplicate':
            req.resolve({ streamId: req.streamId, nextExpectedRevision: row.next_rev!, firstPosition: row.first_pos!, lastPosition: row.last_pos!, duplicate: true });
            break;
          case 'wrong_expected':
            req.reject(new WrongExpectedRevision(req.streamId, req.expected, row.next_rev!));
            break;
          case 'guard_moved':
            req.reject(new GuardMoved(req.guard!.streamId, req.guard!.revision, row.next_rev!));
            break;
          default:
            req.reject(new DuplicateEventId(row.detail ?? req.events[0].eventId));
        }
      });
    } catch (err) {
      // Not acknowledged: the commit may or may not have happened; a retry with the same ids is safe.
      // A connection error is store_unavailable (retryable), anything else is passed on as it is:
      // neither is ever reported as success.
      this.backend.noteFailure(err);
      for (const req of batch) req.reject(unavailable(err));
    } finally {
      this.writing = false;
      if (commit) this.backend.announce(this.workspaceId, commit, this.backend.notifyInCommit);
      if (this.pending.length) this.scheduleFlush();
    }
  }

  private noteOwnAppend(req: PendingAppend, row: BatchRow): void {
    const first = row.first_pos!;
    // As stored (the row a read returns); decoded per reader, so no two readers share one object.
    req.events.forEach((e, i) => this.noteRow([first + i, e.eventId, req.streamId, row.next_rev! - req.events.length + 1 + i, e.type, e.schemaVersion, req.data[i], req.metadata[i]]));
    this.backend.ownAppended(this.workspaceId, first, row.last_pos!);
    let chars = 0;
    for (let i = 0; i < req.data.length; i++) chars += req.data[i].length + req.metadata[i].length;
    this.noteOwnSize(row.last_pos!, chars);
  }

  /**
   * A committed row this process knows without reading: its own append's, or one another process's
   * announcement carried. Kept for subscriptions (by position) and for decisions (per stream, the last
   * rows of consecutive revisions: StoreFreshness.ownTail).
   */
  private noteRow(row: Row): void {
    const stream = row[2];
    const rev = row[3];
    if (rev > (this.knownRevisions.get(stream) ?? -1)) this.knownRevisions.set(stream, rev);
    const chars = rowChars(row);
    if (chars > KEPT_ROW_MAX_CHARS) {
      // Too large to keep (an event may hold 1 MiB): its readers read it. The gap it leaves sends
      // recentPage and ownTail to a read, and its stream's tail starts again after it.
      this.dropTail(stream);
      return;
    }
    const replaced = this.recent.get(row[0]);
    if (replaced) this.recentChars -= rowChars(replaced);
    this.recent.set(row[0], row);
    this.recentChars += chars;
    // Bounded by count and by characters: the subscriptions of a process keep up within a few batches;
    // older rows are read. The oldest go a quarter at a time: the loop here once went on over every key
    // after deleting one (~2,000 steps for every row once full: 4 % of a pg×2 server's CPU, session 44),
    // and deleting one per row would walk the holes the deletes leave at the front of the Map each time.
    if (this.recent.size > RECENT_EVENTS + RECENT_EVENTS / 4 || this.recentChars > RECENT_CHARS) {
      for (const [p, old] of this.recent) {
        this.recent.delete(p);
        this.recentChars -= rowChars(old);
        if (this.recent.size <= RECENT_EVENTS && this.recentChars <= (RECENT_CHARS * 3) / 4) break;
      }
    }
    let tail = this.tails.get(stream);
    if (tail?.length && rev <= tail[tail.length - 1][3]) return;
    if (tail?.length && rev !== tail[tail.length - 1][3] + 1) {
      this.dropTail(stream);
      tail = undefined;
    }
    tail ??= [];
    tail.push(row);
    this.tailChars += chars;
    if (tail.length > TAIL_ROWS) this.tailChars -= rowChars(tail.shift()!);
    // Most recently used last: the first key is the stream whose tail goes first.
    this.tails.delete(stream);
    this.tails.set(stream, tail);
    while (this.tails.size > RECENT_STREAMS || this.tailChars > TAIL_CHARS) this.dropTail(this.tails.keys().next().value!);
  }

  private dropTail(stream: string): void {
    const tail = this.tails.get(stream);
    if (!tail) return;
    for (const r of tail) this.tailChars -= rowChars(r);
    this.tails.delete(stream);
  }

  freshness(): StoreFreshness | undefined {
    if (!this.backend.hearing) return undefined;
    const k = this.backend.knowledge(this.workspaceId);
    return {
      stamp: k.stamp,
      stampOf: (streamId) => this.backend.stampOf(k, streamId),
      ownRevision: (streamId) => this.knownRevisions.get(streamId) ?? -1,
      ownTail: (streamId, fromRevision) => {
        // Every revision from `fromRevision` up to the last known one, or nothing (read).
        const rows = this.tails.get(streamId);
        if (!rows?.length || rows[0][3] > fromRevision || rows[rows.length - 1][3] !== this.knownRevisions.get(streamId)) return undefined;
        return rows.filter((r) => r[3] >= fromRevision).map(fromRow);
      },
    };
  }

  /**
   * A subscription's next page without a round trip when this process can answer it: every event after
   * `after` up to the last position it accounts for, each its own recent append or another server's
   * announced row (with LISTEN up, another server's append is announced). null: read.
   *
   * Positions past that one (another server's commit that this process learned of from its own append's
   * answer or the heads poll, whose announcement is still on its way) are not read: the page stops before
   * them, and the subscription waits. The announcement wakes it, or, if none comes (its sender died
   * between its commit and a NOTIFY sent after it), the heads poll that gives those positions up a whole
   * poll later (headPolled), and then it reads them. With two servers under load such a gap is open most
   * of the time, and reading through it cost every subscription of every server a round trip returning
   * rows it mostly held already (bench:cluster pg×2: ~60 reads/s of the log per server).
   */
  private recentPage(after: number, limit: number): RecordedEvent[] | null {
    if (!this.backend.hearing) return null;
    const k = this.backend.knowledge(this.workspaceId);
    const known = k.accounted;
    if (known < after) return null;
    const page: RecordedEvent[] = [];
    for (let p = after + 1; p <= known && page.length < limit; p++) {
      const r = this.recent.get(p);
      if (!r) return this.rowsOnTheirWay(p) ? page : null;
      page.push(fromRow(r));
    }
    return page;
  }

  /** Positions first..last were appended by other processes: their announcement, rows and all, is on its way. */
  private awaitRows(first: number, last: number): void {
    const now = Date.now();
    // Ranges run out in the order they were added: the expired ones are at the front.
    let expired = 0;
    while (expired < this.awaited.length && this.awaited[expired][2] <= now) expired++;
    if (expired) this.awaited.splice(0, expired);
    let from = first;
    while (from <= last && this.recent.has(from)) from++; // announced already
    if (from > last) return;
    this.awaited.push([from, last, now + (this.options.rowsOnTheirWayMs ?? ROWS_ON_THEIR_WAY_MS)]);
    // Bounded: a subscription that finds nothing here reads, which is always correct.
    if (this.awaited.length > 256) this.awaited.splice(0, this.awaited.length - 256);
  }

  /**
   * Whether a subscription should wait for position `p`'s row instead of reading it: another process's
   * commit learned of from this process's own append, whose announcement has not come yet and may still
   * (ROWS_ON_THEIR_WAY_MS). It wakes the subscription when it comes; a timer does when it has not.
   */
  private rowsOnTheirWay(p: number): boolean {
    const now = Date.now();
    const range = this.awaited.find((r) => r[0] <= p && p <= r[1] && r[2] > now);
    if (!range) return false;
    if (!this.awaitedTimer) {
      this.awaitedTimer = setTimeout(() => {
        this.awaitedTimer = null;
        this.backend.wakeLocal(this.workspaceId);
      }, range[2] - now + 1);
      this.awaitedTimer.unref();
    }
    return true;
  }

  private async writeBatch(batch: PendingAppend[]): Promise<BatchRow[]> {
    const ids: string[] = [];
    const typesCol: string[] = [];
    const versions: number[] = [];
    const data: string[] = [];
    const meta: string[] = [];
    let guarded = false;
    for (const req of batch) {
      if (req.guard) guarded = true;
      req.events.forEach((e, i) => {
        ids.push(e.eventId);
        typesCol.push(e.type);
        versions.push(e.schemaVersion);
        data.push(req.data[i]);
        meta.push(req.metadata[i]);
      });
    }
    const query = {
      name: `${this.s}.append`,
      text: `SELECT item, status, first_pos, last_pos, next_rev, detail FROM ${this.q.append}($1, $2::text[], $3::bigint[], $4::int[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::bigint, $11::text, $12::text, $13::text[], $14::bigint[])`,
      values: [
        this.workspaceId,
        batch.map((r) => r.streamId),
        batch.map((r) => encodeExpected(r.expected)),
        batch.map((r) => r.events.length),
        ids,
        typesCol,
        versions,
        data,
        meta,
        this.backend.knowledge(this.workspaceId).accounted,
        this.backend.notifyInCommit && this.backend.othersMayListen ? this.backend.channel : null,
        this.backend.origin,
        guarded ? batch.map((r) => r.guard?.streamId ?? null) : null,
        guarded ? batch.map((r) => r.guard?.revision ?? null) : null,
      ],
    };
    const hook = this.options.beforeCommit;
    if (!hook) {
      // Autocommit: the function is the whole transaction, one round trip.
      return (await this.backend.pool.query<BatchRow>(query)).rows;
    }
    const client = await this.backend.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const rows = (await client.query<BatchRow>(query)).rows;
      await hook(client);
      await client.query('COMMIT');
      return rows;
    } catch (err) {
      // A connection that failed or timed out goes back with its error (the pool drops it, see 'release').
      // A read-only refusal too: after a failover this connection still reaches the old primary.
      if (isConnectionError(err) || isReadOnlyError(err)) broken = err as Error;
      else await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release(broken);
    }
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const backward = options.direction === 'backward';
    let remaining = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    let cursor = options.fromRevision ?? (backward ? Number.MAX_SAFE_INTEGER : 0);
    while (remaining > 0) {
      const limit = Math.min(PAGE, remaining);
      const rows = await this.rows(backward ? this.q.backward : this.q.forward, [this.workspaceId, streamId, cursor, limit]);
      for (const row of rows) yield fromRow(row);
      if (rows.length < limit) return;
      remaining -= rows.length;
      cursor = rows[rows.length - 1][3] + (backward ? -1 : 1);
    }
  }

  /**
   * The events of `types` in (after, until], in log order, narrowed by `where` (an SQL predicate over
   * the events table's columns) when given: what a read model's set-based rebuild folds in JS, the few
   * events its statements cannot project (src/readmodels/stored/bulk.ts).
   */
  async readTypedPage(after: number, until: number, types: readonly string[], where?: string): Promise<RecordedEvent[]> {
    const text = `SELECT ${COLUMNS} FROM ${this.s}.events WHERE workspace_id = $1 AND global_position > $2 AND global_position <= $3 AND type = ANY($4::text[])${where ? ` AND (${where})` : ''} ORDER BY global_position`;
    return (await this.rows({ name: '', text, rowMode: 'array' }, [this.workspaceId, after, until, [...types]])).map(fromRow);
  }

  /** One page of the workspace log in global order: the building block of readAll and subscriptions. */
  async readPage(after: number, limit: number, until = Number.MAX_SAFE_INTEGER): Promise<RecordedEvent[]> {
    return (await this.rows(this.q.all, [this.workspaceId, after, until, limit])).map(fromRow);
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    let after = options.after ?? 0;
    let remaining = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const until = options.until ?? Number.MAX_SAFE_INTEGER;
    while (remaining > 0) {
      const limit = Math.min(PAGE, remaining);
      const page = await this.readPage(after, limit, until);
      for (const e of page) yield e;
      if (page.length < limit) return;
      remaining -= page.length;
      after = page[page.length - 1].globalPosition;
    }
  }

  /**
   * Catch-up then live. An outage does not end the subscription: a read that fails with
   * store_unavailable is retried (backoff up to 1 s) from the subscription's own position, after
   * LISTEN is active again, so it resumes where it was and sees every event committed meanwhile,
   * other servers' included. Other errors end it as before.
   */
  subscribeAll(options: SubscribeOptions = {}): Subscription {
    let ended = false;
    let interrupt: (() => void) | null = null;
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(done, ms);
        function done() {
          clearTimeout(t);
          interrupt = null;
          resolve();
        }
        interrupt = done;
      });
    const sub = new LiveSubscription(
      options.after ?? 0,
      async (after, limit) => {
        for (let delay = SUBSCRIPTION_RETRY_MS.first; ; delay = Math.min(delay * 2, SUBSCRIPTION_RETRY_MS.max)) {
          if (ended || this.closed) return [];
          try {
            await this.backend.ensureListening().catch((err) => {
              throw unavailable(err);
            });
            if (this.closed) return [];
            return this.recentPage(after, limit) ?? (await this.readPage(after, limit));
          } catch (err) {
            if (!(err instanceof DomainError && err.code === 'store_unavailable')) throw err;
            await pause(delay);
          }
        }
      },
      (wake) => {
        const l = this.backend.listen(this.workspaceId, wake);
        return () => {
          ended = true;
          (interrupt as (() => void) | null)?.();
          l.unlisten();
          this.subscriptions.delete(sub);
        };
      },
    );
    this.subscriptions.add(sub);
    return sub;
  }

  async claimNoopKey(key: string, record: NoopRecord): Promise<NoopRecord | 'event'> {
    if (this.closed) throw new StoreClosed();
    try {
      const { rows } = await this.backend.pool.query<{ held_by_event: boolean } & NoopRecord>({ ...this.q.claimNoop, values: [this.workspaceId, key, record.principal, record.command, record.digest, record.json] });
      const [row] = rows;
      if (row.held_by_event) return 'event';
      return { principal: row.principal, command: row.command, digest: row.digest, json: row.json };
    } catch (err) {
      throw unavailable(err);
    }
  }

  async findNoopKey(key: string): Promise<NoopRecord | null> {
    if (this.closed) throw new StoreClosed();
    try {
      const { rows } = await this.backend.pool.query<NoopRecord>({ ...this.q.findNoop, values: [this.workspaceId, key] });
      return rows[0] ?? null;
    } catch (err) {
      throw unavailable(err);
    }
  }

  async keyUnused(key: string): Promise<boolean> {
    return (await this.rows(this.q.keyUnused as { name: string; text: string; rowMode: 'array' }, [this.workspaceId, key]))[0][0] as unknown as boolean;
  }

  async findEvent(eventId: string): Promise<RecordedEvent | null> {
    const rows = await this.rows(this.q.byId, [this.workspaceId, eventId]);
    return rows.length ? fromRow(rows[0]) : null;
  }

  async streamRevision(streamId: string): Promise<number> {
    return (await this.rows(this.q.revision, [this.workspaceId, streamId]))[0][0] as unknown as number;
  }

  async headPosition(): Promise<number> {
    return (await this.rows(this.q.head, [this.workspaceId]))[0][0] as unknown as number;
  }

  async readChainPage(after: number, limit: number): Promise<ChainRow[]> {
    const rows = (await this.rows(this.q.chainPage, [this.workspaceId, after, limit])) as unknown as Array<[...Row, string | null, string | null]>;
    return rows.map((r) => ({ position: r[0], eventId: r[1], streamId: r[2], streamRevision: r[3], type: r[4], schemaVersion: r[5], data: r[6], metadata: r[7], hash: r[8] }));
  }

  /** AuditLogStore.editMark (see the statement). */
  async editMark(): Promise<string> {
    const [r] = (await this.rows(this.q.editMark, [])) as unknown as Array<[string]>;
    return r[0];
  }

  /** Read from the rows themselves, not the heads row: verify must see what is stored. */
  async chainInfo(): Promise<ChainInfo> {
    const [r] = (await this.rows(this.q.chainInfo, [this.workspaceId])) as unknown as Array<[number, number, string, string]>;
    return { chainedFrom: r[0], headPosition: r[1], headHash: r[1] === 0 ? r[3] : r[2] };
  }

  async appendCheckpoint(expectedSeq: number, body: string): Promise<boolean> {
    if (this.closed) throw new StoreClosed();
    try {
      return ((await this.backend.pool.query({ ...this.q.addCheckpoint, values: [this.workspaceId, expectedSeq, body] })).rowCount ?? 0) === 1;
    } catch (err) {
      this.backend.noteFailure(err);
      throw unavailable(err);
    }
  }

  async readCheckpoints(): Promise<StoredCheckpoint[]> {
    return ((await this.rows(this.q.checkpoints, [this.workspaceId])) as unknown as Array<[number, string]>).map(([seq, body]) => ({ seq, body }));
  }

  private async rows(q: { name: string; text: string; rowMode: 'array' }, values: unknown[]): Promise<Row[]> {
    if (this.closed) throw new StoreClosed();
    try {
      const rows = (await this.backend.pool.query<Row>({ ...q, values })).rows;
      this.backend.noteSuccess();
      return rows;
    } catch (err) {
      this.backend.noteFailure(err);
      throw unavailable(err);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Let queued appends finish: their callers were promised an answer.
    while (this.pending.length || this.writing) {
      if (!this.writing) void this.flush();
      await new Promise((r) => setTimeout(r, 1));
    }
    this.closed = true;
    this.removeSink();
    if (this.awaitedTimer) clearTimeout(this.awaitedTimer);
    for (const sub of [...this.subscriptions]) sub.close();
    if (this.options.ownsBackend) await this.backend.close();
  }
}
