import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { loadPrState } from '../../src/review/pr-state';
import { reviewStreamOf } from '../../src/events/streams';
import { signBody } from '../../src/webhooks/github';
import { writeWebhookSecret } from '../../src/webhooks/secrets';
import { GitFixture } from '../support/git-fixture';
import { checkRunCompletedPayload, GITHUB_FULL_NAME, pullRequestPayload } from '../webhooks/payloads';
import { command, serverFixture } from '../rpc/support';

const SECRET = 'it-is-a-test-secret-0123456789';

/**
 * SPEC §16 webhooks: the signature covers the body only, so the body is what is deduplicated; a PR's
 * observed head never moves back to an older delivery's; the signature header is exactly sha256=<64 hex>.
 */
describe('webhook deliveries cannot be replayed, reordered or half-signed', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  let git: GitFixture;
  let base: string;
  let head1: string;
  let head2: string;
  const target = { repoId: 'widgets', prNumber: 7 };

  const post = async (event: string, body: string, delivery: string, signature = signBody(SECRET, body)) => {
    const res = await fetch(`${fx.server.url}/webhooks/github?workspace_id=${fx.workspaceId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': signature },
      body,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const synchronize = (headSha: string, updatedAt: string) => {
    const p = pullRequestPayload('synchronize', target.prNumber, base, headSha);
    p.pull_request.updated_at = updatedAt;
    return JSON.stringify(p);
  };
  const countOf = async (type: string) => {
    const ws = await fx.server.ledger.workspace(fx.workspaceId);
    let n = 0;
    for await (const e of ws.store.readAll()) if (e.type === type) n++;
    return n;
  };
  const observedHead = async () => (await loadPrState(await fx.server.ledger.workspace(fx.workspaceId), reviewStreamOf(target))).observedHead;

  beforeAll(async () => {
    fx = await serverFixture();
    git = new GitFixture('widgets-', path.join(fx.dataDir, 'repos', fx.workspaceId));
    git.git('remote', 'add', 'origin', `https://github.com/${GITHUB_FULL_NAME}.git`);
    git.write('a.txt', 'one\n');
    base = git.commit('base');
    git.write('a.txt', 'two\n');
    head1 = git.commit('head 1');
    git.write('a.txt', 'three\n');
    head2 = git.commit('head 2');
    expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'registerRepo', { repoId: target.repoId, path: git.dir })).error).toBeUndefined();
    writeWebhookSecret((await fx.server.ledger.workspace(fx.workspaceId)).dir, target.repoId, SECRET);
    expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'requestReview', { ...target, baseSha: base, headSha: head1 })).error).toBeUndefined();
  });
  afterAll(async () => {
    await fx.close();
    git.cleanup();
  });

  it('a captured signed delivery replayed under a new delivery id is recognised by its body and not recorded again', async () => {
    const body = JSON.stringify(checkRunCompletedPayload(target.prNumber, head1, 'success'));
    const first = await post('check_run', body, randomUUID());
    expect(first.status).toBe(200);
    expect(first.body.duplicate).toBe(false);
    const signals = await countOf('CiSignalRecorded');
    const replay = await post('check_run', body, randomUUID());
    expect(replay.status).toBe(200);
    expect(replay.body.duplicate).toBe(true);
    expect(await countOf('CiSignalRecorded')).toBe(signals);
  });

  it('an act recorded from a webhook says so in its metadata (via: webhook), so the audit can tell it from RPC or CLI acts', async () => {
    const body = JSON.stringify(checkRunCompletedPayload(target.prNumber, head1, 'failure'));
    expect((await post('check_run', body, randomUUID())).status).toBe(200);
    const ws = await fx.server.ledger.workspace(fx.workspaceId);
    const recorded: any[] = [];
    for await (const e of ws.store.readAll()) if (e.type === 'CiSignalRecorded') recorded.push(e);
    expect(recorded.length).toBeGreaterThan(0);
    for (const e of recorded) expect(e.metadata).toMatchObject({ via: 'webhook' });
  });

  it("an older delivery never moves the PR's observed head backwards; a newer one (even to an earlier commit) does", async () => {
    expect((await post('pull_request', synchronize(head2, '2026-03-01T10:00:00Z'), randomUUID())).status).toBe(200);
    expect(await observedHead()).toBe(head2);
    // Delivered late (or replayed from a capture): GitHub stamped it before the head2 push.
    const late = await post('pull_request', synchronize(head1, '2026-03-01T09:00:00Z'), randomUUID());
    expect(late.status).toBe(200);
    expect(late.body.results[0].result).toMatchObject({ recorded: false });
    expect(await observedHead()).toBe(head2);
    // A force-push back to head1 after head2 is newer by its own timestamp: it counts.
    expect((await post('pull_request', synchronize(head1, '2026-03-01T11:00:00Z'), randomUUID())).status).toBe(200);
    expect(await observedHead()).toBe(head1);
  });

  it('the signature parser refuses trailing garbage after the 64 hex digits', async () => {
    const body = synchronize(head2, '2026-03-02T10:00:00Z');
    const good = signBody(SECRET, body);
    for (const bad of [`${good}zz`, `${good}0`, `${good}00`, `${good},sha256=00`]) {
      const r = await post('pull_request', body, randomUUID(), bad);
      expect([bad, r.status]).toEqual([bad, 401]);
    }
    expect(await observedHead()).toBe(head1);
  });
});
