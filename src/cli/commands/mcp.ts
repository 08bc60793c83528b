import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { principalSchema } from '../../events/envelope';
import { Ledger } from '../../ledger';
import { buildMcpServer, type McpIdentity } from '../../mcp/server';
import { parseToken } from '../../security/tokens';
import { configFrom } from '../context';

/** `review-ledger mcp`: the agent tools over stdio, for harnesses that spawn their MCP servers. */
export function register(program: Command): void {
  program
    .command('mcp')
    .description('Serve the MCP agent tools over stdio (add_review_node, confirm_review_node, finalize_review, get_review, …)')
    .option('--token <token>', 'act as the principal and role of this bearer token (env REVIEW_LEDGER_TOKEN)')
    .option('--workspace <id>', 'workspace (without a token)')
    .option('--principal <principal>', 'without a token: an existing member to act as, with its membership role', 'agent:local')
    .action(async (opts: { token?: string; workspace?: string; principal: string }, cmd: Command) => {
      const token = opts.token ?? process.env.REVIEW_LEDGER_TOKEN;
      let identity: McpIdentity;
      if (token) {
        const parsed = parseToken(token);
        if (!parsed) throw new Error('--token: not a review-ledger token');
        identity = { kind: 'token', token, workspaceId: parsed.workspaceId };
      } else {
        if (!opts.workspace) throw new Error('--workspace or --token is required');
        identity = { kind: 'local', workspaceId: opts.workspace, principal: principalSchema.parse(opts.principal) };
      }
      const ledger = new Ledger(configFrom(cmd));
      await ledger.workspace(identity.workspaceId);
      const server = buildMcpServer(ledger, identity);
      const transport = new StdioServerTransport();
      transport.onclose = () => void ledger.close();
      await server.connect(transport);
    });
}
