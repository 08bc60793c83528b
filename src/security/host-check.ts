import { isIP } from 'node:net';

/**
 * DNS rebinding: a page on `http://evil.example:3000` whose name is re-pointed at 127.0.0.1 is, to the
 * browser, same-origin with this server — its Origin equals `http://` + its Host, and it may POST
 * application/json. What gives it away is the Host: a name the operator never gave this server. A
 * request from a browser (it carries `Origin`) is served only when its Host is a name this server
 * answers to: an IP literal (a page cannot rebind one), `localhost` / `*.localhost` (RFC 6761: always
 * loopback), the configured listen host, and the operator's `allowedHosts`.
 */
export function hostAllowed(hostHeader: string | undefined, allowedHosts: readonly string[]): boolean {
  const name = hostName(hostHeader);
  if (name === null) return false;
  if (isIP(name) !== 0) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  return allowedHosts.includes(name);
}

/** The host name of a Host header (port and IPv6 brackets removed, lower-cased, trailing dot dropped); null when malformed. */
export function hostName(hostHeader: string | undefined): string | null {
  if (!hostHeader) return null;
  const h = hostHeader.trim().toLowerCase();
  const m = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(h) ?? /^([a-z0-9.-]+)(?::\d{1,5})?$/.exec(h);
  if (!m) return null;
  return m[1].replace(/\.$/, '');
}

/** The answer a browser request under an unknown Host gets, before anything else runs. */
export function hostRefusal(hostHeader: string | undefined): string {
  const shown = (hostHeader ?? '').slice(0, 100).replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Host: "${shown}" is not a name this server answers to (see allowedHosts)`, data: { code: 'host_not_allowed' } } });
}
