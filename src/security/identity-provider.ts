import * as client from 'openid-client';
import { DomainError } from '../domain-error';
import { principalSchema, type Principal } from '../events/envelope';
import type { IdentityProviderConfig } from '../operator-config';
import type { SignInIdentity } from './sessions';

/**
 * The operator's identity provider, through `openid-client`: OpenID Connect (discovery from the issuer
 * URL) or the GitHub OAuth app preset (GitHub's documented endpoints; the identity is `GET /user`'s
 * numeric `id` and `login`). The Review page signs in with the authorization code flow and PKCE (S256,
 * plus `state` and, for OpenID Connect, `nonce`); `review-ledger login` with the device authorization
 * grant (RFC 8628). Plain http is accepted only for a loopback provider (a test's or a developer's).
 */

export interface PendingCodeFlow {
  state: string;
  nonce: string | null;
  codeVerifier: string;
  redirectUri: string;
}

const isLoopbackHttp = (u: string): boolean => {
  const url = new URL(u);
  return url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]');
};

/** `user:<x>` when x is a valid principal id, else nothing. */
function principalOf(x: unknown): Principal[] {
  if (typeof x !== 'string' || x.length === 0) return [];
  const p = `user:${x}`;
  return principalSchema.safeParse(p).success ? [p as Principal] : [];
}

const failed = (what: string, err: unknown): DomainError =>
  err instanceof DomainError ? err : new DomainError('sign_in_failed', `sign-in: ${what}: ${(err as Error)?.message ?? String(err)}`.slice(0, 500));

/**
 * GitHub answers token-endpoint errors — `authorization_pending` and `slow_down` while a device sign-in
 * waits, `bad_verification_code`, … — with HTTP 200 and an `error` member (as its docs show), where
 * OAuth 2.0 (RFC 6749 §5.2, RFC 8628 §3.5) says 400. Such an answer is passed on as the 400 it means, so
 * openid-client polls on, slows down or reports the error instead of a missing `access_token`.
 */
const githubTokenErrors: client.CustomFetch = async (url, options) => {
  const res = await fetch(url, options as RequestInit);
  if (res.status !== 200 || !new URL(url).pathname.endsWith('/login/oauth/access_token')) return res;
  const text = await res.text();
  let error = false;
  try {
    error = typeof (JSON.parse(text) as { error?: unknown }).error === 'string';
  } catch {
    // Not JSON: passed on unchanged (openid-client reports it).
  }
  return new Response(text, { status: error ? 400 : 200, headers: res.headers });
};

export class IdentityProvider {
  private configuration: Promise<client.Configuration> | null = null;

  constructor(readonly config: IdentityProviderConfig) {}

  get issuer(): string {
    return this.config.issuer;
  }

  /** Discovered once, on first use (a provider that is down at start does not stop the server). */
  private async client(): Promise<client.Configuration> {
    if (!this.configuration) {
      this.configuration = this.discover().catch((err) => {
        this.configuration = null;
        throw failed(`cannot read the provider's configuration at ${this.config.issuer}`, err);
      });
    }
    return this.configuration;
  }

  private async discover(): Promise<client.Configuration> {
    const c = this.config;
    const auth = c.clientSecret ? client.ClientSecretBasic(c.clientSecret) : client.None();
    const execute = isLoopbackHttp(c.issuer) ? [client.allowInsecureRequests] : [];
    if (c.kind === 'oidc') return client.discovery(new URL(c.issuer), c.clientId, c.clientSecret ?? undefined, auth, { execute });
    // GitHub is OAuth 2.0 without discovery: its endpoints as GitHub documents them; it takes the secret in the body.
    const cfg = new client.Configuration(
      {
        issuer: c.webUrl,
        authorization_endpoint: `${c.webUrl}/login/oauth/authorize`,
        token_endpoint: `${c.webUrl}/login/oauth/access_token`,
        device_authorization_endpoint: `${c.webUrl}/login/device/code`,
      },
      c.clientId,
      c.clientSecret ?? undefined,
      client.ClientSecretPost(c.clientSecret ?? undefined),
    );
    for (const f of execute) f(cfg);
    cfg[client.customFetch] = githubTokenErrors;
    return cfg;
  }

  private scope(): string {
    return this.config.kind === 'oidc' ? ['openid', 'profile', 'email', ...this.config.scopes].join(' ') : 'read:user';
  }

