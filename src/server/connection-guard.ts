import type { Server } from 'node:http';
import * as net from 'node:net';
import type { ConnectionBounds } from '../operator-config';

/** How often, at most, a refusal is logged (with the count since the last line). */
const LOG_EVERY_MS = 60_000;

/**
 * The client a connection counts against: an IPv4 address (also when it arrives IPv4-mapped, as
 * `::ffff:a.b.c.d` on a dual-stack socket), or an IPv6 address's /64 — one host is routinely given a
 * whole /64, so counting single IPv6 addresses would give it 2^64 quotas.
 */
export function clientKey(remoteAddress: string | undefined): string {
  if (!remoteAddress) return '(unknown)';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(remoteAddress);
  if (mapped) return mapped[1];
  if (net.isIPv4(remoteAddress)) return remoteAddress;
  const bare = remoteAddress.split('%')[0];
  if (!net.isIPv6(bare)) return remoteAddress;
  return `${ipv6Groups(bare).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, as lowercase hex without leading zeros. */
function ipv6Groups(addr: string): string[] {
  let text = addr;
  // A trailing dotted quad (::ffff:1.2.3.4 handled above; 64:ff9b::1.2.3.4 and the like) is two groups.
  const quad = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16).toString(16));
}

export interface ConnectionGuard {
  /** Connections open now, clients holding them, and connections refused since the start. */
  stats(): { open: number; clients: number; refusedPerClient: number; refusedTotal: number };
}

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
export function guardConnections(server: Server, bounds: Pick<ConnectionBounds, 'maxConnections' | 'maxPerAddress'>, log: (line: string) => void = (l) => console.warn(l)): ConnectionGuard {
  const held = new Map<string, number>();
  let open = 0;
  let refusedPerClient = 0;
  let refusedTotal = 0;
  let lastLog = -Infinity;
  let unlogged = 0;
  const refused = (why: string): void => {
    unlogged++;
    const now = Date.now();
    if (now - lastLog < LOG_EVERY_MS) return;
    log(`review-ledger: refused ${unlogged} connection${unlogged === 1 ? '' : 's'}${lastLog === -Infinity ? '' : ' in the last minute'} (latest: ${why})`);
    lastLog = now;
    unlogged = 0;
  };
  server.maxConnections = bounds.maxConnections;
  server.on('drop', (data?: { remoteAddress?: string }) => {
    refusedTotal++;
    refused(`${data?.remoteAddress ?? 'a client'}: ${bounds.maxConnections} connections open, connections.maxConnections`);
  });
  // Added after the HTTP server's own listener, so that one has set the socket up before it is destroyed.
  server.on('connection', (socket: net.Socket) => {
    const key = clientKey(socket.remoteAddress);
    const n = held.get(key) ?? 0;
    if (n >= bounds.maxPerAddress) {
      refusedPerClient++;
      refusedTotal++;
      socket.destroy();
      refused(`${key} holds ${n} connections, connections.maxPerAddress`);
      return;
    }
    held.set(key, n + 1);
    open++;
    socket.once('close', () => {
      open--;
      const left = held.get(key)! - 1;
      if (left === 0) held.delete(key);
      else held.set(key, left);
    });
  });
  return { stats: () => ({ open, clients: held.size, refusedPerClient, refusedTotal }) };
}
