import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { principalSchema } from '../../events/envelope';
import { Ledger } from '../../ledger';
import { buildMcpServer, type McpIdentity } from '../../mcp/server';
import { parseToken } from '../../security/tokens';
import { configFrom } from '../context';

/** The action of mcp.ts, loaded when `mcp` runs. */

export async function serveMcp(opts: { token?: string; workspace?: string; principal: string }, cmd: Command): Promise<void> {
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
}
