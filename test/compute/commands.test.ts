// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { newUuidV7 } from '../../src/events/ids';
import type { RecordedEvent } from '../../src/events/envelope';
import { Ledger, LOCAL_OPERATOR } from '../../src/ledger';
import { queryBlastRadius, queryCohortImpact } from '../../src/compute/queries';
import { GitFixture } from '../support/git-fixture';

jest.setTimeout(60_000);

const AGENT = { principal: 'agent:claude' as const, role: 'member' as const };

describe('repo, compute, summary and diagram commands on a real git repo and a real SQLite store', () => {
  let dataDir: string;
  let ledger: Ledger;
  let f: GitFixture;
  const ws = 'ws-compute';
  const run = (cmd: string, payload: unknown, who: { principal: string; role: 'owner' | 'member' } = LOCAL_OPERATOR) =>
    ledger.run(cmd, ws, { ...(who as { principal: `user:${string}` | `agent:${string}`; role: 'owner' | 'member' }), idempotencyKey: newUuidV7() }, payload);
  const events = async (stream: string): Promise<RecordedEvent[]> => {
    const handle = await ledger.workspace(ws);
    const out: RecordedEvent[] = [];
    for await (const e of handle.store.readStream(stream)) out.push(e);
    return out;
  };

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-data-'));
    ledger = new Ledger(loadConfig({ dataDir }, {}));
    await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: ws });
    f = new GitFixture('rl-cmd-');
    f.git('remote', 'add', 'origin', 'git@github.com:acme/widgets.git');
  });
  afterAll(async () => {
    await ledger.close();
    f.cleanup();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses a work tree without a forge origin, with the reason', async () => {
    const bare = new GitFixture('rl-noorigin-');
    try {
      await expect(run('registerRepo', { repoId: 'nope', path: bare.dir })).rejects.toMatchObject({ code: 'repo_no_origin' });
      bare.git('remote', 'add', 'origin', 'https://example.org/a/b.git');
      await expect(run('registerRepo', { repoId: 'nope', path: bare.dir })).rejects.toMatchObject({ code: 'repo_unknown_forge' });
    } finally {
      bare.cleanup();
    }
  });

  it('a clone whose origin is a local path registers once the forge is named (remoteUrl, and forge when the host does not say)', async () => {
    const upstream = new GitFixture('rl-upstream-');
    const clone = new GitFixture('rl-localclone-');
    try {
      clone.git('remote', 'add', 'origin', upstream.dir);
      await expect(run('registerRepo', { repoId: 'local', path: clone.dir })).rejects.toMatchObject({ code: 'repo_unknown_forge', message: expect.stringContaining('--remote-url https://host/owner/name') });
      const named = (await run('registerRepo', { repoId: 'local', path: clone.dir, remoteUrl: 'https://github.com/acme/local.git' })).response.result as { forge: unknown };
      expect(named.forge).toEqual({ kind: 'github', owner: 'acme', name: 'local', url: 'https://github.com/acme/local' });
      const selfHosted = (await run('registerRepo', { repoId: 'local-gl', path: clone.dir, remoteUrl: 'https://git.example.com/team/app', forge: 'gitlab' })).response.result as { forge: unknown };
      expect(selfHosted.forge).toEqual({ kind: 'gitlab', owner: 'team', name: 'app', url: 'https://git.example.com/team/app' });
      const noOrigin = new GitFixture('rl-noorigin2-');
      try {
        await expect(run('registerRepo', { repoId: 'bare2', path: noOrigin.dir })).rejects.toMatchObject({ code: 'repo_no_origin', message: expect.stringContaining('remoteUrl') });
      } finally {
        noOrigin.cleanup();
      }
    } finally {
      clone.cleanup();
      upstream.cleanup();
    }
  });

  it('registers, indexes, computes once per identical input, keeps summaries across a rebase, verifies diagram edges', async () => {
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 1;\n}\n');
    f.write('src/a.ts', "import { g } from './b';\n\nexport function f(x: number): number {\n  return g(x) * 2;\n}\n");
    f.write('src/c.ts', 'export function h(s: string): string {\n  return s;\n}\n');
    const base = f.commit('base');
    f.git('checkout', '-q', '-b', 'pr');
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 2;\n}\n');
    f.write('src/a.ts', "import { g } from './b';\n\nexport function f(x: number): number {\n  return g(x) * 3;\n}\n");
    f.write('src/c.ts', 'export function h(s: string): string {\n  return s.trim();\n}\n');
    const head = f.commit('pr');

    const reg = await run('registerRepo', { repoId: 'widgets', path: f.dir });
    expect(reg.response.result).toMatchObject({ repoId: 'widgets', forge: { kind: 'github', owner: 'acme', name: 'widgets', url: 'https://github.com/acme/widgets' } });

    const idx = await run('indexCode', { repoId: 'widgets', commit: head }, AGENT);
    expect(idx.response.result).toMatchObject({ commit: head, fileCount: 3, languages: [{ language: 'typescript', files: 3 }] });
    expect((await events('repo-widgets')).map((e) => e.type)).toEqual(['RepoRegistered', 'RepoIndexed']);

    await expect(run('computeReview', { repoId: 'widgets', prNumber: 7 }, AGENT)).rejects.toMatchObject({ code: 'review_not_found' });
    await run('requestReview', { repoId: 'widgets', prNumber: 7, baseSha: base, headSha: head }, AGENT);
    const first = await run('computeReview', { repoId: 'widgets', prNumber: 7 }, AGENT);
    expect(first.response.eventIds).toHaveLength(1);
    const again = await run('computeReview', { repoId: 'widgets', prNumber: 7, baseSha: base, headSha: head }, AGENT);
    expect(again.response.eventIds).toHaveLength(0);
    const computed = (await events('pr-widgets-7')).filter((e) => e.type === 'ReviewComputed');
    expect(computed).toHaveLength(1);
    const cohorts = (computed[0].data as { cohorts: Array<{ key: string; files: string[] }> }).cohorts;
    const ab = cohorts.find((c) => c.files.includes('src/a.ts'))!;
    expect(ab.files).toEqual(['src/a.ts', 'src/b.ts']);

    await run('setCohortSummary', { repoId: 'widgets', prNumber: 7, cohortKey: ab.key, markdown: 'f now triples g' }, AGENT);
    await expect(run('setCohortSummary', { repoId: 'widgets', prNumber: 7, cohortKey: 'c-0000000000000000', markdown: 'x' }, AGENT)).rejects.toMatchObject({ code: 'cohort_not_found' });

    // Rebase onto a newer base: a new round, a new computation, the same keys — the summary still attaches.
    f.git('checkout', '-q', 'main');
    f.write('README.md', 'docs\n');
    const newBase = f.commit('main moves');
    f.git('checkout', '-q', 'pr');
    f.git('rebase', '-q', 'main');
    const rebased = f.git('rev-parse', 'HEAD');
    await run('requestReview', { repoId: 'widgets', prNumber: 7, baseSha: newBase, headSha: rebased }, AGENT);
    const second = await run('computeReview', { repoId: 'widgets', prNumber: 7 }, AGENT);
    expect(second.response.eventIds).toHaveLength(1);
    const all = await events('pr-widgets-7');
    const latest = all.filter((e) => e.type === 'ReviewComputed').pop()!.data as { headSha: string; cohorts: Array<{ key: string }> };
    expect(latest.headSha).toBe(rebased);
    expect(latest.cohorts.map((c) => c.key).sort()).toEqual(cohorts.map((c) => c.key).sort());
    const summary = all.find((e) => e.type === 'CohortSummarySet')!.data as { cohortKey: string };
    expect(latest.cohorts.map((c) => c.key)).toContain(summary.cohortKey);

    const diagram = {
      kind: 'sequence',
      participants: [{ id: 'f', symbolId: 'src/a.ts#f' }, { id: 'g', symbolId: 'src/b.ts#g' }, { id: 'h', symbolId: 'src/c.ts#h' }],
      messages: [{ from: 'f', to: 'g', label: 'calls' }, { from: 'f', to: 'h', label: 'claims to call' }],
    };
    const added = await run('addReviewDiagram', { repoId: 'widgets', prNumber: 7, cohortKey: ab.key, diagram }, AGENT);
    expect((added.response.result as { diagram: { messages: Array<{ verified: boolean }> } }).diagram.messages.map((m) => m.verified)).toEqual([true, false]);
    await expect(run('addReviewDiagram', { repoId: 'widgets', prNumber: 7, cohortKey: ab.key, diagram: 'sequenceDiagram\n f->>g: calls' }, AGENT)).rejects.toMatchObject({ code: 'invalid_payload' });

    const handle = await ledger.workspace(ws);
    const impact = await queryCohortImpact(handle, { repoId: 'widgets', prNumber: 7, cohortKey: ab.key });
    expect(impact).toMatchObject({ cohortKey: ab.key, files: ['src/a.ts', 'src/b.ts'], blastRadius: { publicApi: ['src/a.ts#f', 'src/b.ts#g'] } });
    const radius = await queryBlastRadius(handle, { repoId: 'widgets', prNumber: 7, symbolId: 'src/b.ts#g' });
    expect(radius).toMatchObject({ commit: rebased, dependents: { files: ['src/a.ts'], symbols: ['src/a.ts#f'] } });
    await expect(queryCohortImpact(handle, { repoId: 'widgets', prNumber: 7, cohortKey: 'c-ffffffffffffffff' })).rejects.toMatchObject({ code: 'cohort_not_found' });
    await expect(
      run('addReviewDiagram', { repoId: 'widgets', prNumber: 7, cohortKey: ab.key, diagram: { ...diagram, messages: [{ from: 'f', to: 'zzz', label: 'x' }] } }, AGENT),
    ).rejects.toMatchObject({ code: 'invalid_payload' });
  });
});
