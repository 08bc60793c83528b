import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { isStale, type PrState } from '../../src/review/pr-state';
import { loadPrState } from '../../src/review/pr-state';
import { reviewStreamOf } from '../../src/events/streams';
import { signBody } from '../../src/webhooks/github';
import { writeWebhookSecret } from '../../src/webhooks/secrets';
import { GitFixture } from '../support/git-fixture';
import { checkRunCompletedPayload, checkSuiteCompletedPayload, GITHUB_FULL_NAME, pullRequestPayload } from './payloads';
import { command, serverFixture, tokenFor, WsClient } from '../rpc/support';
import { keyPaths, withValueAt } from '../support/fuzz';
import { mulberry32 } from '../support/prng';

const SECRET = 'it-is-a-test-secret-0123456789';

describe('GitHub webhooks (POST /webhooks/github)', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  let git: GitFixture;
  let base: string;
  let head1: string;
  let head2: string;
  const target = { repoId: 'widgets', prNumber: 42 };

  const deliver = async (event: string, payload: object, opts: { delivery?: string; secret?: string; signature?: string | null } = {}) => {
    const body = JSON.stringify(payload);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': opts.delivery ?? randomUUID() };
    if (opts.signature !== null) headers['x-hub-signature-256'] = opts.signature ?? signBody(opts.secret ?? SECRET, body);
    const res = await fetch(`${fx.server.url}/webhooks/github?workspace_id=${fx.workspaceId}`, { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json()) as any };
  };
  const events = async () => {
    const ws = await fx.server.ledger.workspace(fx.workspaceId);
    const out: Array<{ type: string; streamId: string }> = [];
    for await (const e of ws.store.readAll()) out.push({ type: e.type, streamId: e.streamId });
    return out;
  };
  const prState = async (): Promise<PrState> => loadPrState(await fx.server.ledger.workspace(fx.workspaceId), reviewStreamOf(target));

  const prPayload = (action: 'synchronize' | 'labeled', headSha: string) => pullRequestPayload(action, target.prNumber, base, headSha);
  const repository = () => pullRequestPayload('synchronize', target.prNumber, 'e'.repeat(40), 'e'.repeat(40)).repository;

  beforeAll(async () => {
    fx = await serverFixture();
    // Repos registered over RPC live under the server's repo root.
    git = new GitFixture('rl-git-', path.join(fx.dataDir, 'repos', fx.workspaceId));
    git.git('remote', 'add', 'origin', `https://github.com/${GITHUB_FULL_NAME}.git`);
    git.write('a.txt', 'one\n');
    base = git.commit('base');
    git.write('a.txt', 'two\n');
    head1 = git.commit('head 1');
    git.write('a.txt', 'three\n');
    head2 = git.commit('head 2');
    const reg = await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'registerRepo', { repoId: target.repoId, path: git.dir });
    expect(reg.error).toBeUndefined();
    writeWebhookSecret((await fx.server.ledger.workspace(fx.workspaceId)).dir, target.repoId, SECRET);
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:hook-test', 'member');
    expect((await command(fx.server.url, agent, fx.workspaceId, 'requestReview', { ...target, baseSha: base, headSha: head1 })).error).toBeUndefined();
  });
  afterAll(async () => {
    await fx.close();
    git.cleanup();
  });

  it('a signed pull_request synchronize sets the stale flag; the same delivery again changes nothing', async () => {
    expect(isStale(await prState())).toBe(false);
    const delivery = randomUUID();
    const before = (await events()).length;
    const first = await deliver('pull_request', prPayload('synchronize', head2), { delivery });
    expect(first.status).toBe(200);
    expect(first.body.duplicate).toBe(false);
    expect(isStale(await prState())).toBe(true);
    const after = await events();
    expect(after.slice(before)).toEqual([{ type: 'HeadObserved', streamId: reviewStreamOf(target) }]);

    const again = await deliver('pull_request', prPayload('synchronize', head2), { delivery });
    expect(again.status).toBe(200);
    expect(again.body.duplicate).toBe(true);
    expect((await events()).length).toBe(after.length);
  });

  it('refuses a forged or missing signature with 401 and records nothing', async () => {
    const before = (await events()).length;
    const forged = await deliver('pull_request', prPayload('synchronize', 'd'.repeat(40)), { secret: 'not-the-secret-at-all-000000' });
    expect(forged.status).toBe(401);
    expect(forged.body.error.data.code).toBe('invalid_signature');
    const missing = await deliver('pull_request', prPayload('synchronize', 'd'.repeat(40)), { signature: null });
    expect(missing.status).toBe(401);
    // A valid signature over different bytes does not verify this body.
    const other = await deliver('pull_request', prPayload('synchronize', 'd'.repeat(40)), { signature: signBody(SECRET, '{}') });
    expect(other.status).toBe(401);
    expect((await events()).length).toBe(before);
  });

  it('records check_run completed as a CI signal for each PR of the run', async () => {
    const r = await deliver('check_run', checkRunCompletedPayload(target.prNumber, head2, 'failure'));
    expect(r.status).toBe(200);
    expect(r.body.results).toEqual([expect.objectContaining({ command: 'recordCiSignal', prNumber: target.prNumber, replayed: false })]);
    const signals = Object.values((await prState()).ciSignals);
    expect(signals).toEqual([expect.objectContaining({ headSha: head2, status: 'completed', conclusion: 'failure' })]);
  });

  it('records check_suite completed as a CI signal named after the app', async () => {
    const payload = checkSuiteCompletedPayload(target.prNumber, head2, 'success');
    const r = await deliver('check_suite', payload);
    expect(r.status).toBe(200);
    expect((await prState()).ciSignals[`${head2}/${payload.check_suite.app.name}`]).toEqual(expect.objectContaining({ status: 'completed', conclusion: 'success' }));
  });

  it('validates the fields the ledger reads, naming the field and the rule', async () => {
    const before = (await events()).length;
    const bad = await deliver('pull_request', { ...prPayload('synchronize', head2), number: 'forty-two' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.code).toBe('invalid_webhook_payload');
    expect(bad.body.error.message).toBe('pull_request.synchronize: number: Invalid input: expected number, received string');
    expect((await events()).length).toBe(before);
  });

  it('acknowledges and ignores unknown events and actions', async () => {
    const before = (await events()).length;
    expect((await deliver('star', { action: 'created', repository: repository() })).status).toBe(202);
    expect((await deliver('pull_request', { ...prPayload('labeled', head2) })).status).toBe(202);
    expect((await events()).length).toBe(before);
  });

  it('refuses an unknown workspace without creating it', async () => {
    const res = await fetch(`${fx.server.url}/webhooks/github?workspace_id=nowhere`, { method: 'POST', headers: { 'x-github-event': 'ping', 'x-github-delivery': randomUUID() }, body: '{}' });
    expect(res.status).toBe(404);
  });

  // A delivery is signed with the repository's secret, so its sender passed the HMAC — but what it carries is
  // still input: every field of the handled payloads missing or replaced by a hostile value, bodies that
  // are not objects, odd event names and delivery ids, all correctly signed. Each answer is a typed status
  // (2xx, 400, 401) with a JSON body, never a 5xx or `internal`, and the review is still readable after.
  it('answers every correctly signed hostile delivery with a typed status, never internal', async () => {
    const rand = mulberry32(20261206);
    const hostile: unknown[] = [null, true, -1, 0, 2 ** 53, 1.5, '', '\u0000', '\ud800', 'x'.repeat(70_000), '../../etc/passwd', [], {}, { a: { b: {} } }, 'ffff', 'a'.repeat(40)];
    const send = async (event: string, body: string, delivery: string = randomUUID()) => {
      const res = await fetch(`${fx.server.url}/webhooks/github?workspace_id=${fx.workspaceId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': signBody(SECRET, body) }, body });
      const text = await res.text();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, json, text };
    };
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    const expectTyped = (what: string, r: Awaited<ReturnType<typeof send>>) => {
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status >= 500 || r.json === undefined || r.json?.error?.data?.code === 'internal') failures.push(`${what} → ${r.status} ${r.text.slice(0, 200)}`);
    };
    const deliveries: Array<[string, object]> = [
      ['pull_request', prPayload('synchronize', head2)],
      ['check_run', checkRunCompletedPayload(target.prNumber, head2, 'success')],
      ['check_suite', checkSuiteCompletedPayload(target.prNumber, head2, 'failure')],
    ];
    // The fields the ledger reads, and a sample of the rest (GitHub's example payloads have hundreds).
    const read = ['action', 'number', 'pull_request.head', 'pull_request.base', 'pull_request.updated_at', 'check_run', 'check_suite'];
    const sample = (paths: string[][]) => paths.filter((p) => read.some((r) => p.join('.').startsWith(r) && p.length <= 3) || rand() < 0.03);
    for (const [event, payload] of deliveries) {
      for (const p of sample(keyPaths(payload, { maxDepth: 5, arrays: true }))) {
        // Not the repository's name: a delivery naming another repo is unsigned for it (401), covered above.
        if (p[0] === 'repository' && p[1] === 'full_name') continue;
        expectTyped(`${event} without ${p.join('.')}`, await send(event, JSON.stringify(withValueAt(payload, p, undefined))));
        const x = hostile[Math.floor(rand() * hostile.length)];
        expectTyped(`${event} ${p.join('.')} = ${JSON.stringify(x)?.slice(0, 40)}`, await send(event, JSON.stringify(withValueAt(payload, p, x))));
      }
    }
    for (const body of ['[]', 'null', '"text"', '7', '{', '{"repository":{"full_name":null}}', JSON.stringify({ repository: repository() })]) {
      for (const event of ['pull_request', 'check_run', 'ping', 'no_such_event', '', '\u00e9v\u00e9nement']) expectTyped(`${event} ${body.slice(0, 40)}`, await send(event, body));
    }
    for (const delivery of ['', 'not-a-uuid', 'x'.repeat(5000), '../../x']) expectTyped(`delivery ${delivery.slice(0, 20)}`, await send('pull_request', JSON.stringify(prPayload('synchronize', head2)), delivery));
    expect(failures).toEqual([]);
    // The corpus reached past the signature: some deliveries were refused as payloads, others recorded or ignored.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(20);
    expect((statuses.get(200) ?? 0) + (statuses.get(202) ?? 0)).toBeGreaterThan(10);
    expect((await prState()).exists).toBe(true);
  }, 120_000);
});

describe('GitHub webhooks with autoRecompute', () => {
  it('a synchronize for a repo configured to recompute records the new head and computes the review at it', async () => {
    const fx = await serverFixture();
    const git = new GitFixture('rl-git-', path.join(fx.dataDir, 'repos', fx.workspaceId));
    try {
      git.git('remote', 'add', 'origin', `https://github.com/${GITHUB_FULL_NAME}.git`);
      git.write('src/a.ts', 'export const a = 1;\n');
      const base = git.commit('base');
      git.write('src/a.ts', 'export const a = 2;\n');
      const head1 = git.commit('head 1');
      git.write('src/b.ts', 'import { a } from "./a";\nexport const b = a + 1;\n');
      const head2 = git.commit('head 2');
      const target = { repoId: 'auto', prNumber: 9 };
      expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'registerRepo', { repoId: target.repoId, path: git.dir, config: { autoRecompute: true } })).error).toBeUndefined();
      writeWebhookSecret((await fx.server.ledger.workspace(fx.workspaceId)).dir, target.repoId, SECRET);
      expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'requestReview', { ...target, baseSha: base, headSha: head1 })).error).toBeUndefined();
      // A review page watching the cohorts sees the computation the webhook starts.
      const page = await WsClient.open(fx.server.url, fx.ownerToken);
      const sub = await page.call('watchCohorts', { workspace_id: fx.workspaceId, ...target });
      expect(sub.result.snapshot).toEqual(expect.objectContaining({ computed: false }));
      const body = JSON.stringify(pullRequestPayload('synchronize', target.prNumber, base, head2));
      const res = await fetch(`${fx.server.url}/webhooks/github?workspace_id=${fx.workspaceId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': signBody(SECRET, body) },
        body,
      });
      const out = (await res.json()) as any;
      expect(res.status).toBe(200);
      expect(out.results.map((r: any) => r.command)).toEqual(['observeHead']);
      expect(out.recompute).toBe('computeReview');
      const ws = await fx.server.ledger.workspace(fx.workspaceId);
      // The computation runs after the answer (GitHub allows a delivery 10 s): wait for its event.
      for (let t = 0; t < 300; t++) {
        let done = false;
        for await (const e of ws.store.readStream(reviewStreamOf(target))) if (e.type === 'ReviewComputed') done = true;
        if (done) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const computed: unknown[] = [];
      const types: string[] = [];
      for await (const e of ws.store.readStream(reviewStreamOf(target))) {
        types.push(e.type);
        if (e.type === 'ReviewComputed') computed.push(e.data);
      }
      expect(types).toEqual(expect.arrayContaining(['HeadObserved', 'ReviewComputed']));
      expect(computed).toEqual([expect.objectContaining({ headSha: head2 })]);
      await page.until(() => page.updates(sub.result.subscription).some((u) => u.value.computed));
      const shown = page.updates(sub.result.subscription).at(-1).value;
      expect(shown).toEqual(expect.objectContaining({ computed: true, headSha: head2 }));
      expect(shown.changedFiles.map((f: any) => f.path ?? f)).toEqual(expect.arrayContaining(['src/a.ts', 'src/b.ts']));
      await page.close();
    } finally {
      await fx.close();
      git.cleanup();
    }
  }, 60_000);
});
