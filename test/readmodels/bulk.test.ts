import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EventMetadata, NewEvent } from '../../src/events/envelope';
import type { EventStore } from '../../src/events/store/port';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { READ_MODELS, readModelHost } from '../../src/readmodels/stored/registry';
import type { ReadModelHost } from '../../src/readmodels/stored/host';
import type { WorkspaceHandle } from '../../src/workspaces/registry';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { appendLog, generateLog, prng, type Append } from './generate';
import { parseReviewStream } from '../../src/events/streams';
import { REVIEW_FUNCTIONS, registerReviewFunctions } from '../../src/readmodels/stored/review-stream-sql';
import { withReadModels } from '../support/ledger-fixture';
import { SlotMap } from '../../src/slots';

/**
 * The set-based rebuild (src/readmodels/stored/bulk.ts) against the JS fold of every event, table by table, over
 * a log built to reach every branch the statements reproduce: every event type the models consume,
 * review and non-review stream ids (dashes, leading zeros, unicode, a line break), nodes filed twice by
 * different authors, closed and confirmed before their filing and between two filings, confirmations by
 * the author, symbol ids empty or absent, anchors null, lines matched to fragments before and after the
 * computation, nulls and missing optional fields, unicode and very long strings, numbers JS and SQL print
 * differently, members added / changed / removed between acts, and token chains re-issued — plus a
 * generated log (seeded) on top. Both stores.
 */

let seq = 0;
const T0 = Date.parse('2025-03-01T00:00:00.000Z');
function ev(type: string, data: unknown, meta: Partial<EventMetadata> & { principal: string }): NewEvent {
  seq++;
  const metadata = { workspaceId: 'bk', correlationId: `c${seq}`, causationId: null, occurredAt: new Date(T0 + seq * 1000).toISOString(), ...meta } as EventMetadata;
  return { eventId: `bk-${seq}`, type, schemaVersion: 1, data, metadata };
}

const long = 'ü'.repeat(20_000) + '"\\\n\t' + '𝄞'.repeat(5000);
const tricky = 'naïve «quotes» "dq" \\ back \u2028 sep 🎉 e\u0301 中文';

