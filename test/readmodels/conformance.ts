import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { EventStore } from '../../src/events/store/port';
import { auditCursor, auditQuery, AUDIT_ACTIONS } from '../../src/readmodels/queries/audit';
import { foldQuery, runQuery } from '../../src/readmodels/queries/run-query';
import { auditFromRows, auditReadModel } from '../../src/readmodels/stored/audit-read-model';
import { ReadModelHost, type ReadModelHostOptions } from '../../src/readmodels/stored/host';
import type { ReadModel } from '../../src/readmodels/stored/model';
import { historyFromRows, historyReadModel } from '../../src/readmodels/stored/history-read-model';
import { READ_MODELS, readModelHost } from '../../src/readmodels/stored/registry';
import { evolveHistory, historyOf, initialHistoryState, type HistoryState } from '../../src/context/history-fold';
import { parseReviewStream } from '../../src/events/streams';
import { QUERIES } from '../../src/readmodels/queries/queries';
import { reviewSources } from '../../src/readmodels/queries/review-fold';
import type { WorkspaceHandle } from '../../src/workspaces/registry';
import { appendLog, generateLog } from './generate';
import { SlotMap } from '../../src/slots';
import { newUuidV7 } from '../../src/events/ids';

export interface ReadModelBackend {
  /** A fresh, empty workspace on this store technology. */
  fresh(): Promise<Workspace>;
  /** The arguments the crash child needs to open the same workspace (see crash-child.ts). */
  childArgs(ws: Workspace): string[];
  /** Opens the same workspace again (after a child wrote to it). */
  reopen(ws: Workspace): Promise<Workspace>;
  /** False where the read-model storage cannot reach the log (KurrentDB): builds fold in JS only. */
  setBased?: boolean;
}

export interface Workspace extends WorkspaceHandle {
  close(): Promise<void>;
}

const root = path.join(__dirname, '..', '..');

/** Host over an explicit model list (not cached on the handle), for version and rebuild tests. */
const hostFor = (ws: WorkspaceHandle, models: ReadModel[] = READ_MODELS, batch?: number, bulk?: boolean, options: ReadModelHostOptions = {}): ReadModelHost => {
  const h = readModelHost({ ...ws, cache: new SlotMap() }, models, { batch, bulk, ...options });
  if (!h) throw new Error('no read-model storage for this store');
  return h;
};

