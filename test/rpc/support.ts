import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WebSocket } from 'ws';
import { newUuidV7 } from '../../src/events/ids';
import { startServer, type RunningServer } from '../../src/server/bootstrap';

/** A real server on a fresh data dir and a loopback port, with the first-start owner token read from its file. */
export async function serverFixture(): Promise<{ server: RunningServer; dataDir: string; ownerToken: string; workspaceId: string; close(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-rpc-'));
  const server = await startServer({ dataDir, port: 0 });
  const ownerToken = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  return {
    server,
    dataDir,
    ownerToken,
    workspaceId: 'default',
    async close() {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RpcReply {
  jsonrpc: '2.0';
  id: string | number | null;
  result?: any;
  error?: { code: number; message: string; data?: { code: string; details?: unknown } };
}

/** POST /rpc with a raw body; returns the HTTP status and the parsed body. */
export async function postRpc(url: string, token: string | undefined, body: string | object): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

let nextId = 1;

/** One JSON-RPC call over HTTP; throws on transport failure, returns the reply (result or error). */
export async function call(url: string, token: string | undefined, method: string, params: Record<string, unknown>): Promise<RpcReply> {
  return (await postRpc(url, token, { jsonrpc: '2.0', id: nextId++, method, params })).body;
}

/** A command call with a fresh idempotency key. */
export const command = (url: string, token: string, workspaceId: string, method: string, payload: Record<string, unknown>) =>
  call(url, token, method, { workspace_id: workspaceId, idempotencyKey: newUuidV7(), ...payload });

const RANK: Record<string, number> = { owner: 4, admin: 3, member: 2, viewer: 1, guest: 0 };

/**
 * Provisions `principal` as a member holding at least `role` (principals are provisioned, never
 * asserted: SPEC §16), then issues it a token with `role` using the owner token; returns the secret.
 */
export async function tokenFor(url: string, ownerToken: string, workspaceId: string, principal: string, role: string): Promise<string> {
  const added = await command(url, ownerToken, workspaceId, 'addMember', { principal, role });
  if (added.error?.data?.code === 'member_exists') {
    const current = /\((\w+)\)$/.exec(added.error.message)?.[1] ?? 'guest';
    if (RANK[current] < RANK[role]) {
      const changed = await command(url, ownerToken, workspaceId, 'changeMemberRole', { principal, role });
      if (changed.error) throw new Error(`changeMemberRole: ${JSON.stringify(changed.error)}`);
    }
  } else if (added.error) throw new Error(`addMember: ${JSON.stringify(added.error)}`);
  const r = await command(url, ownerToken, workspaceId, 'issueToken', { principal, role });
  if (r.error) throw new Error(`issueToken: ${JSON.stringify(r.error)}`);
  return r.result.result.token;
}

/** A WebSocket JSON-RPC client that keeps every notification it receives. */
export class WsClient {
  readonly notifications: any[] = [];
  private readonly pending = new Map<string | number, (r: RpcReply) => void>();
  private readonly waiters: Array<() => void> = [];
  readonly raw: any[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      this.raw.push(msg);
      if (Array.isArray(msg) || msg.id !== undefined) {
        const replies = Array.isArray(msg) ? msg : [msg];
        for (const r of replies) {
          const p = this.pending.get(r.id);
          if (p) {
            this.pending.delete(r.id);
            p(r);
          }
        }
        if (!Array.isArray(msg) && !this.pending.has(msg.id) && msg.id === null) this.notifications.push(msg);
      } else this.notifications.push(msg);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static async open(url: string, token?: string): Promise<WsClient> {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/rpc`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new WsClient(ws);
  }

  send(text: string): void {
    this.ws.send(text);
  }

  call(method: string, params: Record<string, unknown>): Promise<RpcReply> {
    const id = nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** Waits until `predicate` holds over the received notifications (or fails after `ms`). */
  async until(predicate: () => boolean, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out; notifications: ${JSON.stringify(this.notifications).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  updates(subscription: string): any[] {
    return this.notifications.filter((n) => n.method === 'watch.update' && n.params.subscription === subscription).map((n) => n.params);
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

export const HEAD_A = 'a'.repeat(40);
export const HEAD_B = 'b'.repeat(40);
export const BASE = 'c'.repeat(40);

/** A node payload for addReviewNode on a review (no anchor, so no repository is needed). */
export function nodePayload(title: string, extra: Record<string, unknown> = {}) {
  return {
    kind: 'bug',
    priority: 'P1',
    triage: { category: 'correctness', severity: 'high', effort: 'small' },
    confidence: 0.8,
    reasoning: `because ${title}`,
    title,
    body: `${title}: details`,
    brief: 'engineer',
    ...extra,
  };
}
