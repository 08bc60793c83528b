import { Client } from 'pg';
import { chainHash, genesisHash } from '../../src/events/chain';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from './pg-support';

/**
 * Schema v7's append_fused is append_guarded (v4) → append_commit (v6) → append_batch (v2) joined into one
 * function (issue 35: PostgreSQL's CPU per group commit). It must answer exactly as the three layers did:
 * the same batches, generated at random over every path (fresh appends, retries, ids stored under another
 * stream or sent twice, keys a no-op spent, wrong expected revisions, guards that hold or moved — an
 * earlier item of the batch moving one too —, batches past the small-batch look-ups, a `seen` range and
 * announcements), are sent to two schemas in lockstep, one through each function: every answer row, every
 * announcement and, at the end, every stored row with its hash and the head must be the same.
 */
whenPostgres('append_fused', () => {
  const schemaA = uniqueSchema('rl_fused_a');
  const schemaB = uniqueSchema('rl_fused_b');
  let client: Client;
  let listener: Client;
  const heard: Record<string, string[]> = { a: [], b: [] };

  beforeAll(async () => {
    for (const schema of [schemaA, schemaB]) await (await PostgresEventStore.open({ workspaceId: 'w1', connectionString: DATABASE_URL, schema })).close();
    client = new Client({ connectionString: DATABASE_URL });
    await client.connect();
    listener = new Client({ connectionString: DATABASE_URL });
    await listener.connect();
    listener.on('notification', (m) => heard[m.channel.endsWith('_a') ? 'a' : 'b'].push(m.payload ?? ''));
    await listener.query(`LISTEN ${schemaA}_a`);
    await listener.query(`LISTEN ${schemaB}_b`);
  });
  afterAll(async () => {
    await client?.end();
    await listener?.end();
    await dropSchema(schemaA);
    await dropSchema(schemaB);
  });

  test('answers, announcements and stored rows are those of append_guarded over 400 random batches', async () => {
    let seed = 20261205;
    const rnd = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    const streams = ['s-1', 's-2', 's-3', 's-4', 'workspace'];
    const revs = new Map<string, number>();
    const stored: Array<{ id: string; stream: string; meta: string }> = [];
    const noops: string[] = [];
    let head = 0;
    let n = 0;
    const meta = (principal: string, digest: string) => JSON.stringify({ principal, command: 'addReviewNode', commandDigest: digest, workspaceId: 'w1' });
    const call = async (fn: 'append_guarded' | 'append_fused', schema: string, channel: string | null, args: unknown[]) =>
      (
        await client.query(
          `SELECT item, status, first_pos::int AS first_pos, last_pos::int AS last_pos, next_rev::int AS next_rev, detail FROM "${schema}".${fn}($1, $2::text[], $3::bigint[], $4::int[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::bigint, $11::text, $12::text, $13::text[], $14::bigint[])`,
          [...args.slice(0, 10), channel, 'origin-1', ...args.slice(10)],
        )
      ).rows;
    const paths = new Set<string>();
    for (let b = 0; b < 400; b++) {
      if (rnd() < 0.05) {
        // A no-op command spends a key (claim_noop), in both schemas.
        const key = `noop-${n++}`;
        for (const schema of [schemaA, schemaB]) await client.query(`SELECT * FROM "${schema}".claim_noop('w1', $1, 'user:a', 'setLevel', 'd', '{}')`, [key]);
        noops.push(key);
      }
      const items = rnd() < 0.1 ? 6 + Math.floor(rnd() * 6) : 1 + Math.floor(rnd() * 5);
      const a = { streams: [] as string[], expected: [] as number[], counts: [] as number[], ids: [] as string[], types: [] as string[], versions: [] as number[], data: [] as string[], meta: [] as string[] };
      const guardStreams: Array<string | null> = [];
      const guardRevs: Array<number | null> = [];
      for (let i = 0; i < items; i++) {
        const stream = pick(streams);
        const cur = revs.get(stream) ?? -1;
        const r = rnd();
        a.streams.push(stream);
        a.expected.push(r < 0.55 ? cur : r < 0.7 ? -3 : r < 0.8 ? (cur < 0 ? -1 : -2) : r < 0.9 ? cur + 1 : -1);
        const count = rnd() < 0.8 ? 1 : 2 + Math.floor(rnd() * 3);
        a.counts.push(count);
        for (let k = 0; k < count; k++) {
          const r2 = rnd();
          let id = `e-${n++}`;
          let m = meta(pick(['user:a', 'user:b']), pick(['d1', 'd2']));
          if (k === 0 && r2 < 0.08 && stored.length) {
            // A retry: same id, same caller and command (or, half the time, another caller: duplicate_id).
            const old = pick(stored);
            id = old.id;
            m = rnd() < 0.5 ? old.meta : meta('user:c', 'd9');
          } else if (r2 < 0.11 && a.ids.length) id = pick(a.ids); // sent twice in one batch
          else if (r2 < 0.13 && noops.length) id = pick(noops);
          a.ids.push(id);
          a.types.push(pick(['ReviewNodeFiled', 'ReviewLevelSet']));
          a.versions.push(1);
          a.data.push(JSON.stringify({ i: n, text: 'x'.repeat(Math.floor(rnd() * 300)) }));
          a.meta.push(m);
        }
        const g = rnd();
        guardStreams.push(g < 0.5 ? 'workspace' : g < 0.6 ? pick(streams) : null);
        const gs = guardStreams[i];
        guardRevs.push(gs === null ? null : rnd() < 0.8 ? (revs.get(gs) ?? -1) : (revs.get(gs) ?? -1) - 1);
      }
      const guarded = rnd() < 0.8;
      const after = rnd() < 0.2 ? -1 : Math.max(-1, head - Math.floor(rnd() * 300));
      const announce = rnd() < 0.7;
      const args = [
        'w1',
        a.streams,
        a.expected,
        a.counts,
        a.ids,
        a.types,
        a.versions,
        a.data,
        a.meta,
        after,
        guarded ? guardStreams : null,
        guarded ? guardRevs : null,
      ];
      const before = await call('append_guarded', schemaA, announce ? `${schemaA}_a` : null, args);
      const fused = await call('append_fused', schemaB, announce ? `${schemaB}_b` : null, args);
      const byItem = (rows: Array<{ item: number }>) => [...rows].sort((x, y) => x.item - y.item);
      expect(byItem(fused)).toEqual(byItem(before));
      for (const row of before) {
        paths.add(row.status);
        if (row.status === 'ok') {
          const i = row.item;
          revs.set(a.streams[i], row.next_rev);
          const off = a.counts.slice(0, i).reduce((x, y) => x + y, 0);
          for (let k = 0; k < a.counts[i]; k++) stored.push({ id: a.ids[off + k], stream: a.streams[i], meta: a.meta[off + k] });
          head = Math.max(head, row.last_pos);
        }
        if (row.status === 'seen' && row.detail !== null && row.detail !== '[]') paths.add('seen with streams');
      }
    }
    // Every path was taken.
    expect([...paths].sort()).toEqual(['duplicate', 'duplicate_id', 'guard_moved', 'ok', 'seen', 'seen with streams', 'wrong_expected']);
    const rows = async (schema: string) =>
      (await client.query(`SELECT global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, encode(hash, 'hex') AS hash FROM "${schema}".events ORDER BY global_position`)).rows;
    const storedA = await rows(schemaA);
    expect(storedA.length).toBeGreaterThan(300);
    expect(await rows(schemaB)).toEqual(storedA);
    const heads = async (schema: string) => (await client.query(`SELECT position::int, hash FROM "${schema}".heads`)).rows;
    expect(await heads(schemaB)).toEqual(await heads(schemaA));
    // Announcements: a round trip on the listener after the last commit delivers everything sent before it.
    await listener.query('SELECT 1');
    expect(heard.a.length).toBeGreaterThan(100);
    expect(heard.b).toEqual(heard.a);
  });

  test('a v6 process (append_guarded) and a v7 process (append_fused) sending the same keys at once to one schema: each id stored once, one unbroken chain', async () => {
    // Two connections, as two servers of a rolling upgrade: 60 rounds, each sending the same three-item
    // batch (the same ids: a retry racing its original) through both functions at once.
    const v6 = new Client({ connectionString: DATABASE_URL });
    const v7 = new Client({ connectionString: DATABASE_URL });
    await v6.connect();
    await v7.connect();
    try {
      const meta = JSON.stringify({ principal: 'user:a', command: 'addReviewNode', commandDigest: 'd', workspaceId: 'w2' });
      const sql = (fn: string) =>
        `SELECT item, status FROM "${schemaA}".${fn}($1, $2::text[], $3::bigint[], $4::int[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::bigint, $11::text, $12::text, $13::text[], $14::bigint[])`;
      for (let r = 0; r < 60; r++) {
        const streams = [`c-${r % 3}`, `d-${r % 5}`, 'e'];
        const args = ['w2', streams, [-3, -3, -3], [1, 1, 1], streams.map((s) => `k-${r}-${s}`), ['T', 'T', 'T'], [1, 1, 1], streams.map(() => JSON.stringify({ r })), [meta, meta, meta], -1, null, 'o', ['workspace', null, 'workspace'], [-1, null, -1]];
        const [a, b] = await Promise.all([v6.query(sql('append_guarded'), args), v7.query(sql('append_fused'), args)]);
        // One of the two wrote each item, the other was told it is a retry of it.
        for (const item of [0, 1, 2]) {
          const statuses = [a, b].map((res) => res.rows.find((x) => x.item === item)?.status).sort();
          expect(statuses).toEqual(['duplicate', 'ok']);
        }
      }
      const rows = (
        await client.query(
          `SELECT global_position::int AS position, event_id, stream_id, stream_revision::int AS revision, type, schema_version, data, metadata, encode(hash, 'hex') AS hash FROM "${schemaA}".events WHERE workspace_id = 'w2' ORDER BY global_position`,
        )
      ).rows;
      expect(rows.length).toBe(180);
      expect(new Set(rows.map((x) => x.event_id)).size).toBe(180);
      let prev = genesisHash('w2');
      rows.forEach((x, i) => {
        expect(x.position).toBe(i + 1);
        const hash = chainHash(prev, { position: x.position, streamId: x.stream_id, streamRevision: x.revision, type: x.type, schemaVersion: x.schema_version, data: x.data, metadata: x.metadata, eventId: x.event_id });
        expect(x.hash).toBe(hash);
        prev = hash;
      });
    } finally {
      await v6.end();
      await v7.end();
    }
  });
});