function edgeLog(): Append[] {
  const out: Append[] = [];
  const ws = (events: NewEvent[]) => out.push({ streamId: 'workspace', events });
  const on = (streamId: string, events: NewEvent[]) => out.push({ streamId, events });
  const owner = { principal: 'user:owner', role: 'owner', via: 'cli' };
  ws([ev('MemberAdded', { principal: 'user:a', role: 'admin' }, owner), ev('MemberAdded', { principal: 'user:b', role: 'member' }, owner), ev('MemberAdded', { principal: 'agent:c', role: 'viewer' }, owner)]);
  ws([ev('ApiTokenIssued', { tokenId: 'tok-1', principal: 'user:a' }, owner)]);
  ws([ev('ApiTokenIssued', { tokenId: 'tok-2', principal: 'user:b' }, { principal: 'user:a', tokenId: 'tok-1', via: 'rpc' })]);
  ws([ev('ApiTokenIssued', { tokenId: 'tok-3', principal: 'agent:c' }, { principal: 'user:b', tokenId: 'tok-2' })]);
  ws([ev('RulesVersionActivated', { rulesVersion: 'r1', note: tricky }, owner)]);
  const streams = ['pr-repo-x-7', 'pr-a-007', 'pr-répo☃-3', 'pr-a-1-23', 'prx-1', 'pr--5', 'pr-a-1x2', 'pr-a\nb-4', 'pr-a\rb-4', 'pr-a\u2028b-4', 'pr-ab-'];
  const anchor = (symbolId: string | undefined | null, startLine = 10, endLine = 12, side?: string) => ({ path: 'src/a.ts', startLine, endLine, ...(side ? { side } : {}), ...(symbolId === undefined ? {} : { symbolId }) });
  const node = (title: string, body: string | null | undefined, principal: string, a: unknown) => ({ kind: 'finding', priority: 'P1', triage: { category: 'correctness', severity: 'low', effort: 'small' }, ...(a === undefined ? {} : { anchor: a }), title, ...(body === undefined ? {} : { body }), reviewer: { principal, brief: 'b' } });
  for (const [i, s] of streams.entries()) {
    const head = `h${i}`.padEnd(40, '0');
    const filed = (nodeId: string, principal: string, a: unknown, body: string | null | undefined = 'body', round = 1) => ev('ReviewNodeFiled', { nodeId, round, headSha: head, fingerprint: `fp${i % 3}`, role: i % 2 ? 'member' : null, node: node(`t ${nodeId} ${tricky}`, body, principal, a) }, { principal, via: 'mcp' });
    const act = (type: string, data: Record<string, unknown>, meta: Partial<EventMetadata> & { principal: string }) => ev(type, data, meta);
    on(s, [ev('ReviewRoundStarted', { round: 1, baseSha: 'b', headSha: head, requestedBy: 'user:a' }, { principal: 'user:a' })]);
    // Closed and confirmed before any filing: no closure, no confirmation.
    on(s, [act('ReviewNodeDismissed', { nodeId: 'n1', by: 'user:b', reason: 'early' }, { principal: 'user:b' }), act('ReviewNodeConfirmed', { nodeId: 'n1', by: 'user:b' }, { principal: 'user:b', role: 'member' })]);
    // Lines anchors before the computation (pending), one with an empty symbol id.
    on(s, [filed('n1', 'user:a', anchor(undefined, 11, 11, 'RIGHT'), long), filed('n2', 'user:b', anchor('', 20, 30)), filed('n3', 'agent:c', anchor(null, 1, 400))]);
    on(s, [filed('n4', 'user:a', anchor(`sym#${i}`)), filed('n5', 'user:b', null), filed('n6', 'user:b', undefined, undefined)]);
    // Confirmations: by the author (none), with no `by`, by another, again; acts with roles from data, metadata, members.
    on(s, [act('ReviewNodeConfirmed', { nodeId: 'n1', by: 'user:a', note: '' }, { principal: 'user:a' }), act('ReviewNodeConfirmed', { nodeId: 'n4', note: tricky }, { principal: 'agent:c', tokenId: 'tok-3', via: 'mcp' })]);
    on(s, [act('ReviewNodeConfirmed', { nodeId: 'n1', by: 'user:b', note: 'ok', role: 'admin' }, { principal: 'user:owner', role: 'owner' }), act('ReviewNodeConfirmed', { nodeId: 'n1', by: 'agent:c' }, { principal: 'agent:c' })]);
    on(s, [act('ReviewNodeConfirmed', { nodeId: 'n5', by: 'user:a' }, { principal: 'user:a', tokenId: 'tok-unknown' })]);
    const cohorts = [{ fragments: [{ path: 'src/a.ts', side: 'head', startLine: 1, endLine: 500, symbolId: `outer#${i}` }, { path: 'src/a.ts', side: 'head', startLine: 10, endLine: 12, symbolId: `inner#${i}` }, { path: 'src/a.ts', side: 'head', startLine: 9, endLine: 13, symbolId: `mid#${i}` }, { path: 'src/a.ts', side: 'base', startLine: 10, endLine: 12 }] }];
    on(s, [ev('ReviewComputed', { baseSha: 'b', headSha: head, engineVersion: 'x', inputsDigest: 'd', cohorts, dependencyDiffs: [], apiContract: { status: 'not_applicable', specs: [], changes: [] }, visual: { status: 'not_applicable', snapshots: [] }, changedFiles: [], metrics: {} }, { principal: 'system:compute' })]);
    // After the computation: lines anchors matched at filing, one matching nothing; a node filed again by another author.
    on(s, [filed('n7', 'user:b', anchor(undefined, 10, 12)), filed('n8', 'user:b', anchor(undefined, 600, 700)), filed('n9', 'user:a', anchor(undefined, 10, 12, 'LEFT'))]);
    on(s, [act('ReviewNodeResolved', { nodeId: 'n4', by: 'user:a' }, { principal: 'user:a' }), act('ReviewNodeDismissed', { nodeId: 'n7', reason: long }, { principal: 'user:b' })]);
    on(s, [filed('n4', 'user:b', anchor(`sym2#${i}`), null, 2), act('ReviewNodeConfirmed', { nodeId: 'n4', by: 'user:b' }, { principal: 'user:b' }), act('ReviewNodeConfirmed', { nodeId: 'n4', by: 'user:a' }, { principal: 'user:a' })]);
    on(s, [act('ReviewNodeDismissed', { nodeId: 'n4', by: 'user:b', reason: null }, { principal: 'user:b' }), act('ReviewNodeResolved', { nodeId: 'n5', by: 'user:b' }, { principal: 'user:b' })]);
    on(s, [ev('ReviewRoundStarted', { round: 2, baseSha: 'b', headSha: head, requestedBy: 'user:a', role: 'admin' }, { principal: 'user:a' })]);
    on(s, [
      act('ContractChangeDecided', { changeId: 'ch1', decision: 'accepted', by: 'user:a' }, { principal: 'user:a' }),
      act('ContractChangeDecided', { changeId: 'ch2', decision: 'rejected', note: '', by: 'user:b' }, { principal: 'user:b' }),
      act('ContractChangeDecided', { changeId: 'ch3', decision: 'accepted', note: tricky, by: 'user:gone' }, { principal: 'user:a', role: 'admin' }),
      act('VisualChangeApproved', { snapshotId: 'snap', approvalKey: 'k', by: 'agent:c' }, { principal: 'agent:c', tokenId: 'tok-2' }),
      act('ReviewFinalized', { round: 2, verdict: 'approve', confidence: i % 3 === 0 ? 0.30000000000000004 : i % 3 === 1 ? 1e-7 : 1, rulesVersion: 'r1', by: 'user:a' }, { principal: 'user:a' }),
      act('PublishRequested', { requestId: `rq${i}`, selection: 'all_open', by: 'user:b' }, { principal: 'user:b' }),
      act('PublishApproved', { requestId: `rq${i}`, by: 'user:a' }, { principal: 'user:a', tokenId: 'tok-1' }),
      act('ReviewPublished', { forgeReviewId: `f${i}`, event: 'COMMENT', fallbackUsed: i % 2 === 0, publishedBy: i % 2 ? 'user:b' : undefined }, { principal: 'system:server' }),
    ]);
    ws([ev('SuppressionFactRecorded', { fingerprint: `fp${i % 3}`, streamId: s, nodeId: 'n7', reason: tricky }, { principal: 'user:b' })]);
    // A fact whose event id and fingerprint need JSON escapes (the statement quotes them as JSON.stringify does).
    if (i === 1) ws([{ ...ev('SuppressionFactRecorded', { fingerprint: `fp "q" \\ \t ${tricky}`, streamId: s, nodeId: 'n8', reason: long }, { principal: 'user:b' }), eventId: `bk-"q"\\\u0001\u001f\u007f\u2028é🎉` }]);
    // Members change between acts; a token is issued again by another issuer (every chain through it changes).
    if (i === 2) ws([ev('MemberRoleChanged', { principal: 'user:b', from: 'member', to: 'owner' }, owner), ev('MemberRemoved', { principal: 'agent:c' }, owner)]);
    if (i === 4) ws([ev('ApiTokenIssued', { tokenId: 'tok-1', principal: 'user:a' }, { principal: 'user:b', via: 'webhook' }), ev('MemberAdded', { principal: 'agent:c', role: 'member' }, owner)]);
  }
  return out;
}