async function auditAnswersMatchFold(ws: WorkspaceHandle, host: ReadModelHost, actors: string[]): Promise<void> {
  const head = await ws.store.headPosition();
  const slot = host.slot('audit')!;
  expect(slot.ready).toBe(true);
  const filters = [
    {},
    { actor: actors[1] },
    { actor: actors[2], action: 'confirm' as const },
    ...AUDIT_ACTIONS.map((action) => ({ action })),
    { repoId: 'repo1', prNumber: 3 },
    { prNumber: 2 },
    { since: '2025-01-01T00:05:00.000Z', until: '2025-01-01T00:20:00.000Z' },
    // Pages: a cursor (names the last row's position) and a size, with and without filters, in log order.
    { order: 'asc' as const },
    { order: 'asc' as const, limit: 7 },
    at({ order: 'asc' as const, limit: 11 }, Math.floor(head / 2)),
    at({ actor: actors[1], order: 'asc' as const, limit: 3 }, Math.floor(head / 4)),
    at({ since: '2025-01-01T00:05:00.000Z', order: 'asc' as const, limit: 5 }, Math.floor(head / 3)),
    { action: 'dismiss' as const, since: '2025-01-01T00:05:00.000Z', order: 'asc' as const, limit: 6 },
    { action: 'confirm' as const, since: '2025-01-01T00:03:00.000Z', until: '2025-01-01T00:09:00.000Z', order: 'asc' as const, limit: 4 },
    // Newest first (the default: an audit screen's first page), then with a cursor.
    { limit: 9 },
    { limit: 1000 },
    at({ actor: actors[1], limit: 4 }, Math.floor((head * 2) / 3)),
    { action: 'confirm' as const, since: '2025-01-01T00:05:00.000Z', order: 'desc' as const, limit: 6 },
    { repoId: 'repo1', prNumber: 3, order: 'desc' as const, limit: 2 },
    at({ since: '2025-01-01T00:05:00.000Z', until: '2025-01-01T00:20:00.000Z', order: 'desc' as const, limit: 8 }, head - 20),
  ];
  for (const f of filters) {
    for (const asOf of [undefined, Math.floor(head / 3), head - 7]) {
      const parsed = auditQuery.input.parse(f);
      const expected = await foldQuery(auditQuery, ws, parsed, asOf);
      // From the rows themselves (no fallback possible), and through runQuery as RPC and the CLI call it.
      const rows = await auditFromRows(host.storage, slot, parsed, asOf ?? head);
      expect({ f, asOf, value: rows }).toEqual({ f, asOf, value: expected.value });
      const actual = await runQuery(auditQuery, ws, parsed, asOf);
      expect({ f, asOf, value: actual.value }).toEqual({ f, asOf, value: expected.value });
      expect(actual.position).toBe(expected.position);
    }
  }
  // Paging through with `next` yields every row once, in log order, then newest first.
  const all = await auditFromRows(host.storage, slot, auditQuery.input.parse({ order: 'asc', limit: 1000 }), head);
  expect(all.next).toBeNull();
  expect(all.rows.length).toBeGreaterThan(40);
  for (const order of ['asc', 'desc'] as const) {
    const paged: unknown[] = [];
    for (let cursor: string | undefined; ; ) {
      const page = await auditFromRows(host.storage, slot, auditQuery.input.parse({ order, cursor, limit: 40 }), head);
      paged.push(...page.rows);
      if (page.next === null) break;
      expect(page.rows).toHaveLength(40);
      cursor = page.next;
    }
    expect(paged).toEqual(order === 'asc' ? all.rows : [...all.rows].reverse());
  }
}

/** The filters with a cursor continuing after `position` (as a page ending at that row returns it). */
function at<F extends Record<string, unknown>>(f: F, position: number): F & { cursor: string } {
  return { ...f, cursor: auditCursor(auditQuery.input.parse(f), position) };
}

/**
 * Every symbol's history, for PR streams in every round situation, from the rows equals `historyOf` over
 * the folded log — at the head and at two earlier bounds.
 */
async function historyAnswersMatchFold(ws: WorkspaceHandle, host: ReadModelHost): Promise<number> {
  const head = await ws.store.headPosition();
  const slot = host.slot('history')!;
  expect(slot.ready).toBe(true);
  let compared = 0;
  for (const until of [head, Math.floor(head / 3), head - 7]) {
    const states = new Map<string, HistoryState>();
    const streams = new Set<string>();
    for await (const e of ws.store.readAll({ until })) {
      const pr = parseReviewStream(e.streamId);
      if (!pr) continue;
      streams.add(e.streamId);
      let s = states.get(pr.repoId);
      if (!s) states.set(pr.repoId, (s = initialHistoryState(pr.repoId)));
      evolveHistory(s, e);
    }
    for (const [repoId, s] of states) {
      const symbols = [...Object.keys(s.bySymbol), 'src/none.ts#missing'];
      const current = [...streams].filter((id) => parseReviewStream(id)!.repoId === repoId).slice(0, 4);
      for (const streamId of current) {
        const rows = await historyFromRows(host.storage, slot, repoId, streamId, symbols, until);
        for (const symbolId of symbols) {
          expect({ until, streamId, symbolId, entries: rows.get(symbolId) }).toEqual({ until, streamId, symbolId, entries: historyOf(s, symbolId, { streamId }) });
          compared += rows.get(symbolId)!.length;
        }
      }
    }
  }
  return compared;
}

/**
 * Every review query (those folding the PR stream plus the workspace facts) answers from the
 * reviewFacts rows exactly as it does folding the whole workspace stream — for PRs with findings whose
 * fingerprints were dismissed elsewhere, at the head and at two earlier bounds.
 */
