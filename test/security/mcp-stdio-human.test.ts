import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as path from 'node:path';
import { REPO, reviewFixture, WS } from '../review/support';

const BIN = path.resolve(__dirname, '../../bin/review-ledger.js');

/**
 * `review-ledger mcp` over stdio without a token acted as any existing member named by --principal —
 * a human included. The MCP tools are the agent tools, and nothing proves who drives the pipe: an agent
 * harness started with `--principal user:local-operator` published directly (no human approval) as the
 * owner. Without a token only an agent principal is accepted; a human passes its own token.
 */
describe('MCP over stdio never acts as a human without that human’s token', () => {
  let f: Awaited<ReturnType<typeof reviewFixture>>;
  afterAll(() => f.cleanup());

  it('--principal user:… is refused; an agent member still works', async () => {
    f = await reviewFixture();
    await f.request(7);
    const tool = async (principal: string) => {
      const client = new Client({ name: 'mcp-stdio-human', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, '--data-dir', f.dataDir, 'mcp', '--workspace', WS, '--principal', principal], env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1', REVIEW_LEDGER_TOKEN: '' } as Record<string, string>, stderr: 'ignore' }));
      try {
        return (await client.callTool({ name: 'get_review', arguments: { repoId: REPO, prNumber: 7 } })) as { isError?: boolean; content: Array<{ text: string }> };
      } finally {
        await client.close();
      }
    };
    // user:local-operator is the workspace's owner: a member, and human.
    const human = await tool('user:local-operator');
    expect([human.isError, human.content[0].text]).toEqual([true, expect.stringMatching(/^unauthorized: --principal: without a token MCP over stdio acts only as an agent/)]);
    const agent = await tool('agent:local');
    // agent:local is not a member of this workspace: refused for that reason, not for being human.
    expect(agent.content[0].text).toMatch(/agent:local is not a member/);
  }, 90_000);
});
