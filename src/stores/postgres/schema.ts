import { DomainError } from '../../domain-error';

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
