import { GitFixture } from '../support/git-fixture';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';
import { newUuidV7 } from '../../src/events/ids';
import type { RecordedEvent } from '../../src/events/envelope';
import { eventDefinition, validateEventData } from '../../src/events/catalogue';
import { GITHUB_SERVICE, OctokitGitHub } from '../../src/publish/github-client';
import { PUBLISHER_OPTIONS_SERVICE } from '../../src/publish/run';
import type { Role } from '../../src/events/roles';
import { FakeFile, FakeGitHub } from './fake-github';
import { LedgerServices } from '../../src/slots';
import type { LedgerConfig } from '../../src/config';

export const WS = 'acme';
export const REPO = 'web-app';
export const PR = 7;
export const TOKEN = 'ghp_test_secret_token_0123456789';
export const BOT = 'review-ledger[bot]';

export type Actor = { principal: string; role: Role };
export const ALICE: Actor = { principal: 'agent:alice', role: 'member' };
export const BOB: Actor = { principal: 'agent:bob', role: 'member' };
export const CAROL: Actor = { principal: 'user:carol', role: 'member' };
export { OWNER };

/** `const v<i> = <i>;` for i = 1..n: every line distinct, none blank (git output is trimmed). */
export const numbered = (n: number, edit: (i: number) => string | null = (i) => `const v${i} = ${i};`): string =>
  Array.from({ length: n }, (_, k) => edit(k + 1))
    .filter((l): l is string => l !== null)
    .join('\n') + '\n';

/**
 * The PR's files as GitHub lists them, computed by the real git binary from the fixture repo: one
 * `patch` per file (the hunks without the file header), none for binary files.
 */
export function githubFiles(repo: GitFixture, base: string, head: string): FakeFile[] {
  const out: FakeFile[] = [];
  for (const row of repo.git('diff', '--name-status', '-M', base, head).split('\n').filter(Boolean)) {
    const [code, a, b] = row.split('\t');
    const status = code[0] === 'A' ? 'added' : code[0] === 'D' ? 'removed' : code[0] === 'R' ? 'renamed' : 'modified';
    const filename = b ?? a;
    const raw = repo.git('diff', '--no-color', '-U3', '-M', base, head, '--', ...(b ? [a, b] : [a]));
    const at = raw.indexOf('\n@@');
    const patch = /^Binary files /m.test(raw) || at < 0 ? undefined : raw.slice(at + 1);
    out.push({ filename, status, patch, ...(b ? { previous_filename: a } : {}) });
  }
  return out;
}

/**
 * The PR under review (real git): src/app.ts of 40 numbered lines where the head rewrites line 5,
 * deletes base line 20 and rewrites base line 30 (head line 29) — three hunks; src/old.ts deleted; a
 * binary logo changed (no patch).
 */
