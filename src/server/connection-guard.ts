import type { Server } from 'node:http';
import type * as net from 'node:net';
import type { ConnectionBounds } from '../operator-config';
import { clientKey } from '../security/client-key';

/** How often, at most, a refusal is logged (with the count since the last line). */
const LOG_EVERY_MS = 60_000;

/**
 * Bounds the connections a server holds: `maxConnections` in all (Node's own `server.maxConnections`:
 * a connection past it is closed as it is accepted) and `maxPerAddress` per client (clientKey). Every
 * connection holds a file descriptor until it closes, and a WebSocket or an SSE stream lives long: one
 * client that opened 20,000 token-less WebSockets (each closed after `unauthenticatedMs`, but opened
 * again at once) held every descriptor under `nofile=20000`, and nobody else was answered. Now such a
 * client holds `maxPerAddress`, everyone else is served, and the stores, git and child processes keep
 * the descriptors the total leaves them (defaultMaxConnections). A refused connection is closed
 * before anything is read: the client sees the connection reset and may retry.
 */
export function guardConnections(server: Server, bounds: Pick<ConnectionBounds, 'maxConnections' | 'maxPerAddress'>, log: (line: string) => void = (l) => console.warn(l)): void {
  const held = new Map<string, number>();
  let lastLog = -Infinity;
  let unlogged = 0;
  const refused = (why: string): void => {
    unlogged++;
    const now = Date.now();
    if (now - lastLog < LOG_EVERY_MS) return;
    log(`review-ledger: refused ${unlogged} connection${unlogged === 1 ? '' : 's'}${lastLog === -Infinity ? '' : ' since the last such line'} (latest: ${why})`);
    lastLog = now;
    unlogged = 0;
  };
  server.maxConnections = bounds.maxConnections;
  server.on('drop', (data?: { remoteAddress?: string }) => {
    refused(`${data?.remoteAddress ?? 'a client'}: ${bounds.maxConnections} connections open, connections.maxConnections`);
  });
  // Added after the HTTP server's own listener, so that one has set the socket up before it is destroyed.
  server.on('connection', (socket: net.Socket) => {
    const key = clientKey(socket.remoteAddress);
    const n = held.get(key) ?? 0;
    if (n >= bounds.maxPerAddress) {
      socket.destroy();
      refused(`${key} holds ${n} connections, connections.maxPerAddress`);
      return;
    }
    held.set(key, n + 1);
    socket.once('close', () => {
      const left = held.get(key)! - 1;
      if (left === 0) held.delete(key);
      else held.set(key, left);
    });
  });
}