async function reviewAnswersMatchFold(ws: WorkspaceHandle, host: ReadModelHost): Promise<number> {
  const head = await ws.store.headPosition();
  expect(host.slot('reviewFacts')!.ready).toBe(true);
  const streams = new Set<string>();
  for await (const e of ws.store.readAll()) if (parseReviewStream(e.streamId)) streams.add(e.streamId);
  const queries = QUERIES.filter((q) => q.sources === reviewSources);
  expect(queries.length).toBeGreaterThanOrEqual(4);
  let flagged = 0;
  for (const streamId of [...streams].slice(0, 8)) {
    const input = parseReviewStream(streamId)!;
    for (const until of [head, Math.floor(head / 2), head - 7]) {
      for (const q of queries) {
        const parsed = q.input.parse(input);
        const expected = await foldQuery(q, ws, parsed, until);
        const actual = await runQuery(q, ws, parsed, until);
        expect({ q: q.name, streamId, until, value: actual.value }).toEqual({ q: q.name, streamId, until, value: expected.value });
        flagged += (JSON.stringify(actual.value).match(/"previouslyDismissed":\{/g) ?? []).length;
      }
    }
  }
  return flagged;
}

/** A canonical dump of every model of the host, by name. */
async function dumpAll(host: ReadModelHost): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of host.names) out[name] = await host.dump(name);
  return out;
}

async function rebuildAll(host: ReadModelHost): Promise<void> {
  for (const name of host.names) await host.rebuild(name);
}

/** Every model of `host` rebuilt from 0 holds, byte for byte, the rows it maintained event by event. */
async function expectRebuildMatches(host: ReadModelHost): Promise<void> {
  const maintained = await dumpAll(host);
  await rebuildAll(host);
  expect(await dumpAll(host)).toEqual(maintained);
}

async function runChild(args: string[], killOn: 'self' | 'parent'): Promise<{ acked: number; code: number | null; signal: NodeJS.Signals | null }> {
  const child = spawn(process.execPath, ['-r', path.join(root, 'tools/ts-register.js'), path.join(__dirname, 'crash-child.ts'), killOn, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let acked = 0;
  let buf = '';
  const killAt = 300 + Math.floor(Math.random() * 700);
  child.stdout.on('data', (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.startsWith('ack ')) acked = Math.max(acked, Number(line.slice(4)));
      if (line === 'live' && killOn === 'parent') setTimeout(() => child.kill('SIGKILL'), killAt);
    }
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ acked, code, signal })));
}

/**
 * One suite for every store technology: a read model maintained incrementally equals, row for row, the
 * same model rebuilt from position 0, and answers exactly what folding the log answers — including
 * as-of reads, across a model version change, and after a kill -9 between an append and its update.
 */
