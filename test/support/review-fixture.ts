import { newUuidV7 } from '../../src/events/ids';
import { LOCAL_OPERATOR } from '../../src/ledger';
import { GitFixture } from './git-fixture';
import { ledgerFixture } from './ledger-fixture';

const PRICE_BASE = 'export function price(qty: number, unit: number): number {\n  return qty * unit;\n}\n';
const PRICE_HEAD = 'export function price(qty: number, unit: number): number {\n  return Math.round(qty * unit * 100) / 100;\n}\n';
const cart = (factor: string) => `import { price } from './price';\n\nexport function total(lines: Array<[number, number]>): number {\n  let sum = 0;\n  for (const [q, u] of lines) sum += price(q, u)${factor};\n  return sum;\n}\n`;

export interface RequestedReview {
  fx: Awaited<ReturnType<typeof ledgerFixture>>;
  repo: GitFixture;
  baseSha: string;
  headSha: string;
  cleanup(): Promise<void>;
}

/**
 * A real review to read: a ledger with workspace `workspaceId`, the shop repository (a GitHub
 * origin) in which `price` (the callee) and `total` in cart.ts (its caller) change between base and
 * head, plus whatever a suite writes on each side (`base`, `head`), registered, and a review of
 * `target` requested by `by` at base..head. Not computed: each suite computes when its story says.
 */
export async function requestedReview(opts: {
  workspaceId: string;
  target: { repoId: string; prNumber: number };
  by: { principal: `agent:${string}` | `user:${string}`; role: 'member' | 'owner' };
  prefix: string;
  base?: (repo: GitFixture) => void;
  head?: (repo: GitFixture) => void;
}): Promise<RequestedReview> {
  const fx = await ledgerFixture({ workspaceId: opts.workspaceId });
  const repo = new GitFixture(opts.prefix);
  repo.git('remote', 'add', 'origin', 'git@github.com:acme/shop.git');
  repo.write('src/price.ts', PRICE_BASE);
  repo.write('src/cart.ts', cart(''));
  opts.base?.(repo);
  const baseSha = repo.commit('base');
  repo.write('src/price.ts', PRICE_HEAD);
  repo.write('src/cart.ts', cart(' * 2'));
  opts.head?.(repo);
  const headSha = repo.commit('head');
  await fx.ledger.run('registerRepo', opts.workspaceId, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { repoId: opts.target.repoId, path: repo.dir });
  await fx.ledger.run('requestReview', opts.workspaceId, { ...opts.by, idempotencyKey: newUuidV7() }, { ...opts.target, baseSha, headSha });
  return {
    fx,
    repo,
    baseSha,
    headSha,
    async cleanup() {
      await fx.cleanup();
      repo.cleanup();
    },
  };
}
