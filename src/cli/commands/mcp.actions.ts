import type { Command } from 'commander';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { principalSchema } from '../../events/envelope';
import { Ledger } from '../../ledger';
import { buildMcpServer, type McpIdentity } from '../../mcp/server';
import { GuardedStdioTransport } from '../../mcp/stdio-transport';
import { parseToken } from '../../security/tokens';
import { configFrom } from '../context';
import { attachReadModels } from '../../readmodels/stored/registry';

/** The action of mcp.ts, loaded when `mcp` runs. */

export async function serveMcp(opts: { token?: string; workspace?: string; principal: string; url?: string }, cmd: Command): Promise<void> {
  const token = opts.token ?? process.env.REVIEW_LEDGER_TOKEN;
  if (opts.url) {
    if (!token) throw new Error('--url needs --token (or REVIEW_LEDGER_TOKEN): the server authenticates every MCP request');
    return relayToServer(opts.url, token);
  }
  let identity: McpIdentity;
  if (token) {
    const parsed = parseToken(token);
    if (!parsed) throw new Error('--token: not a review-ledger token');
    identity = { kind: 'token', token, workspaceId: parsed.workspaceId };
  } else {
    if (!opts.workspace) throw new Error('--workspace or --token is required');
    identity = { kind: 'local', workspaceId: opts.workspace, principal: principalSchema.parse(opts.principal) };
  }
  const ledger = new Ledger(configFrom(cmd), { onOpenWorkspace: attachReadModels });
  await ledger.workspace(identity.workspaceId);
  const server = buildMcpServer(ledger, identity);
  const transport = new GuardedStdioTransport();
  transport.onclose = () => void ledger.close();
  await server.connect(transport);
}

/**
 * stdio ↔ streamable HTTP: a harness that spawns its MCP servers gets the running server's tools,
 * without a second process opening that server's SQLite files. Messages pass through unchanged.
 * Requests that follow `initialize` wait for its answer (it carries the session), and the end of stdin
 * closes the relay only once every request sent has its answer, so `printf … | review-ledger mcp --url`
 * answers every line; a normal close says nothing on stderr (issue 38: "This operation was aborted").
 */
async function relayToServer(url: string, token: string): Promise<void> {
  // Guarded here too: the SDK's parse would drop a __proto__ key before the server could refuse it.
  const stdio = new GuardedStdioTransport();
  const http = new StreamableHTTPClientTransport(new URL(`${url.replace(/\/+$/, '')}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  /** Requests sent and not answered yet, by id. */
  const waiting = new Map<string | number, { answered: Promise<void>; resolve: () => void }>();
  let initialized: Promise<void> = Promise.resolve();
  let closing = false;
  const answer = (id: string | number) => {
    waiting.get(id)?.resolve();
    waiting.delete(id);
  };
  stdio.onmessage = (m) => {
    const id = 'method' in m && 'id' in m && m.id !== undefined && m.id !== null ? m.id : null;
    let resolve = () => {};
    const answered = new Promise<void>((r) => (resolve = r));
    if (id !== null) waiting.set(id, { answered, resolve });
    const isInitialize = 'method' in m && m.method === 'initialize';
    const after = isInitialize ? Promise.resolve() : initialized;
    const sent = after
      .then(() => http.send(m))
      .catch((err) => {
        const message = `review-ledger mcp: ${url} refused or failed: ${err instanceof Error ? err.message : String(err)}`;
        process.stderr.write(`${message}\n`);
        // A request must get an answer, or the harness waits forever.
        if (id !== null) {
          answer(id);
          void stdio.send({ jsonrpc: '2.0', id, error: { code: -32000, message } });
        }
      });
    if (isInitialize) initialized = id !== null ? answered : sent;
  };
  http.onmessage = (m) => {
    void stdio.send(m);
    if (!('method' in m) && 'id' in m && m.id !== undefined && m.id !== null) answer(m.id);
  };
  http.onerror = (err) => {
    // Closing aborts the open streams: that is the close, not an error.
    if (closing && err.name === 'AbortError') return;
    process.stderr.write(`review-ledger mcp: ${err.message}\n`);
  };
  stdio.onclose = () => {
    closing = true;
    // Answers still on their way are delivered first (for at most a minute), then the streams close.
    const all = Promise.all([...waiting.values()].map((w) => w.answered));
    void Promise.race([all, new Promise((r) => setTimeout(r, 60_000).unref())]).then(() => http.close());
  };
  await http.start();
  await stdio.start();
}
