import * as fs from 'node:fs';
import { newUuidV7 } from '../../src/events/ids';
import { Ledger, LOCAL_OPERATOR } from '../../src/ledger';
import { dropSchema, uniqueSchema, whenPostgres } from './pg-support';
import { findingNode, openPostgresLedger, statementCounter } from './pg-statements';

/**
 * The statements a command sends to PostgreSQL, counted at the client (every query of every pooled
 * connection of this process), and what two servers on one database answer. addReviewNode's prepare
 * loads the PR stream as a decision's load: on a server that has seen every append it reads nothing,
 * and a round another server moved is still never filed on at the old head.
 */
whenPostgres('postgres round trips per command', () => {
  const schema = uniqueSchema('rl_rt');
  const dirs: string[] = [];
  let a: Ledger;
  let b: Ledger;
  const counter = statementCounter(schema);
  const subs: Array<{ close(): void }> = [];
  const env = () => ({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() });
  // Only a listens in this process, so after ALONE_AFTER_MS it would stop announcing (nobody to tell):
  // the first test counts the announcement a server sends while others listen (pg-alone.test.ts: alone).
  const open = () => openPostgresLedger(schema, dirs, { aloneAfterMs: Infinity });
  const request = (l: Ledger, pr: number, head: string) => l.run('requestReview', 'rt', env(), { repoId: 'r', prNumber: pr, baseSha: 'c'.repeat(40), headSha: head.repeat(40) });
  const file = (l: Ledger, pr: number, title: string) => l.run('addReviewNode', 'rt', env(), { repoId: 'r', prNumber: pr, node: findingNode(title) });
  const statementsOf = (run: () => Promise<unknown>) => counter.during(run);

  beforeAll(async () => {
    counter.install();
    a = open();
    b = open();
    await a.createWorkspace(env(), { workspaceId: 'rt', name: 'rt' });
    // As a server does (its event feed subscribes): a subscription makes a's store hear other servers'
    // appends. Only a's: the counts are this process's, and b's subscription would read a's appends.
    for (const l of [a]) {
      const sub = (await l.workspace('rt')).store.subscribeAll();
      subs.push(sub);
      void (async () => {
        for await (const _ of sub) void _;
      })();
    }
  });
  afterAll(async () => {
    counter.restore();
    for (const s of subs) s.close();
    await a?.close();
    await b?.close();
    await dropSchema(schema);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('addReviewNode on a server that has seen every append reads no stream: one append (the key is checked by it), one announcement', async () => {
    await request(a, 1, 'a');
    await file(a, 1, 'warm');
    const sent = await statementsOf(async () => {
      await file(a, 1, 'second');
      // The announcement to other servers goes out after the commit, on its own: wait for it.
      for (let i = 0; i < 500 && !counter.count(`${schema}.notify_all`); i++) await new Promise((r) => setTimeout(r, 10));
    });
    // No stream read (authorize, prepare and decide fold what this process wrote; the subscription takes
    // its own append without a read): only the token's workspace read of a client request is not here,
    // as Ledger.run is the operator's entry.
    // At synchronous_commit = on (this suite) the announcement is a statement of its own after the commit.
    expect(sent).toEqual({ append: 1, [`${schema}.notify_all`]: 1 });
  });

  it("after another server starts a new round, the next addReviewNode on this server files on that round (announced or not)", async () => {
    // Twenty PRs: b's announcement races a's next command, so both orders occur; either way a decision on
    // the old round is refused at append, prepared again on the round that won and filed there — never
    // refused with stale_head, never recorded at the old head.
    const prs = Array.from({ length: 20 }, (_, i) => 10 + i);
    let appends = 0;
    for (const pr of prs) {
      await request(a, pr, 'a');
      await file(a, pr, `first ${pr}`);
      await request(b, pr, 'b');
      const sent = await statementsOf(async () => expect((await file(a, pr, `after b ${pr}`)).response.result).toMatchObject({ round: 2 }));
      appends += sent.append;
    }
    console.log(`pg-round-trips: ${appends - prs.length} of ${prs.length} filings met an unannounced round and were prepared again`);
    // Every node filed on these PRs, read through the other server: each on the head of the round it names.
    const filed: string[] = [];
    for await (const e of (await b.workspace('rt')).store.readAll()) {
      const d = e.data as { node?: { title: string }; round: number; headSha: string };
      if (e.type === 'ReviewNodeFiled' && /^(first|after b) /.test(d.node!.title)) filed.push(`${d.node!.title} r${d.round} ${d.headSha[0]}`);
    }
    expect(filed).toEqual(prs.flatMap((pr) => [`first ${pr} r1 a`, `after b ${pr} r2 b`]));
  });
});