type Handle = WorkspaceHandle & { close(): Promise<void> };

async function dumpAll(host: ReadModelHost): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of host.names) out[name] = await host.dump(name);
  return out;
}

async function compare(ws: Handle): Promise<void> {
  const r = prng(5);
  const appends = [...edgeLog(), ...generateLog({ seed: 41, prs: 15, principals: 10, events: 900, sharedFingerprints: 8, workspaceId: 'bk' })];
  // Interleaved: the generated log's acts land between the edge cases' (some chunks hold both).
  appends.sort(() => r() - 0.5);
  const half = Math.floor(appends.length / 2);
  // Maintained event by event as the log grows (the JS fold), the rest appended before the rebuilds.
  const live = readModelHost({ ...ws, cache: new SlotMap() }, READ_MODELS, { bulk: false })!;
  for (let i = 0; i < half; i += 25) {
    await appendLog(ws.store, appends.slice(i, Math.min(i + 25, half)), 5);
    await live.settle();
  }
  await appendLog(ws.store, appends.slice(half), 5);
  await live.settle();
  const incremental = await dumpAll(live);
  await live.close();
  const rows = JSON.parse(incremental.audit).rows as unknown[][];
  expect(rows.length).toBeGreaterThan(300);
  const history = JSON.parse(incremental.history);
  // Matched at the computation and at filing, pending with no computation (the line-broken stream's heads match none).
  expect(history.symbols.length).toBeGreaterThan(50);
  expect(history.confirms.length).toBeGreaterThan(10);
  for (const [label, options, chunk] of [['set-based, one chunk', {}, undefined], ['set-based, small chunks', { bulkChunk: 37 }, 37], ['JS fold', { bulk: false }, undefined]] as const) {
    const host = readModelHost({ ...ws, cache: new SlotMap() }, READ_MODELS, options)!;
    await host.settle();
    const commit = jest.spyOn(host.storage, 'commit');
    await host.rebuildAll(host.names);
    const statements = commit.mock.calls.filter((c) => (c[7]?.apply.length ?? 0) > 0).length;
    if ('bulk' in options) expect(statements).toBe(0);
    else expect(statements).toBeGreaterThan(chunk ? 20 : 1);
    const rebuilt = await dumpAll(host);
    for (const name of host.names) expect({ label, name, rows: rebuilt[name] }).toEqual({ label, name, rows: incremental[name] });
    await host.close();
  }
}

