// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import { newUuidV7 } from '../../src/events/ids';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { queryByName } from '../../src/readmodels/queries/queries';
import { GitFixture } from '../support/git-fixture';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';

jest.setTimeout(180_000);

/**
 * A context pack lists the doc lines that mention a changed symbol. Docs are PR content: a doc line of
 * one backtick and ~240 KB of "scale scale …" made the mention RegExp (/`[^`]*\bscale\b[^`]*`/)
 * backtrack quadratically — over ten seconds per line with the event loop held, every workspace stalled.
 * The mention is found in linear time, and real mentions are still found.
 */
describe('doc mentions in context packs cannot stall the server', () => {
  it('a pathological doc line is scanned at once; `scale()` in a normal line is still a doc clue', async () => {
    const lf = await ledgerFixture({ workspaceId: 'ws-docs' });
    const git = new GitFixture('rl-docmention-');
    try {
      git.git('remote', 'add', 'origin', 'git@github.com:acme/docs.git');
      git.write('src/math.ts', 'export function scale(x: number): number {\n  return x * 2;\n}\n');
      git.write('src/use.ts', "import { scale } from './math';\n\nexport function twice(): number {\n  return scale(2);\n}\n");
      git.write('docs/math.md', '# Math\n\nUse `scale()` to double a value.\n');
      git.write('docs/zz-evil.md', `# Notes\n\n\`${'scale '.repeat(40_000)}\n`);
      const base = git.commit('base');
      git.write('src/math.ts', 'export function scale(x: number): number {\n  return x * 3;\n}\n');
      const head = git.commit('head');
      const run = (cmd: string, payload: unknown) => lf.ledger.run(cmd, 'ws-docs', { ...OWNER, idempotencyKey: newUuidV7() }, payload);
      await run('registerRepo', { repoId: 'docs', path: git.dir });
      await run('requestReview', { repoId: 'docs', prNumber: 1, baseSha: base, headSha: head });
      await run('computeReview', { repoId: 'docs', prNumber: 1 });
      const computed = (await lf.events()).filter((e) => e.type === 'ReviewComputed').pop()!;
      const cohort = (computed.data as { cohorts: Array<{ key: string; files: string[] }> }).cohorts.find((c) => c.files.includes('src/math.ts'))!;
      const q = queryByName('cohortContext')!;
      const handle = await lf.ledger.workspace('ws-docs');
      const t0 = Date.now();
      const pack = (await runQuery(q, handle, q.input.parse({ repoId: 'docs', prNumber: 1, cohortKey: cohort.key }))).value as { clues: Array<{ kind: string; ref: string }> };
      const ms = Date.now() - t0;
      expect(pack.clues.filter((c) => c.kind === 'doc').map((c) => c.ref)).toContain('docs/math.md:L3');
      // Quadratic: >10 s on an idle machine for this one line; linear: well under a second.
      expect(ms).toBeLessThan(5000);
    } finally {
      await lf.cleanup();
      git.cleanup();
    }
  });
});
