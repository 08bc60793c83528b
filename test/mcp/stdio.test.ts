import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { loadConfig } from '../../src/config';
import { Ledger, LOCAL_OPERATOR } from '../../src/ledger';
import { issueApiToken } from '../../src/security/tokens';
import { BASE, HEAD_A } from '../rpc/support';

const ROOT = path.resolve(__dirname, '../..');

describe('review-ledger mcp (stdio)', () => {
  it('serves the agent tools to the SDK client over stdio, acting as the token principal', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-mcp-stdio-'));
    const ledger = new Ledger(loadConfig({ dataDir }, {}));
    await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: 'stdio' });
    await ledger.run('addMember', 'stdio', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'agent:stdio-bot', role: 'member' });
    const { token } = await issueApiToken(ledger, 'stdio', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'agent:stdio-bot', role: 'member' });
    await ledger.run('requestReview', 'stdio', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { repoId: 'r', prNumber: 1, baseSha: BASE, headSha: HEAD_A });
    await ledger.close();

    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--data-dir', dataDir, 'mcp', '--token', token], cwd: ROOT, stderr: 'inherit' }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['add_review_node', 'get_review']));
      const filed = (await client.callTool({
        name: 'add_review_node',
        arguments: { reasoning: 'why', repoId: 'r', prNumber: 1, node: { kind: 'question', priority: 'P3', triage: { category: 'testing', severity: 'info', effort: 'trivial' }, confidence: 0.4, title: 'over stdio', body: 'b', brief: 'engineer' } },
      })) as any;
      expect(filed.isError).toBeFalsy();
      const review = (await client.callTool({ name: 'get_review', arguments: { repoId: 'r', prNumber: 1 } })) as any;
      expect(review.structuredContent.nodeStatus.value.nodes).toEqual([expect.objectContaining({ title: 'over stdio', author: 'agent:stdio-bot' })]);
    } finally {
      await client.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