const T = 240_000;

test(
  'sqlite: a set-based rebuild equals the JS fold of every event, table by table, over every edge case',
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bulk-'));
    const store: EventStore = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'bk', synchronous: 'NORMAL' });
    const ws: Handle = withReadModels({ id: 'bk', dir, store, cache: new SlotMap(), close: () => store.close() });
    try {
      await compare(ws);
    } finally {
      await ws.close();
    }
  },
  T,
);

whenPostgres('postgres set-based rebuild', () => {
  const schema = uniqueSchema('rl_bulk');
  afterAll(() => dropSchema(schema));
  test(
    'postgres: a set-based rebuild equals the JS fold of every event, table by table, over every edge case',
    async () => {
      const backend = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
      const store = await PostgresEventStore.open({ backend, workspaceId: 'bk' });
      const ws: Handle = withReadModels({ id: 'bk', dir: fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bulk-pg-')), store, cache: new SlotMap(), close: async () => (await store.close(), await backend.close()) });
      try {
        await compare(ws);
      } finally {
        await ws.close();
      }
    },
    T,
  );
});

test('sqlite: the review-stream functions of the statements answer as parseReviewStream, on every edge of its pattern', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const db = new Database(':memory:');
  registerReviewFunctions(db);
  const ids = ['pr-repo-x-7', 'pr-a-007', 'pr-répo☃-3', 'pr-a-1-23', 'prx-1', 'pr--5', 'pr-a-1x2', 'pr-a\nb-4', 'pr-a\rb-4', 'pr-a\u2028b-4', 'pr-a\u2029b-4', 'pr-ab-', 'pr-a-', 'pr-a-12345678901234567890', 'pr-a-b-c-0', 'workspace', '', 'PR-a-1', ' pr-a-1', 'pr-a-1 ', 'pr-a-１', 'pr-𝄞-9', 'pr-a\tb-2'];
  const stmt = db.prepare(`SELECT ${REVIEW_FUNCTIONS.repo}(?) AS repo, ${REVIEW_FUNCTIONS.pr}(?) AS pr`);
  for (const id of ids) {
    const want = parseReviewStream(id);
    expect({ id, got: stmt.get(id, id) }).toEqual({ id, got: { repo: want?.repoId ?? null, pr: want?.prNumber ?? null } });
  }
  db.close();
});