export function readModelConformance(name: string, backend: ReadModelBackend): void {
  describe(`${name}: read models`, () => {
    // A few thousand appends and a child process per test: minutes on a loaded 2-core machine.
    jest.setTimeout(240_000);
    const actorsOf = (n: number) => ['user:owner', ...Array.from({ length: n - 1 }, (_, i) => (i + 1) % 3 === 0 ? `agent:bot-${i + 1}` : `user:u${i + 1}`)];

    test('every model maintained event by event equals the one rebuilt from 0, byte for byte, and answers as the fold does (as-of included)', async () => {
      const ws = await backend.fresh();
      try {
        const host = hostFor(ws);
        expect(host.names).toEqual(READ_MODELS.map((m) => m.name));
        const appends = [...generateLog({ seed: 7, prs: 12, principals: 20, events: 700, sharedFingerprints: 20 })];
        // Incrementally: appends land while the models follow the subscription, in small waves.
        for (let i = 0; i < appends.length; i += 47) {
          await appendLog(ws.store, appends.slice(i, i + 47), 10);
          if (i % 3 === 0) await host.settle();
        }
        await host.settle();
        const incremental = await dumpAll(host);
        expect(JSON.parse(incremental.audit).rows.length).toBeGreaterThan(150);
        const history = JSON.parse(incremental.history);
        expect(history.entries.length).toBeGreaterThan(80);
        // Nodes indexed at filing and later, when the computation at their head arrived.
        expect(history.symbols.length).toBeGreaterThan(60);
        expect(history.rounds.length).toBeGreaterThan(0);
        const before = host.slot('audit')!;
        // Set-based (src/readmodels/stored/bulk.ts) where the storage reaches the log: statements in the commits.
        const commit = jest.spyOn(host.storage, 'commit');
        await rebuildAll(host);
        const setBased = commit.mock.calls.filter((c) => (c[7]?.apply.length ?? 0) > 0).length;
        commit.mockRestore();
        if (backend.setBased !== false) expect(setBased).toBeGreaterThan(0);
        expect(host.slot('audit')!.generation).toBe(before.generation + 1);
        expect(await dumpAll(host)).toEqual(incremental);
        await host.close();
        // And the JS fold of every event gives the same rows.
        const folded = hostFor(ws, READ_MODELS, undefined, false);
        await rebuildAll(folded);
        expect(await dumpAll(folded)).toEqual(incremental);
        await folded.close();

        // The cached host (the one runQuery uses) answers every filter exactly as the fold.
        const served = readModelHost(ws)!;
        await served.settle();
        await auditAnswersMatchFold(ws, served, actorsOf(20));
        expect(await historyAnswersMatchFold(ws, served)).toBeGreaterThan(100);
        // Nodes flagged "previously dismissed" through the rows (not only nulls compared).
        expect(await reviewAnswersMatchFold(ws, served)).toBeGreaterThan(0);
        expect(JSON.parse(incremental.reviewFacts).rules.length).toBeGreaterThan(0);
      } finally {
        await ws.close();
      }
    });

    test('a rebuild started while another is being built starts over: one slot answers, one slot cached, the same rows', async () => {
      const ws = await backend.fresh();
      try {
        await appendLog(ws.store, generateLog({ seed: 11, prs: 6, principals: 8, events: 400 }), 10);
        const host = hostFor(ws, READ_MODELS, 50);
        await host.settle();
        const incremental = await dumpAll(host);
        const generation = host.slot('audit')!.generation;
        // The second call starts while the first one's slot is still building (50 events a step, 400 events).
        let second: Promise<Awaited<ReturnType<ReadModelHost['rebuildAll']>>> | null = null;
        const first = await host.rebuildAll(['audit'], () => {
          second ??= host.rebuildAll(['audit']);
        });
        expect(second).not.toBeNull();
        // The dropped build's generation is free again: the new build takes it.
        expect(first[0].generation).toBe(generation + 1);
        expect((await second!)[0]).toBe(first[0]);
        expect(host.cachedSlots('audit')).toBe(1);
        expect(await dumpAll(host)).toEqual(incremental);
        await host.close();
      } finally {
        await ws.close();
      }
    });

    test('a rebuild whose batches commit behind the next fold, with a cache too small to answer (rows read back mid-build), equals the model kept event by event', async () => {
      const ws = await backend.fresh();
      try {
        await appendLog(ws.store, generateLog({ seed: 17, prs: 10, principals: 12, events: 600, sharedFingerprints: 10 }), 10);
        const live = hostFor(ws);
        await live.settle();
        const incremental = await dumpAll(live);
        await live.close();
        // 30 events a batch: each one's commit is in flight while the next is folded; 40 cached rows
        // a slot: the cache is cleared every few batches, so lookups read rows the batch in flight wrote.
        // The JS fold of every event (`bulk: false`): the set-based build reads nothing back.
        const host = readModelHost({ ...ws, cache: new SlotMap() }, READ_MODELS, { batch: 30, cacheRows: 40, bulk: false })!;
        await host.settle();
        const getRow = jest.spyOn(host.storage, 'getRow');
        const getRows = jest.spyOn(host.storage, 'getRows');
        await host.rebuildAll(host.names);
        expect(getRow.mock.calls.length + getRows.mock.calls.length).toBeGreaterThan(0);
        expect(await dumpAll(host)).toEqual(incremental);
        for (const name of host.names) expect(host.slot(name)!.position).toBe(await ws.store.headPosition());
        await host.close();
      } finally {
        await ws.close();
      }
    });

    test('a batch reads the rows the history model looks up with one statement per table, not a round trip per key', async () => {
      const ws = await backend.fresh();
      try {
        const appends = [...generateLog({ seed: 13, prs: 10, principals: 12, events: 600 })];
        await appendLog(ws.store, appends.slice(0, 200), 10);
        const builder = hostFor(ws, [historyReadModel]);
        await builder.settle();
        await builder.close();
        // A host that did not build the slot itself (another process, a restart): its rows are read back.
        const host = hostFor(ws, [historyReadModel]);
        await host.settle();
        const perKey = jest.spyOn(host.storage, 'getRow');
        const batched = jest.spyOn(host.storage, 'getRows');
        // Incrementally, in waves: confirmations, dismissals and filings look up entries, fragments, pending anchors.
        for (let i = 200; i < appends.length; i += 40) {
          await appendLog(ws.store, appends.slice(i, i + 40), 10);
          await host.settle();
        }
        expect(perKey).not.toHaveBeenCalled();
        expect(batched).toHaveBeenCalled();
        const incremental = await host.dump('history');
        // A build from 0 knows every row it stored (the slot was created empty here): nothing is read back.
        perKey.mockClear();
        batched.mockClear();
        await host.rebuild('history');
        expect(perKey).not.toHaveBeenCalled();
        expect(batched).not.toHaveBeenCalled();
        expect(await host.dump('history')).toBe(incremental);
        await host.close();
      } finally {
        await ws.close();
      }
    });

    test('a new model version is built beside the old one; until it caught up, the query never answers from half-built rows', async () => {
      const ws = await backend.fresh();
      try {
        await appendLog(ws.store, generateLog({ seed: 11, prs: 8, principals: 10, events: 500 }), 20);
        const v1 = hostFor(ws);
        await v1.settle();
        const v1Dump = await v1.dump('audit');
        await v1.close();

        // The next version with a deliberately slow apply: while it builds, the current version's rows stay the active ones.
        const next = auditReadModel.version + 1;
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let applied = 0;
        const v2Model: ReadModel = {
          ...auditReadModel,
          version: next,
          async apply(e, tx) {
            if (++applied === 50) await gate;
            return auditReadModel.apply(e, tx);
          },
        };
        const v2 = hostFor(ws, [v2Model]);
        await v2.start();
        expect(await v2.readySlot('audit', await ws.store.headPosition())).toBeNull();
        const stillV1 = hostFor(ws);
        await stillV1.start();
        // An older process sees a newer version stored and stands aside (the fold answers for it).
        expect(await stillV1.readySlot('audit', 1)).toBeNull();
        await stillV1.close();
        release();
        await v2.settle();
        expect(v2.slot('audit')).toMatchObject({ version: next, ready: true });
        expect(await v2.dump('audit')).toBe(v1Dump);
        const slots = await v2.storage.slots('audit');
        expect(slots.map((s) => s.version)).toEqual([next]);
        await v2.close();
      } finally {
        await ws.close();
      }
    });

    test('a rebuild runs beside the active slot: queries during it answer in full from the old rows', async () => {
      const ws = await backend.fresh();
      try {
        await appendLog(ws.store, generateLog({ seed: 5, prs: 6, principals: 8, events: 500 }), 20);
        const host = hostFor(ws, [auditReadModel], 100);
        await host.settle();
        const head = await ws.store.headPosition();
        const old = host.slot('audit')!;
        const expected = await foldQuery(auditQuery, ws, {}, head);
        let during: unknown = null;
        const rebuilt = await host.rebuild('audit', (p) => {
          if (during === null && p.position < head) during = host.slot('audit');
        });
        expect(during).toMatchObject({ generation: old.generation });
        expect(rebuilt.generation).toBe(old.generation + 1);
        expect(await auditFromRows(host.storage, rebuilt, {}, head)).toEqual(expected.value);
        await host.close();
      } finally {
        await ws.close();
      }
    });

    test('rounds that write no row leave the checkpoint unstored until one writes (or the host closes); another process folds those events again to the same rows', async () => {
      const ws = await backend.fresh();
      try {
        const log = [...generateLog({ seed: 5, prs: 4, principals: 8, events: 260 })];
        await appendLog(ws.store, log.slice(0, 200), 10);
        const first = hostFor(ws);
        await first.settle();
        await first.close();
        const stored = async (host: ReadModelHost): Promise<Record<string, number>> => {
          const out: Record<string, number> = {};
          for (const name of host.names) out[name] = (await host.storage.slots(name)).find((x) => x.ready)!.position;
          return out;
        };
        const every = (host: ReadModelHost, n: number): Record<string, number> => Object.fromEntries(host.names.map((name) => [name, n]));
        const p0 = await ws.store.headPosition();
        // A window no test outlasts: every store below is caused by a write or a close, never by the clock.
        const a = hostFor(ws, READ_MODELS, undefined, undefined, { checkpointDeferMs: 600_000 });
        await a.settle();
        expect(await stored(a)).toEqual(every(a, p0));
        const commit = jest.spyOn(a.storage, 'commit');
        // Thirty appends of events no model reads, each folded on its own round.
        for (let i = 0; i < 30; i++) {
          await ws.store.append(`noise-${i % 3}`, 'any', [{ eventId: newUuidV7(), type: 'NoiseRecorded', schemaVersion: 1, data: { i }, metadata: { principal: 'user:owner', workspaceId: 'scale', correlationId: `noise-${i}`, causationId: null, occurredAt: '2025-01-02T00:00:00.000Z' } }]);
          await a.settle();
        }
        const p1 = await ws.store.headPosition();
        expect(p1).toBe(p0 + 30);
        expect(commit).not.toHaveBeenCalled();
        for (const name of a.names) expect(a.slot(name)!.position).toBe(p1);
        expect(await stored(a)).toEqual(every(a, p0));
        // An act the audit records: its round stores the rows and the checkpoint from the one stored, in one commit.
        const act = log.slice(200).find((x) => x.streamId !== 'workspace')!;
        await ws.store.append(act.streamId, 'any', act.events);
        await a.settle();
        const p2 = await ws.store.headPosition();
        const audits = commit.mock.calls.filter((c) => c[0].name === 'audit');
        expect(audits.map((c) => [c[3], c[4], c[2].size > 0])).toEqual([[p0, p2, true]]);
        expect((await stored(a)).audit).toBe(p2);
        commit.mockRestore();
        // Another host (another process's) starts from the stored checkpoints, folds what lies past them again, writing
        // nothing new, and stores its own on close; the first host's unstored checkpoint then finds it moved.
        const b = hostFor(ws);
        await b.settle();
        await b.close();
        expect(await stored(a)).toEqual(every(a, p2));
        await a.close();
        const check = hostFor(ws);
        await check.settle();
        expect(await stored(check)).toEqual(every(check, p2));
        await expectRebuildMatches(check);
        await check.close();
      } finally {
        await ws.close();
      }
    });

    for (const killOn of ['self', 'parent'] as const) {
      test(`after a kill -9 ${killOn === 'self' ? 'right after an append was acknowledged, before the model saw it' : 'at a random moment under appends'}, the model catches up to what a rebuild from 0 gives`, async () => {
        const ws = await backend.fresh();
        try {
          // The parent creates the model first, so the child maintains an existing, ready slot.
          await appendLog(ws.store, generateLog({ seed: 3, prs: 5, principals: 12, events: 200 }), 10);
          const first = hostFor(ws);
          await first.settle();
          await first.close();
          await ws.close();
          const run = await runChild(backend.childArgs(ws), killOn);
          expect(run.signal).toBe('SIGKILL');
          const again = await backend.reopen(ws);
          try {
            const head = await again.store.headPosition();
            expect(head).toBeGreaterThanOrEqual(run.acked);
            const host = hostFor(again);
            await host.start();
            if (killOn === 'self') for (const name of host.names) expect(host.slot(name)!.position).toBeLessThan(head);
            await host.settle();
            await expectRebuildMatches(host);
            await host.close();
          } finally {
            await again.close();
          }
        } finally {
          await ws.close().catch(() => undefined);
        }
      });
    }
  });
}

export type { EventStore };