export function buildRepo() {
  const repo = new GitFixture('rl-publish-');
  repo.git('remote', 'add', 'origin', 'https://github.com/acme/web-app.git');
  repo.write('src/app.ts', numbered(40));
  repo.write('src/old.ts', numbered(6, (i) => `export const old${i} = ${i};`));
  repo.write('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 0, 0]));
  const base = repo.commit('base');
  repo.write('src/app.ts', numbered(40, (i) => (i === 5 ? "const v5 = 'five';" : i === 20 ? null : i === 30 ? "const v30 = 'thirty';" : `const v${i} = ${i};`)));
  repo.remove('src/old.ts');
  repo.write('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 9, 9, 9, 0, 0]));
  const head = repo.commit('head');
  return { repo, base, head };
}

export interface PublishFixtureOptions {
  /** The PR's author on GitHub (the token's own login makes approving it "your own pull request"). */
  prAuthor?: string;
  workspaceCreator?: Actor;
  /** The ledger's configuration (e.g. a PostgreSQL store several ledgers share). */
  config?: Partial<LedgerConfig>;
}

export async function publishFixture(opts: PublishFixtureOptions = {}) {
  const github = new FakeGitHub();
  github.tokens.set(TOKEN, BOT);
  await github.start();
  const { repo, base, head } = buildRepo();
  github.addPull({ number: PR, author: opts.prAuthor ?? 'octocat', headSha: head, baseSha: base, files: githubFiles(repo, base, head) });
  const sleeps: number[] = [];
  const services = new LedgerServices()
    .set(GITHUB_SERVICE, () => new OctokitGitHub({ baseUrl: github.baseUrl, auth: { kind: 'token', token: TOKEN } }))
    .set(PUBLISHER_OPTIONS_SERVICE, { sleep: (ms: number) => (sleeps.push(ms), new Promise<void>((r) => setTimeout(r, ms))) });
  const creator = opts.workspaceCreator ?? OWNER;
  const f = await ledgerFixture({ options: { services }, ...(opts.config ? { config: opts.config } : {}) });
  if (creator.principal.startsWith('agent:')) {
    // Agents never hold owner now (SPEC §16), so a workspace whose only owner is an agent exists only in a
    // log written before that rule: append it as the old server did.
    f.ledger.workspaces.register(WS, WS, new Date().toISOString());
    const meta = { principal: creator.principal as any, workspaceId: WS, correlationId: 'legacy', causationId: null, occurredAt: new Date().toISOString() };
    await (await f.ledger.workspace(WS)).store.append('workspace', 'no_stream', [
      { eventId: newUuidV7(), type: 'WorkspaceCreated', schemaVersion: 1, data: { workspaceId: WS, name: WS, defaultLevel: 'balanced' }, metadata: meta },
      { eventId: newUuidV7(), type: 'MemberAdded', schemaVersion: 1, data: { principal: creator.principal, role: 'owner' }, metadata: meta },
    ]);
  } else await f.ledger.createWorkspace({ principal: creator.principal as any, role: 'owner', idempotencyKey: newUuidV7() }, { workspaceId: WS });
  const ws = await f.ledger.workspace(WS);
  const run = (command: string, actor: Actor, payload: Record<string, unknown>, key = newUuidV7()) =>
    f.ledger.run(command, WS, { principal: actor.principal as any, role: actor.role, idempotencyKey: key }, payload);
  await run('registerRepo', { principal: creator.principal, role: 'owner' }, { repoId: REPO, path: repo.dir });
  await run('requestReview', ALICE, { repoId: REPO, prNumber: PR, baseSha: base, headSha: head });

  return {
    ...f,
    github,
    repo,
    base,
    head,
    ws,
    run,
    sleeps,
    services,
    target: { repoId: REPO, prNumber: PR },
    async file(actor: Actor, node: Partial<NodeInput>): Promise<{ nodeId: string; fingerprint: string }> {
      const out = await run('addReviewNode', actor, { repoId: REPO, prNumber: PR, node: nodeInput(node) });
      return out.response.result as { nodeId: string; fingerprint: string };
    },
    confirm: (actor: Actor, nodeId: string) => run('confirmNode', actor, { repoId: REPO, prNumber: PR, nodeId }),
    async finalize(actor: Actor = ALICE, walkthrough = 'The change renames constants; see the findings.') {
      // The real deterministic compute of the head (cohorts, axes): the PR touches no UI and no API spec.
      await run('computeReview', actor, { repoId: REPO, prNumber: PR });
      return run('finalizeReview', actor, {
        repoId: REPO,
        prNumber: PR,
        walkthrough,
        tokenAxes: { correctness: { status: 'pass' }, security: { status: 'pass' }, testGap: { status: 'pass' } },
      });
    },
    publish: (actor: Actor, extra: Record<string, unknown> = {}, key?: string) => run('publish', actor, { repoId: REPO, prNumber: PR, ...extra }, key),
    async eventsOf(type: string): Promise<RecordedEvent[]> {
      return (await f.events(WS)).filter((e) => e.type === type);
    },
    /** Appends straight to the store, bypassing every command: how a forgery would look. */
    async forge(type: string, data: unknown, principal: string): Promise<void> {
      const streamId = `pr-${REPO}-${PR}`;
      const rev = await ws.store.streamRevision(streamId);
      const eventId = newUuidV7();
      await ws.store.append(streamId, rev < 0 ? 'no_stream' : rev, [
        {
          eventId,
          type,
          schemaVersion: eventDefinition(type).schemaVersion,
          data: validateEventData(type, data),
          metadata: { principal: principal as any, workspaceId: WS, correlationId: eventId, causationId: null, occurredAt: new Date().toISOString() },
        },
      ]);
    },
    async close() {
      await github.stop();
      repo.cleanup();
      await f.cleanup();
    },
  };
}

export interface NodeInput {
  kind: string;
  priority: string;
  triage: { category: string; severity: string; effort: string };
  anchor?: { path: string; startLine: number; endLine: number; side?: 'RIGHT' | 'LEFT' };
  fix?: { replacementLines?: string[]; unifiedDiff?: string; prompt?: string };
  confidence: number;
  title: string;
  body: string;
  brief: string;
  reasoning?: string;
}

export function nodeInput(over: Partial<NodeInput>): NodeInput {
  return {
    kind: 'bug',
    priority: 'P2',
    triage: { category: 'correctness', severity: 'medium', effort: 'small' },
    confidence: 0.8,
    title: 'a finding',
    body: 'details',
    brief: 'engineer',
    ...over,
  };
}