  /** Where to send the browser, and what the callback must be checked against (kept server-side). */
  async authorizationUrl(redirectUri: string): Promise<{ url: URL; pending: PendingCodeFlow }> {
    const cfg = await this.client();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = this.config.kind === 'oidc' ? client.randomNonce() : null;
    const params: Record<string, string> = {
      redirect_uri: redirectUri,
      scope: this.scope(),
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
    };
    if (nonce) params.nonce = nonce;
    return { url: client.buildAuthorizationUrl(cfg, params), pending: { state, nonce, codeVerifier, redirectUri } };
  }

  /** The callback: exchanges the code (state, PKCE and nonce checked by openid-client), then who signed in. */
  async completeCodeFlow(callbackUrl: URL, pending: PendingCodeFlow): Promise<SignInIdentity> {
    const cfg = await this.client();
    let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
    try {
      tokens = await client.authorizationCodeGrant(cfg, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        ...(pending.nonce ? { expectedNonce: pending.nonce, idTokenExpected: true } : {}),
      });
    } catch (err) {
      throw failed('the provider refused the authorization code', err);
    }
    return this.identity(cfg, tokens);
  }

  /** Starts the device authorization grant: the code the person types at the provider. */
  async startDeviceFlow(): Promise<client.DeviceAuthorizationResponse> {
    const cfg = await this.client();
    try {
      return await client.initiateDeviceAuthorization(cfg, { scope: this.scope() });
    } catch (err) {
      throw failed('the provider refused the device authorization request', err);
    }
  }

  /** Polls until the person approved (or the provider refused / the code expired). */
  async completeDeviceFlow(started: client.DeviceAuthorizationResponse, signal?: AbortSignal): Promise<SignInIdentity> {
    const cfg = await this.client();
    let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
    try {
      tokens = await client.pollDeviceAuthorizationGrant(cfg, started, undefined, { signal });
    } catch (err) {
      throw failed('the device sign-in did not complete', err);
    }
    return this.identity(cfg, tokens);
  }

  private async identity(cfg: client.Configuration, tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): Promise<SignInIdentity> {
    if (this.config.kind === 'github') return this.githubIdentity(tokens.access_token);
    const claims = tokens.claims();
    if (!claims) throw new DomainError('sign_in_failed', 'sign-in: the provider returned no ID token');
    let info: Record<string, unknown> = claims;
    if (claims.preferred_username === undefined && claims.email === undefined) {
      try {
        info = { ...(await client.fetchUserInfo(cfg, tokens.access_token, claims.sub)), ...claims };
      } catch (err) {
        throw failed('the provider refused the userinfo request', err);
      }
    }
    const candidates = [...principalOf(info.preferred_username), ...(info.email_verified === true ? principalOf(info.email) : []), ...principalOf(claims.sub)];
    return { issuer: claims.iss, subject: claims.sub, candidates: [...new Set(candidates)] };
  }

  /** GitHub: `GET /user` with the user's token names them: the numeric id is the subject (logins can be renamed). */
  private async githubIdentity(accessToken: string): Promise<SignInIdentity> {
    if (this.config.kind !== 'github') throw new Error('not github');
    const res = await fetch(`${this.config.apiUrl}/user`, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'review-ledger' },
    }).catch((err) => {
      throw failed('cannot reach the GitHub API', err);
    });
    if (!res.ok) throw new DomainError('sign_in_failed', `sign-in: GitHub answered GET /user with ${res.status}`);
    const user = (await res.json()) as { id?: unknown; login?: unknown };
    if (typeof user.id !== 'number' || typeof user.login !== 'string') throw new DomainError('sign_in_failed', 'sign-in: GitHub GET /user returned no numeric id and login');
    return { issuer: this.config.webUrl, subject: String(user.id), candidates: principalOf(user.login) };
  }
}

const providers = new WeakMap<object, IdentityProvider>();

/** The ledger's one provider client (discovery cached), or null when none is configured. */
export function identityProviderFor(ledger: { operator: { identityProvider: IdentityProviderConfig | null } }): IdentityProvider | null {
  const cfg = ledger.operator.identityProvider;
  if (!cfg) return null;
  let p = providers.get(ledger);
  if (!p) providers.set(ledger, (p = new IdentityProvider(cfg)));
  return p;
}
