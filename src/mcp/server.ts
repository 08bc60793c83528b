import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { DomainError, validationError } from '../domain-error';
import { checkAccess, type CommandEnvelope, type Via } from '../commands/kernel';
import { isAgent, type Principal } from '../events/envelope';
import { newUuidV7 } from '../events/ids';
import { OPERATOR_EDGE, TENANT_EDGE, type Ledger } from '../ledger';
import { answerQuery } from '../readmodels/queries/run-query';
import { toRpcError } from '../rpc/errors';
import { assertResponseWithin, assertWithinLimits, canonicalJsonWithin, LIMITS } from '../rpc/limits';
import { assertNoReservedKeys } from '../commands/payload-keys';
import type { Role } from '../events/roles';
import { authenticate } from '../security/tokens';
import { effectiveRole } from '../workspaces/provisioning';
import { workspaceFold } from '../workspaces/workspace-state';
import type { WorkspaceHandle } from '../workspaces/registry';
import { payloadFor, resolveTools, type ResolvedTool } from './tools';
// Workspace-wide queries (audit, …) answer from checkpointed read models: installs the answerer into runQuery.

/**
 * Who the MCP session acts as. Over HTTP a bearer token; over stdio a token, or (the operator's own host)
 * a principal that is already a member, acting with its membership's role — never an asserted one.
 */
export type McpIdentity =
  | { kind: 'token'; token: string; workspaceId: string }
  | { kind: 'local'; workspaceId: string; principal: Principal };

async function callerFor(ledger: Ledger, identity: McpIdentity, workspaceId: unknown, holds: Array<() => void>): Promise<{ workspace: WorkspaceHandle; principal: Principal; role: Role; tokenId?: string; via: Via }> {
  const wid = workspaceId ?? identity.workspaceId;
  if (identity.kind === 'token') return { ...(await authenticate(ledger, wid, identity.token, holds)), via: 'mcp' };
  // Without a token nothing proves who drives the stdio pipe — an agent harness, by design of these
  // tools. A human acts with its own token: naming one here would let an agent publish directly, or
  // approve, as that human.
  if (!isAgent(identity.principal)) throw new DomainError('unauthorized', `--principal: without a token MCP over stdio acts only as an agent (agent:…), not ${identity.principal}; a human passes its own --token`);
  const { handle: workspace, release } = await ledger.workspaces.acquire(wid);
  holds.push(release);
  const { state } = await ledger.executor.load(workspaceFold, workspace, 'workspace');
  const role = effectiveRole(identity.principal, state.members[identity.principal] ?? 'guest', state.members[identity.principal]);
  if (role === null) throw new DomainError('unauthorized', `--principal: ${identity.principal} is not a member of workspace "${workspace.id}"; add it (review-ledger member add) or pass --token`);
  return { workspace, principal: identity.principal, role, via: 'cli' };
}

/** `tools/call` as the SDK routes it; its params are checked by the handler (see there). */
const TOOL_CALL = z.object({ method: z.literal('tools/call'), params: z.unknown().optional() });
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An MCP server exposing the agent tools (src/mcp/tools.ts) for one identity. */
export function buildMcpServer(ledger: Ledger, identity: McpIdentity): Server {
  // A tool result is a response like any other: the same cap as the RPC transports (src/rpc/limits.ts).
  const maxBytes = ledger.config.maxResponseBytes ?? LIMITS.maxResponseBytes;
  // Resolved before the server exists: a binding to a missing command or query fails start-up.
  const resolved = resolveTools();
  const server = new Server({ name: 'review-ledger', version: '0.1.0' }, { capabilities: { tools: {} } });
  const tools = (): ResolvedTool[] => resolved;

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools().map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputJsonSchema as { type: 'object'; properties?: Record<string, object>; required?: string[] } })),
  }));

  // A tool call is one request: the workspace it opens stays open until it is answered. Registered with a
  // schema that takes any params: the SDK's Server checks tools/call params itself in the handler it wraps
  // (-32602 Invalid params), but registered with CallToolRequestSchema the protocol parsed that schema
  // first and a client's bad params (`arguments: "x"`, `name: 5`) were answered -32603 Internal error.
  // The checks below answer the same way should the SDK stop checking.
  server.setRequestHandler(TOOL_CALL, async (req) => {
    const params = req.params;
    if (!isRecord(params) || typeof params.name !== 'string') throw new McpError(ErrorCode.InvalidParams, 'params.name: the name of a tool (a string) is required (see tools/list)');
    if (params.arguments !== undefined && !isRecord(params.arguments)) throw new McpError(ErrorCode.InvalidParams, 'params.arguments: must be an object of named arguments');
    const holds: Array<() => void> = [];
    try {
      return await callTool({ params: { name: params.name, arguments: params.arguments } }, holds);
    } finally {
      for (const release of holds) release();
    }
  });
  const callTool = async (req: { params: { name: string; arguments?: Record<string, unknown> } }, holds: Array<() => void>): Promise<CallToolResult> => {
    const tool = tools().find((t) => t.name === req.params.name);
    if (!tool) return failure(new DomainError('unknown_tool', `name: "${String(req.params.name).slice(0, 100)}" is not a tool of this server`));
    try {
      const args = (req.params.arguments ?? {}) as Record<string, unknown>;
      assertWithinLimits(args, 'arguments');
      assertNoReservedKeys(args, 'arguments');
      const parsed = tool.schema.safeParse(args);
      if (!parsed.success) throw validationError(parsed.error.issues);
      const caller = await callerFor(ledger, identity, args.workspace_id, holds);
      checkAccess({ name: tool.name, access: tool.access }, caller.principal, caller.role);
      if (tool.kind === 'query') {
        const { workspace_id: _w, ...input } = parsed.data as Record<string, unknown>;
        return success(canonicalJsonWithin(await answerQuery(tool.query!, caller.workspace, tool.query!.input.parse(input)), maxBytes, tool.name));
      }
      if (tool.kind === 'review') {
        const target = { repoId: args.repoId, prNumber: args.prNumber };
        const review: Record<string, unknown> = {};
        for (const q of tool.queries ?? []) {
          const input = q.input.safeParse(target);
          if (!input.success) continue;
          review[q.name] = await answerQuery(q, caller.workspace, input.data);
        }
        return success(canonicalJsonWithin(review, maxBytes, tool.name));
      }
      const envelope: CommandEnvelope = { idempotencyKey: typeof args.idempotencyKey === 'string' ? args.idempotencyKey : newUuidV7(), principal: caller.principal, role: caller.role, tokenId: caller.tokenId, via: caller.via, correlationId: `mcp:${tool.name}` };
      const out = await ledger.run(tool.command!.name, caller.workspace, envelope, payloadFor(tool.binding!, args), caller.via === 'cli' ? OPERATOR_EDGE : TENANT_EDGE);
      assertResponseWithin(out.json, maxBytes, tool.name);
      return success(out.json);
    } catch (err) {
      if (!(err instanceof DomainError)) console.error(`mcp ${tool.name}:`, err);
      return failure(err);
    }
  };
  return server;
}

const success = (json: string): CallToolResult => ({ content: [{ type: 'text', text: json }], structuredContent: JSON.parse(json) });

function failure(err: unknown): CallToolResult {
  const e = toRpcError(err);
  return { isError: true, content: [{ type: 'text', text: `${e.data?.code ?? 'error'}: ${e.message}` }], structuredContent: { error: e } };
}
