import type { IncomingMessage } from 'node:http';
import * as net from 'node:net';

/**
 * The client a connection counts against: an IPv4 address (also when it arrives IPv4-mapped, as
 * `::ffff:a.b.c.d` on a dual-stack socket), or an IPv6 address's /64 — one host is routinely given a
 * whole /64, so counting single IPv6 addresses would give it 2^64 quotas.
 */
export function clientKey(remoteAddress: string | undefined): string {
  if (!remoteAddress) return '(unknown)';
  const a = canonicalAddress(remoteAddress);
  // canonicalAddress writes an IPv6 address as its eight groups, anything else without a colon.
  return a.includes(':') ? `${a.split(':').slice(0, 4).join(':')}::/64` : a;
}

/** The eight 16-bit groups of an IPv6 address, as lowercase hex without leading zeros. */
function ipv6Groups(addr: string): string[] {
  let text = addr;
  // A trailing dotted quad (64:ff9b::1.2.3.4 and the like; ::ffff:a.b.c.d is IPv4 already) is two groups.
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

/** An address as compared: IPv4-mapped IPv6 written as IPv4, the zone dropped, IPv6 in its eight groups; not an IP: lowercased. */
function canonicalAddress(a: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(a);
  if (mapped) return mapped[1];
  if (net.isIPv4(a)) return a;
  const bare = a.split('%')[0];
  return net.isIPv6(bare) ? ipv6Groups(bare).join(':') : a.toLowerCase();
}

/**
 * The client key of an HTTP request: its connection's peer — or, when that peer is one of the operator's
 * `trustedProxies`, the address X-Forwarded-For names for it: read from the right (each proxy appends the
 * address it heard from), skipping trusted proxies; an entry that is not an IP address stops the walk at
 * the last trusted hop (a client may write anything on the left, never on the right of what its proxy adds).
 */
export function requestClientKey(req: IncomingMessage, trustedProxies: readonly string[]): string {
  const peer = req.socket.remoteAddress;
  if (trustedProxies.length === 0 || !peer) return clientKey(peer);
  const trusted = new Set(trustedProxies.map(canonicalAddress));
  let client = peer;
  const forwarded = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').map((h) => h.trim()).filter(Boolean);
  while (trusted.has(canonicalAddress(client)) && hops.length > 0) {
    const next = hops.pop()!;
    if (net.isIP(next) === 0) break;
    client = next;
  }
  return clientKey(client);
}
