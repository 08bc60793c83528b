import type { IncomingMessage } from 'node:http';
import { DomainError } from '../domain-error';

/**
 * The Review page's session cookie. `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's
 * page or link sends it), `Path=/`, `Max-Age` = the session's remaining life, `Secure` when the server's
 * public URL is https. A state-changing call authenticated by it must also carry the custom header
 * `X-Review-Ledger-CSRF: 1`: a cross-site form cannot set a header, and a cross-site script that could
 * would need a CORS preflight this server never grants.
 */
export const SESSION_COOKIE = 'rl_session';
/** Binds the sign-in's `state` to the browser that started it (`SameSite=Lax`: the provider's redirect back is a cross-site navigation). */
export const SIGN_IN_COOKIE = 'rl_signin';
export const CSRF_HEADER = 'x-review-ledger-csrf';

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedCookie(name: string, path: string): string {
  return `${name}=; Path=${path}; Max-Age=0; HttpOnly; SameSite=${name === SESSION_COOKIE ? 'Strict' : 'Lax'}`;
}

/**
 * The bearer of a request: its `Authorization: Bearer` token, else its session cookie — the cookie only
 * when the request carries the CSRF header (refused with `csrf_header_required` otherwise).
 */
export function credentialOf(req: IncomingMessage, bearer: string | undefined): string | undefined {
  if (bearer) return bearer;
  const session = readCookie(req, SESSION_COOKIE);
  if (!session) return undefined;
  if (req.headers[CSRF_HEADER] !== '1') throw new DomainError('csrf_header_required', `${CSRF_HEADER}: a call authenticated by the session cookie must send the header "X-Review-Ledger-CSRF: 1"`);
  return session;
}
