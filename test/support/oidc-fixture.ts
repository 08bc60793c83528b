import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * A real OpenID provider (`oidc-provider`, a certified implementation) in the test process, on an
 * ephemeral loopback port: discovery, authorization code + PKCE (required), the device authorization
 * grant, and its development login/consent pages (any password; the login names the account).
 * The issuer URL is known before the provider is built, so a review-ledger server can be configured with
 * it first and the provider then registers that server's redirect URI (`attach`).
 */
export interface OidcFixture {
  issuer: string;
  clientId: string;
  clientSecret: string;
  attach(redirectUris: string[]): void;
  close(): Promise<void>;
}

export type Accounts = Record<string, Record<string, unknown>>;

export async function startOidcProvider(accounts: Accounts): Promise<OidcFixture> {
  let handler: ((req: http.IncomingMessage, res: http.ServerResponse) => void) | null = null;
  const server = http.createServer((req, res) => {
    if (handler) return handler(req, res);
    res.statusCode = 503;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'review-ledger-test';
  const clientSecret = 'a-client-secret-the-provider-and-the-server-share';
  return {
    issuer,
    clientId,
    clientSecret,
    attach(redirectUris) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: redirectUris,
            grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        pkce: { required: () => true },
        features: { devInteractions: { enabled: true }, deviceFlow: { enabled: true } },
        claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email', 'email_verified'] },
        cookies: { keys: ['oidc-fixture-cookie-key'] },
        findAccount: (_ctx: unknown, sub: string) => (accounts[sub] ? { accountId: sub, claims: () => ({ sub, ...accounts[sub] }) } : undefined),
      });
      handler = provider.callback();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Cookies per origin, as a browser keeps them (paths ignored: every test cookie name is distinct per origin). */
export class CookieJar {
  private readonly byOrigin = new Map<string, Map<string, string>>();
  /** Every Set-Cookie line received, by origin (for asserting attributes). */
  readonly received: Array<{ origin: string; line: string }> = [];

  take(url: string, res: Response): void {
    const origin = new URL(url).origin;
    let jar = this.byOrigin.get(origin);
    if (!jar) this.byOrigin.set(origin, (jar = new Map()));
    for (const line of res.headers.getSetCookie()) {
      this.received.push({ origin, line });
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const gone = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]) < Date.now()));
      if (gone || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  }

  header(url: string): string | undefined {
    const jar = this.byOrigin.get(new URL(url).origin);
    if (!jar || jar.size === 0) return undefined;
    return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  get(url: string, name: string): string | undefined {
    return this.byOrigin.get(new URL(url).origin)?.get(name);
  }
}

/** One request with the jar's cookies, redirects not followed. */
export async function request(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const cookie = jar.header(url);
  const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) } });
  jar.take(url, res);
  return res;
}

/**
 * A browser at the provider: follows redirects, submits each form the provider shows (the development
 * login form filled with `login`, the consent form, the device confirmation form) until a redirect
 * leaves for `stopAt` (returns that URL) or, with `stopAt` null, a page without a form (the device
 * flow's "success" page; returns its URL).
 */
export async function signInAtProvider(jar: CookieJar, start: string, login: string, stopAt: string | null): Promise<string> {
  let url = start;
  /** A page a form POST answered with directly (200), handled like a fetched one. */
  let answered: string | null = null;
  for (let step = 0; step < 20; step++) {
    if (stopAt !== null && url.startsWith(stopAt)) return url;
    let html: string;
    if (answered !== null) {
      html = answered;
      answered = null;
    } else {
      const res = await request(jar, url);
      if (res.status >= 300 && res.status < 400) {
        url = new URL(res.headers.get('location')!, url).href;
        continue;
      }
      html = await res.text();
      if (res.status !== 200) throw new Error(`provider answered ${res.status} at ${url}: ${html.slice(0, 500)}`);
    }
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
    if (!form) {
      if (stopAt === null) return url;
      throw new Error(`no form at ${url}: ${html.slice(0, 500)}`);
    }
    const fields = new URLSearchParams();
    for (const m of form[2].matchAll(/<input([^>]*)>/g)) {
      const name = /name="([^"]*)"/.exec(m[1])?.[1];
      if (!name) continue;
      if (name === 'login') fields.set('login', login);
      else if (name === 'password') fields.set('password', 'any');
      else fields.set(name, /value="([^"]*)"/.exec(m[1])?.[1] ?? '');
    }
    const target = new URL(form[1], url).href;
    const posted = await request(jar, target, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: fields.toString() });
    if (posted.status === 200) {
      answered = await posted.text();
      url = target;
      continue;
    }
    if (posted.status < 300 || posted.status >= 400) throw new Error(`provider answered ${posted.status} to the form at ${url}: ${(await posted.text()).slice(0, 500)}`);
    url = new URL(posted.headers.get('location')!, url).href;
  }
  throw new Error('the provider did not finish within 20 steps');
}
