import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./mcp.actions') => require('./mcp.actions');

/** `review-ledger mcp`: the agent tools over stdio, for harnesses that spawn their MCP servers. */
export function register(program: Command): void {
  program
    .command('mcp')
    .description('Serve the MCP agent tools over stdio (add_review_node, confirm_review_node, finalize_review, get_review, …)')
    .option('--token <token>', 'act as the principal and role of this bearer token (env REVIEW_LEDGER_TOKEN)')
    .option('--workspace <id>', 'workspace (without a token)')
    .option('--principal <principal>', 'without a token: an existing agent member (agent:…) to act as, with its membership role; a human passes its own --token', 'agent:local')
    .option('--url <url>', "relay to a running server's MCP endpoint (<url>/mcp) instead of opening its store (needs --token)")
    .action((opts: { token?: string; workspace?: string; principal: string; url?: string }, cmd: Command) => actions().serveMcp(opts, cmd));
}
