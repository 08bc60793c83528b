import * as fs from 'node:fs';
import { newUuidV7 } from '../../src/events/ids';
import { Ledger, LOCAL_OPERATOR } from '../../src/ledger';
import type { StreamFold } from '../../src/events/kernel-types';
import { loadStream } from '../../src/workspaces/load-stream';
import { authenticate } from '../../src/security/tokens';
import { dropSchema, uniqueSchema, until, whenPostgres } from './pg-support';
import { findingNode, openPostgresLedger, statementCounter } from './pg-statements';

/**
 * Statements per command at synchronous_commit = off (bench:cluster's setting), counted at the client:
 * the key is checked by the append itself (append_commit → append_batch), the announcement is sent inside
 * the commit, and a decision reads a stream only when another server moved THAT stream (freshness per
 * stream: announcements and each append's answer name the streams others appended to). Two servers in
 * this one process (a and b); the counts are of both, taken while only one of them works.
 */
whenPostgres('postgres statements per command, one and two servers, freshness per stream', () => {
  const schema = uniqueSchema('rl_sf');
  const dirs: string[] = [];
  let a: Ledger;
  let b: Ledger;
  const counter = statementCounter(schema);
  const subs: Array<{ close(): void }> = [];
  const env = (key = newUuidV7()) => ({ ...LOCAL_OPERATOR, idempotencyKey: key });
  // Always announcing: these tests count statements with freshness per stream, not a lone server's
  // silence (pg-alone.test.ts), and b starts listening only in the two-server tests.
  const open = () => openPostgresLedger(schema, dirs, { synchronousCommit: false, aloneAfterMs: Infinity });
  const request = (l: Ledger, pr: number, head: string) => l.run('requestReview', 'sf', env(), { repoId: 'r', prNumber: pr, baseSha: 'c'.repeat(40), headSha: head.repeat(40) });
  const file = (l: Ledger, pr: number, title: string, key?: string, headSha?: string) => l.run('addReviewNode', 'sf', env(key), { repoId: 'r', prNumber: pr, node: findingNode(title), ...(headSha ? { headSha } : {}) });
  const statementsOf = (run: () => Promise<unknown>) => counter.during(run, true);
  const titles = async (l: Ledger) => {
    const out: string[] = [];
    for await (const e of (await l.workspace('sf')).store.readAll()) if (e.type === 'ReviewNodeFiled') out.push((e.data as { node: { title: string } }).node.title);
    return out;
  };

  beforeAll(async () => {
    counter.install();
    a = open();
    b = open();
    await a.createWorkspace(env(), { workspaceId: 'sf', name: 'sf' });
    // As a server does (its event feed subscribes): a hears other servers' commits. b subscribes in the
    // two-server tests (its feed would read a's commits: statements of the other server).
    await subscribe(a);
  });
  const subscribe = async (l: Ledger) => {
    const sub = (await l.workspace('sf')).store.subscribeAll();
    subs.push(sub);
    void (async () => {
      for await (const _ of sub) void _;
    })();
  };
  /** A command's own statements on one of two servers: not the event feeds' pages of the other's commits. */
  const own = (sent: Record<string, number>) => Object.fromEntries(Object.entries(sent).filter(([k]) => k !== 'all'));
  afterAll(async () => {
    counter.restore();
    for (const s of subs) s.close();
    await a?.close();
    await b?.close();
    await dropSchema(schema);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('one server: addReviewNode is one statement (the append that checks the key and announces itself)', async () => {
    await request(a, 1, 'a');
    await file(a, 1, 'warm');
    const sent: Array<Record<string, number>> = [];
    for (let i = 0; i < 5; i++) sent.push(await statementsOf(() => file(a, 1, `one ${i}`)));
    // Every filing is one append and never a key query. Reads: none, except that the designed fallback may
    // make one filing re-read — a lost notification, or a position the heads poll could not place yet (seen
    // once in a full suite run with other PostgreSQL suites in parallel: {append: 1, fwd: 2}).
    expect(sent.map((x) => x.append)).toEqual([1, 1, 1, 1, 1]);
    expect(sent.filter((x) => Object.keys(x).some((k) => k !== 'append' && k !== 'fwd'))).toEqual([]);
    expect(sent.filter((x) => JSON.stringify(x) === JSON.stringify({ append: 1 })).length).toBeGreaterThanOrEqual(4);
  });

  it("one server, a token holder's addReviewNode with its token check: still one statement — the check reads nothing, the append is guarded on what it saw", async () => {
    await a.run('addMember', 'sf', env(), { principal: 'agent:rt', role: 'member' });
    const { token } = await a.issueToken('sf', env(), { principal: 'agent:rt', role: 'member' });
    await request(a, 60, 'a');
    // What the RPC edge does for a command the kernel alone runs (RpcDispatcher.command).
    const asHolder = async (title: string, guarded: boolean) => {
      const caller = await authenticate(a, 'sf', token, undefined, { guarded });
      const envelope = { idempotencyKey: newUuidV7(), principal: caller.principal, role: caller.role, tokenId: caller.tokenId, accessCheckedAt: caller.accessCheckedAt };
      return a.run('addReviewNode', 'sf', envelope, { repoId: 'r', prNumber: 60, node: findingNode(title) });
    };
    await asHolder('warm', true);
    const guarded: Array<Record<string, number>> = [];
    for (let i = 0; i < 5; i++) guarded.push(await statementsOf(() => asHolder(`held ${i}`, true)));
    // As in the test above: the designed fallback may make one filing re-read.
    expect(guarded.map((x) => x.append)).toEqual([1, 1, 1, 1, 1]);
    expect(guarded.filter((x) => Object.keys(x).some((k) => k !== 'append' && k !== 'fwd'))).toEqual([]);
    expect(guarded.filter((x) => JSON.stringify(x) === JSON.stringify({ append: 1 })).length).toBeGreaterThanOrEqual(4);
    // The check that reads (MCP, the web page; every command before guards): one read more, every time.
    const read: Array<Record<string, number>> = [];
    for (let i = 0; i < 3; i++) read.push(await statementsOf(() => asHolder(`read ${i}`, false)));
    expect(read).toEqual([{ fwd: 1, append: 1 }, { fwd: 1, append: 1 }, { fwd: 1, append: 1 }]);
  });

  it('two servers on different PRs: neither reads a stream, however their commits interleave', async () => {
    await subscribe(b);
    await request(b, 2, 'b');
    await file(b, 2, 'warm b');
    await file(a, 1, 'warm a');
    for (let i = 0; i < 10; i++) {
      expect(own(await statementsOf(() => file(b, 2, `b ${i}`)))).toEqual({ append: 1 });
      expect(own(await statementsOf(() => file(a, 1, `a ${i}`)))).toEqual({ append: 1 });
    }
    // And concurrently: each server's commits land between the other's; still no stream read.
    const sent = await statementsOf(() => Promise.all(Array.from({ length: 10 }, (_, i) => [file(a, 1, `ca ${i}`), file(b, 2, `cb ${i}`)]).flat()));
    expect(sent.fwd).toBeUndefined();
    const all = await titles(b);
    for (let i = 0; i < 10; i++) for (const t of [`a ${i}`, `b ${i}`, `ca ${i}`, `cb ${i}`]) expect(all.filter((x) => x === t)).toEqual([t]);
  });

  it('a PR the other server moved is filed on after its node, then without a read', async () => {
    await file(b, 1, 'b moves pr 1');
    // Folded from b's announcement, read, or refused at append and re-decided: never filed without b's node.
    const first = await statementsOf(() => file(a, 1, 'after b'));
    expect(first.append).toBeGreaterThanOrEqual(1);
    expect(own(await statementsOf(() => file(a, 1, 'again')))).toEqual({ append: 1 });
    const all = await titles(a);
    expect(all.slice(-3)).toEqual(['b moves pr 1', 'after b', 'again']);
  });

  it("another server's filing on the same PR is folded from its announcement's rows: no read once it has arrived", async () => {
    const store = (await a.workspace('sf')).store;
    for (let i = 0; i < 5; i++) {
      const byB = await file(b, 1, `b same ${i}`);
      await until(() => store.freshness!()!.ownRevision('pr-r-1') >= byB.response.streamRevision);
      expect(own(await statementsOf(() => file(a, 1, `a same ${i}`)))).toEqual({ append: 1 });
    }
    // And what a filed is on top of b's, in order: the state a decided on held b's nodes.
    const all = await titles(b);
    expect(all.filter((t) => / same /.test(t))).toEqual([0, 1, 2, 3, 4].flatMap((i) => [`b same ${i}`, `a same ${i}`]));
    const nodeIds: string[] = [];
    for await (const e of store.readStream('pr-r-1')) if (e.type === 'ReviewNodeFiled') nodeIds.push((e.data as { nodeId: string }).nodeId);
    expect(new Set(nodeIds).size).toBe(nodeIds.length);
  });

  it("a client's loads queued behind one read share the next one, and each sees every commit acknowledged before it was asked for", async () => {
    const ws = await a.workspace('sf');
    const titlesFold: StreamFold<string[]> = { initialState: () => [], evolve: (st, e) => (e.type === 'ReviewNodeFiled' ? [...st, (e.data as { node: { title: string } }).node.title] : st) };
    const stream = 'pr-r-1';
    const stored: string[] = [];
    for await (const e of ws.store.readStream(stream)) if (e.type === 'ReviewNodeFiled') stored.push((e.data as { node: { title: string } }).node.title);
    expect((await loadStream(titlesFold, ws, stream)).state).toEqual(stored);
    // Ten loads asked for at once: the first reads for all ten.
    const sent = await statementsOf(() => Promise.all(Array.from({ length: 10 }, () => loadStream(titlesFold, ws, stream))));
    expect(own(sent)).toEqual({ fwd: 1 });
    // Acknowledged on b, then asked for on a: a's load reads (strict), whatever a has heard.
    await file(b, 1, 'b acknowledged');
    const [first, second] = await Promise.all([loadStream(titlesFold, ws, stream), loadStream(titlesFold, ws, stream)]);
    expect([first.state.at(-1), second.state.at(-1)]).toEqual(['b acknowledged', 'b acknowledged']);
  });

  it('a used key is answered as before with no look-up first: the same call replays, another payload is refused', async () => {
    const key = newUuidV7();
    const first = await file(a, 1, 'keyed', key);
    // The same call on either server: the stored answer, byte for byte, nothing written.
    for (const l of [a, b]) {
      const again = await file(l, 1, 'keyed', key);
      expect({ replayed: again.replayed, json: again.json }).toEqual({ replayed: true, json: first.json });
    }
    await expect(file(b, 1, 'another payload', key)).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    // The PR moves to a new round: deciding the same call again would now refuse (stale head); its key
    // still answers with what it stored.
    const pinned = newUuidV7();
    const atA = await file(a, 1, 'pinned', pinned, 'a'.repeat(40));
    await request(b, 1, 'd');
    for (const l of [a, b]) expect((await file(l, 1, 'pinned', pinned, 'a'.repeat(40))).json).toBe(atA.json);
    await expect(file(a, 1, 'new call', undefined, 'a'.repeat(40))).rejects.toMatchObject({ code: 'stale_head' });
    // Two servers racing one new key with two payloads: one is recorded, the other refused.
    const raced = newUuidV7();
    const outcomes = await Promise.allSettled([file(a, 1, 'race a', raced), file(b, 1, 'race b', raced)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'idempotency_key_reused' });
    const all = await titles(a);
    expect(all.filter((t) => t === 'keyed' || t === 'pinned' || t.startsWith('race '))).toHaveLength(3);
  });
});
