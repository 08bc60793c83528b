import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { loadConfig } from '../../src/config';
import { Ledger, LOCAL_OPERATOR } from '../../src/ledger';
import { BASE, HEAD_A } from '../rpc/support';
import { spawn } from 'node:child_process';
import { startServer } from '../../src/server/bootstrap';

const ROOT = path.resolve(__dirname, '../..');

describe('review-ledger mcp (stdio)', () => {
  it('serves the agent tools to the SDK client over stdio, acting as the token principal', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-mcp-stdio-'));
    const ledger = new Ledger(loadConfig({ dataDir }, {}));
    await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: 'stdio' });
    await ledger.run('addMember', 'stdio', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'agent:stdio-bot', role: 'member' });
    const { token } = await ledger.issueToken('stdio', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'agent:stdio-bot', role: 'member' });
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

  it('--url relays to a running server: lines piped in then stdin closed all get their answer, the SDK client closes cleanly, and neither says anything on stderr (issue 38)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-mcp-relay-'));
    const ledger = new Ledger(loadConfig({ dataDir }, {}));
    await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: 'relay' });
    await ledger.run('addMember', 'relay', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'agent:relay-bot', role: 'member' });
    const { token } = await ledger.issueToken('relay', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'agent:relay-bot', role: 'member' });
    await ledger.run('requestReview', 'relay', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { repoId: 'r', prNumber: 1, baseSha: BASE, headSha: HEAD_A });
    const server = await startServer({ port: 0 }, ledger);
    const args = ['-r', './tools/ts-register.js', 'src/cli/main.ts', 'mcp', '--url', server.url, '--token', token];
    try {
      // A shell pipe: every line written at once, then the end of stdin.
      const relay = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      relay.stdout.on('data', (c) => (out += c));
      relay.stderr.on('data', (c) => (err += c));
      const exited = new Promise<number | null>((resolve) => relay.on('exit', resolve));
      relay.stdin.end(
        [
          { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sh', version: '1' } } },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_review', arguments: { repoId: 'r', prNumber: 1 } } },
          { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        ]
          .map((m) => JSON.stringify(m) + '\n')
          .join(''),
      );
      expect(await exited).toBe(0);
      const answers = out.trim().split('\n').map((l) => JSON.parse(l));
      expect(answers.map((a) => [a.id, a.error ?? null]).sort()).toEqual([[0, null], [1, null], [2, null]]);
      expect(answers.find((a) => a.id === 1).result.structuredContent.reviewStatus.value).toMatchObject({ exists: true, round: 1 });
      expect(err).toBe('');

      // A harness: the SDK's stdio client, closed after its calls.
      const client = new Client({ name: 'relay-test', version: '1.0.0' });
      const transport = new StdioClientTransport({ command: process.execPath, args, cwd: ROOT, stderr: 'pipe' });
      let clientErr = '';
      transport.stderr!.on('data', (c) => (clientErr += c));
      await client.connect(transport);
      expect(((await client.callTool({ name: 'get_review', arguments: { repoId: 'r', prNumber: 1 } })) as any).isError).toBeFalsy();
      await client.close();
      await new Promise((r) => setTimeout(r, 500));
      expect(clientErr).toBe('');
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
