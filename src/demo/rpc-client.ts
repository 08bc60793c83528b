import { newUuidV7 } from '../events/ids';

/** A JSON-RPC refusal as the server sent it: `code` is the stable `error.data.code`. */
export class RpcError extends Error {
  constructor(readonly method: string, readonly code: string, message: string, readonly data: unknown) {
    super(`${method}: [${code}] ${message}`);
    this.name = 'RpcError';
  }
}

/**
 * A plain JSON-RPC-over-HTTP client of one server, as any outside client would write it: `POST /rpc`
 * with a bearer token, `workspace_id` in every call and a fresh UUIDv7 idempotency key per command.
 */
export class RpcClient {
  constructor(readonly baseUrl: string, readonly workspaceId: string, readonly token: string) {}

  as(token: string, workspaceId = this.workspaceId): RpcClient {
    return new RpcClient(this.baseUrl, workspaceId, token);
  }

  async call<T = any>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const res = await fetch(`${this.baseUrl}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { workspace_id: this.workspaceId, ...params } }),
    });
    const reply = (await res.json()) as { result?: T; error?: { message: string; data?: { code?: string } } };
    if (reply.error) throw new RpcError(method, reply.error.data?.code ?? 'rpc_error', reply.error.message, reply.error.data);
    return reply.result as T;
  }

  /** A command: its `result` (the kernel's response carries it next to stream and positions). */
  async command<T = any>(method: string, payload: Record<string, unknown>): Promise<T> {
    const response = await this.call<{ result: T }>(method, { idempotencyKey: newUuidV7(), ...payload });
    return response.result;
  }

  /** A query: its value (`review_studio.<name>` answers `{position, value}`). */
  async query<T = any>(name: string, input: Record<string, unknown>): Promise<T> {
    return (await this.call<{ value: T }>(`review_studio.${name}`, input)).value;
  }
}

/** `GET /health` of a server, or null when nothing answers there. */
export async function probeServer(baseUrl: string, timeoutMs = 1500): Promise<{ status: string; store: { adapter: string; dataDir?: string } } | null> {
  try {
    const res = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return null;
    const body = (await res.json()) as { status?: string; store?: { adapter: string; dataDir?: string } };
    return body.status === 'ok' && body.store ? (body as { status: string; store: { adapter: string; dataDir?: string } }) : null;
  } catch {
    return null;
  }
}
