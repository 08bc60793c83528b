import { createHash, randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A GitHub OAuth app stand-in on a loopback port that checks each request the way GitHub documents its
 * web application flow ("Authorizing OAuth apps"): `GET /login/oauth/authorize` with `client_id`,
 * `redirect_uri`, `state` and a PKCE `code_challenge` (S256); `POST /login/oauth/access_token` with
 * `client_id`, `client_secret`, `code`, `redirect_uri`, `code_verifier`, answering JSON when asked with
 * `Accept: application/json`; `GET /user` with the access token as `Authorization: Bearer`, a
 * `User-Agent` (GitHub refuses requests without one) and the REST API's media type. Every refusal is
 * recorded in `violations`, so a test can assert the client made none.
 */
export interface GitHubStandIn {
  url: string;
  clientId: string;
  clientSecret: string;
  /** Who approves the next authorization (GitHub's signed-in user). */
  user: { id: number; login: string };
  violations: string[];
  /** Token requests answered `authorization_pending` (HTTP 200, as GitHub does) so far. */
  pendingAnswers: number;
  /** The person enters `userCode` at GitHub's device page, signed in as `user`. */
  approve(userCode: string, user: { id: number; login: string }): void;
  close(): Promise<void>;
}

export async function startGitHubStandIn(): Promise<GitHubStandIn> {
  const clientId = 'Iv1.standin0000000001';
  const clientSecret = randomBytes(20).toString('hex');
  const codes = new Map<string, { redirectUri: string; challenge: string; user: { id: number; login: string } }>();
  const tokens = new Map<string, { id: number; login: string }>();
  const devices = new Map<string, { userCode: string; user: { id: number; login: string } | null }>();
  const state: GitHubStandIn = {
    url: '',
    clientId,
    clientSecret,
    user: { id: 1, login: 'octocat' },
    violations: [],
    pendingAnswers: 0,
    approve(userCode, user) {
      for (const d of devices.values()) if (d.userCode === userCode) d.user = user;
    },
    close: async () => undefined,
  };
  const refuse = (res: http.ServerResponse, status: number, why: string) => {
    state.violations.push(why);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'bad_request', error_description: why }));
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', state.url);
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== clientId) return refuse(res, 400, 'authorize: unknown client_id');
      const redirectUri = q.get('redirect_uri');
      if (!redirectUri) return refuse(res, 400, 'authorize: redirect_uri missing');
      if (!q.get('state')) return refuse(res, 400, 'authorize: state missing (GitHub strongly recommends it)');
      if (q.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? '')) return refuse(res, 400, 'authorize: PKCE code_challenge (S256) missing');
      const code = randomBytes(10).toString('hex');
      codes.set(code, { redirectUri, challenge: q.get('code_challenge')!, user: state.user });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (req.method === 'POST' && url.pathname === '/login/device/code') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const p = new URLSearchParams(body);
        if (p.get('client_id') !== clientId) return refuse(res, 400, 'device/code: unknown client_id');
        if (!/application\/json/.test(req.headers.accept ?? '')) return refuse(res, 400, 'device/code: without Accept: application/json GitHub answers form-encoded');
        const deviceCode = randomBytes(20).toString('hex');
        const userCode = `${randomBytes(2).toString('hex')}-${randomBytes(2).toString('hex')}`.toUpperCase();
        devices.set(deviceCode, { userCode, user: null });
        res.writeHead(200, { 'content-type': 'application/json' });
        // GitHub's interval is 5 s; 1 s keeps the test short.
        res.end(JSON.stringify({ device_code: deviceCode, user_code: userCode, verification_uri: `${state.url}/login/device`, expires_in: 900, interval: 1 }));
      });
      return;
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (!/application\/json/.test(req.headers.accept ?? '')) return refuse(res, 400, 'access_token: without Accept: application/json GitHub answers form-encoded');
        const p = new URLSearchParams(body);
        if (p.get('grant_type') === 'urn:ietf:params:oauth:grant-type:device_code') {
          if (p.get('client_id') !== clientId) return refuse(res, 400, 'access_token (device): unknown client_id');
          const device = devices.get(p.get('device_code') ?? '');
          if (!device) return refuse(res, 400, 'access_token (device): unknown device_code');
          res.writeHead(200, { 'content-type': 'application/json' });
          // As GitHub documents it: errors come with HTTP 200.
          if (!device.user) {
            state.pendingAnswers++;
            return res.end(JSON.stringify({ error: 'authorization_pending', error_description: 'The authorization request is still pending.' }));
          }
          devices.delete(p.get('device_code')!);
          const token = `gho_${randomBytes(18).toString('hex')}`;
          tokens.set(token, device.user);
          return res.end(JSON.stringify({ access_token: token, token_type: 'bearer', scope: 'read:user' }));
        }
        if (p.get('client_id') !== clientId || p.get('client_secret') !== clientSecret) return refuse(res, 401, 'access_token: client_id/client_secret wrong or missing from the body');
        const grant = codes.get(p.get('code') ?? '');
        codes.delete(p.get('code') ?? '');
        if (!grant) return refuse(res, 400, 'access_token: unknown or used code');
        if (p.get('redirect_uri') !== grant.redirectUri) return refuse(res, 400, 'access_token: redirect_uri differs from the authorize request');
        const verifier = p.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return refuse(res, 400, 'access_token: code_verifier does not match the code_challenge');
        const token = `gho_${randomBytes(18).toString('hex')}`;
        tokens.set(token, grant.user);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: token, token_type: 'bearer', scope: 'read:user' }));
      });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/user') {
      if (!req.headers['user-agent']) return refuse(res, 403, 'GET /user: no User-Agent');
      if (!/application\/vnd\.github(\+json|\.v3)/.test(req.headers.accept ?? '')) return refuse(res, 415, 'GET /user: Accept is not the REST API media type');
      const user = tokens.get(/^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '');
      if (!user) return refuse(res, 401, 'GET /user: bad credentials');
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ ...user, type: 'User', name: null }));
    }
    refuse(res, 404, `${req.method} ${url.pathname}: not a GitHub OAuth endpoint`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
