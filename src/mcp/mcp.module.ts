import { All, Controller, Inject, Module, Req, Res } from '@nestjs/common';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ServerResponse } from 'node:http';
import { DomainError } from '../domain-error';
import { Ledger } from '../ledger';
import { httpStatusOf, toRpcError } from '../rpc/errors';
import type { RawBodyRequest } from '../rpc/raw-body';
import { authenticate, bearerFrom, parseToken } from '../security/tokens';
import { assertNoReservedKeys } from '../commands/payload-keys';
import { buildMcpServer } from './server';
import { resolveTools } from './tools';

/**
 * MCP over streamable HTTP at /mcp, stateless: every POST authenticates its bearer token (the token
 * names its workspace) and gets a fresh server+transport, so no session state outlives a request.
 */
@Controller()
export class McpController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {
    // A tool bound to a missing command or query stops the server at start-up, not at the first call.
    resolveTools();
  }

  @All('/mcp')
  async mcp(@Req() req: RawBodyRequest, @Res() res: ServerResponse): Promise<void> {
    try {
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'this MCP endpoint is stateless: POST only' } }));
        return;
      }
      const token = bearerFrom(req.headers.authorization);
      if (!token) throw new DomainError('unauthorized', 'Authorization: a bearer token is required');
      const workspaceId = token ? parseToken(token)?.workspaceId : undefined;
      await authenticate(this.ledger, workspaceId ?? '', token);
      let body: unknown;
      try {
        body = JSON.parse((req.rawBody ?? Buffer.alloc(0)).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON' } }));
        return;
      }
      // The SDK's schemas silently drop a top-level "__proto__" of `arguments`; refuse it (and the other
      // reserved keys) on the bytes as sent, like every other transport.
      for (const msg of Array.isArray(body) ? body : [body]) {
        const params = msg && typeof msg === 'object' ? (msg as { params?: unknown }).params : undefined;
        if (params && typeof params === 'object') assertNoReservedKeys(params, 'params');
      }
      const server = buildMcpServer(this.ledger, { kind: 'token', token: token!, workspaceId: workspaceId! });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (res.headersSent) return;
      res.writeHead(httpStatusOf(err), { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: toRpcError(err) }));
    }
  }
}

@Module({ controllers: [McpController] })
export class McpModule {}
