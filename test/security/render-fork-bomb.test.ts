import '../axes/visual/support/esm';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitRepo } from '../../src/git/repo';
import { computeVisual } from '../../src/axes/visual';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { sandboxUnavailableReason } from '../../src/axes/visual/harness/sandbox';
import { defaultOperatorConfig } from '../../src/operator-config';
import { GitFixture } from '../support/git-fixture';

afterAll(() => closeSharedDiffPools());

/** Processes whose command line carries `marker` (a zombie counts as gone). */
function withMarker(marker: string): number[] {
  const out: number[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (/^\d+ \(.*\) [ZX]/.test(fs.readFileSync(`/proc/${p}/stat`, 'utf8'))) continue;
      if (fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker)) out.push(Number(p));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

describe('a fork bomb in a render command', () => {
  it('is contained by the process limit, killed with its whole sandbox at the timeout, and the axis says why', async () => {
    const sandbox = { ...defaultOperatorConfig(os.tmpdir()).sandbox, limits: { ...defaultOperatorConfig(os.tmpdir()).sandbox.limits, processes: 64, cpuSeconds: 10 } };
    // Never run this unsandboxed: the precondition is a working sandbox.
    expect(await sandboxUnavailableReason(sandbox)).toBeNull();
    const fx = new GitFixture('rl-forkbomb-');
    const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-forkbomb-ws-'));
    const marker = `bomb${process.pid}x${Date.now()}`;
    try {
      fx.write('src/a.txt', '1\n');
      const baseSha = fx.commit('base');
      fx.write('src/a.txt', '2\n');
      const headSha = fx.commit('head');
      const repo = await GitRepo.open(fx.dir);
      try {
        const started = Date.now();
        const v = await computeVisual({
          repo,
          baseSha,
          headSha,
          changedFiles: await repo.diffNameStatus(baseSha, headSha),
          workspaceDir,
          renderCommand: { command: `${marker}() { ${marker} | ${marker} & }; ${marker}; sleep 30`, outputDir: 'out', timeoutMs: 3000 },
          renderSandbox: sandbox,
        });
        expect(Date.now() - started).toBeLessThan(30_000);
        expect(v.status).toBe('unavailable');
        expect(v.reason).toMatch(/render: render command (timed out after 3000 ms|failed|exceeded)/);
        // The host still forks, and nothing of the bomb survives.
        for (let i = 0; i < 100 && withMarker(marker).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
        expect(withMarker(marker)).toEqual([]);
      } finally {
        repo.close();
      }
    } finally {
      fx.cleanup();
      fs.rmSync(workspaceDir, { recursive: true, force: true });
    }
  });
});
