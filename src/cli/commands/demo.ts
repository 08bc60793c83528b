import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./demo.actions') => require('./demo.actions');

/**
 * `review-ledger demo`: a live, real review on first run. It talks to the server that `npm start`
 * runs (JSON-RPC with the first-start owner token) — a second process must never open the same
 * SQLite files — and only when no server answers does it start one itself and keep it running.
 */
export function register(program: Command): void {
  program
    .command('demo')
    .description('Build a small git repository, review a PR of it through the running server (or start one), and print the Review page URL with a sign-in link')
    .option('--url <url>', 'the server to use (default http://<host>:<port> from the configuration, i.e. http://127.0.0.1:3000)')
    .option('--workspace <id>', 'the demo workspace (created on first use)', 'demo')
    .option('--repo-root <dir>', "the server's repo root, where the generated repository is written (default <data-dir>/repos)")
    .option('--json', 'print the result as one JSON line (includes the demo tokens)')
    .action((opts: { url?: string; workspace: string; repoRoot?: string; json?: boolean }, cmd: Command) => actions().runDemoCommand(opts, cmd));
}
