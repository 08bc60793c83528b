import { ledgerFixture, OWNER } from '../support/ledger-fixture';
import { GitFixture } from '../support/git-fixture';
import { newUuidV7 } from '../../src/events/ids';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { queryByName } from '../../src/readmodels/queries/queries';

export const REPO = 'shop';
export const AGENT = { principal: 'agent:claude' as const, role: 'member' as const };
export const QA = { principal: 'agent:qa-bot' as const, role: 'member' as const };
type Actor = { principal: `user:${string}` | `agent:${string}`; role: 'owner' | 'member' };

const lines = (n: number, f: (i: number) => string): string => Array.from({ length: n }, (_, i) => f(i)).join('\n');

const OPENAPI = (withReport: boolean): string =>
  `openapi: 3.0.3\ninfo:\n  title: shop\n  version: '1'\npaths:\n  /scale:\n    get:\n      responses:\n        '200':\n          description: ok\n${withReport ? `  /report:\n    get:\n      responses:\n        '200':\n          description: ok\n` : ''}`;

/** `clamp` is a long unchanged callee; `buildReport` the unchanged caller; tests call `scale` directly. */
export const BASE_FILES: Record<string, string> = {
  'src/clamp.ts': `export function clamp(value: number, lower: number, upper: number): number {\n${lines(40, (i) => `  // bound check ${i}: keep the value inside [lower, upper] for step ${i}\n  if (value < lower - ${i}) value = lower - ${i};`)}\n  return Math.min(upper, Math.max(lower, value));\n}\n`,
  'src/math.ts': `import { clamp } from './clamp';\n\nexport function scale(x: number): number {\n  return clamp(x * 2, 0, 100);\n}\n`,
  'src/report.ts': `import { scale } from './math';\n\nexport function buildReport(values: number[]): string {\n  const scaled = values.map((v) => scale(v));\n  return scaled.join(', ');\n}\n`,
  'src/legacy.ts': 'export function scale(x: number): number {\n  return x;\n}\n',
  'src/legacy-user.ts': "import { scale } from './legacy';\n\nexport function useLegacy(): number {\n  return scale(1);\n}\n",
  // A script that calls a global `scale`: only a name matches, so it is never a caller of either definition.
  'src/global-user.js': 'function guessCaller() {\n  return scale(3);\n}\nmodule.exports = { guessCaller };\n',
  'src/other.ts': 'export function roundHalf(x: number): number {\n  return Math.round(x * 2) / 2;\n}\n',
  'test/math.test.ts': "import { scale } from '../src/math';\n\ndescribe('scale', () => {\n  it('doubles within bounds', () => {\n    expect(scale(2)).toBe(4);\n  });\n});\n",
  'docs/math.md': '# Math helpers\n\nUse `scale()` to double a value within bounds.\n\nUnrelated paragraph.\n',
  'package.json': '{ "name": "shop", "version": "1.0.0", "dependencies": { "left-pad": "1.0.0" } }\n',
  'openapi.yaml': OPENAPI(true),
};

/** PR 1 changes scale once; PR 2 changes it again, calls an un-imported helper, bumps a dependency and removes an endpoint. */
export const PR1_MATH = `import { clamp } from './clamp';\n\nexport function scale(x: number): number {\n  return clamp(x * 3, 0, 100);\n}\n`;
export const PR2_MATH = `import { clamp } from './clamp';\n\nexport function scale(x: number): number {\n${lines(17, (i) => `  const step${i} = x * ${i + 2}; // widened scaling step ${i}, see the design note`)}\n  return clamp(roundHalf(step0), 0, 100);\n}\n`;

export async function contextFixture() {
  const lf = await ledgerFixture({ workspaceId: 'ws-context' });
  const ws = 'ws-context';
  const git = new GitFixture('rl-context-');
  git.git('remote', 'add', 'origin', 'git@github.com:acme/shop.git');
  for (const [p, c] of Object.entries(BASE_FILES)) git.write(p, c);
  const base = git.commit('base');
  git.git('checkout', '-q', '-b', 'pr1');
  git.write('src/math.ts', PR1_MATH);
  const head1 = git.commit('pr1');
  git.git('checkout', '-q', 'main');
  git.git('checkout', '-q', '-b', 'pr2');
  git.write('src/math.ts', PR2_MATH);
  git.write('package.json', '{ "name": "shop", "version": "1.0.0", "dependencies": { "left-pad": "2.0.0" } }\n');
  git.write('openapi.yaml', OPENAPI(false));
  const head2 = git.commit('pr2');

  const run = (cmd: string, payload: unknown, who: Actor = OWNER) => lf.ledger.run(cmd, ws, { ...who, idempotencyKey: newUuidV7() }, payload);
  const query = async <T = any>(name: string, input: unknown): Promise<T> => {
    const q = queryByName(name)!;
    const handle = await lf.ledger.workspace(ws);
    const parsed = q.input.parse(input);
    return (await runQuery(q, handle, parsed)).value as T;
  };
  await run('registerRepo', { repoId: REPO, path: git.dir });
  return {
    lf,
    git,
    ws,
    base,
    head1,
    head2,
    run,
    query,
    async cleanup() {
      await lf.cleanup();
      git.cleanup();
    },
  };
}
