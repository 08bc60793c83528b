import { createPrivateKey } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { DomainError } from './domain-error';
import { Slot } from './slots';

/**
 * Operator configuration: what only the person who runs the server may decide, because it reaches the
 * host (commands it executes, folders it reads, where its forge credential goes). It comes from a JSON
 * file named by `--config` / REVIEW_LEDGER_CONFIG and a few flags — never from an RPC field, a
 * repository's own files or the event log (a tenant can write all three).
 */

/** Limits of one sandboxed render run (SPEC §16). Every default is documented here and in docs/configuration.md. */
export const DEFAULT_SANDBOX_LIMITS = {
  /** CPU seconds (RLIMIT_CPU): past it the kernel sends SIGXCPU, then SIGKILL. */
  cpuSeconds: 300,
  /** Writable private memory of each process (RLIMIT_DATA), bytes. */
  memoryBytes: 4 * 1024 ** 3,
  /** Processes and threads inside the sandbox (RLIMIT_NPROC, counted in its own user namespace). */
  processes: 256,
  /** Largest single file the command may write (RLIMIT_FSIZE), bytes. */
  fileBytes: 256 * 1024 ** 2,
  /** Total size of the PNGs collected from the output folder, bytes. */
  outputBytes: 512 * 1024 ** 2,
  /** Size of the sandbox's private /tmp (a tmpfs), bytes. */
  tmpBytes: 512 * 1024 ** 2,
} as const;
export type SandboxLimits = { -readonly [K in keyof typeof DEFAULT_SANDBOX_LIMITS]: number };

/** Bytes a workspace's repos may take under the repo root, together (`repoQuotaBytes`); a clone past it is stopped. */
export const DEFAULT_REPO_QUOTA_BYTES = 8 * 1024 ** 3;

/**
 * Bytes one workspace's event log may take before its members' commands are refused (`logQuotaBytes`;
 * SQLite, where every workspace's log shares the data dir's disk): without it one member filling the log
 * (1 MiB requests in a loop) filled the disk for every tenant. A review of 200k events takes ~100 MB.
 */
export const DEFAULT_LOG_QUOTA_BYTES = 4 * 1024 ** 3;

/**
 * Workspaces one owner may create over RPC (`maxWorkspacesPerOwner`), counting every workspace created
 * from a workspace it created. Each workspace holds open store files: 300 `createWorkspace` calls from
 * one owner held 4,270 open files and stopped a server on `nofile=1024` from booting. The local
 * operator's CLI is not counted.
 */
export const DEFAULT_MAX_WORKSPACES_PER_OWNER = 20;

/**
 * Index / compute jobs at once in one server (`jobs.running`: the cores, at least 2) and waiting per
 * workspace (`jobs.waitingPerWorkspace`); why: compute/job-slots.ts. Under a CPU quota smaller than the
 * cores the process sees (a container), set `running` to the quota.
 */
export const DEFAULT_JOB_SLOTS = { running: Math.max(2, os.availableParallelism()), waitingPerWorkspace: 64 } as const;

/**
 * `postgres.queryTimeoutMs`: how long one PostgreSQL statement may take before the call answers the
 * retryable store_unavailable (a partition or a lock must not hold a command, or /health, for as long
 * as it lasts); why and how: PostgresBackendOptions.queryTimeoutMs.
 */
export const DEFAULT_POSTGRES_BOUNDS = {
  queryTimeoutMs: 10_000,
  /**
   * How long `serve` keeps trying to open a PostgreSQL store that is away (refused, reset, starting up)
   * before it exits: a fleet restarted during a database restart or failover comes up when the database
   * does instead of exiting at once. 0: exit at the first failure. Other failures exit at once.
   */
  startWaitMs: 60_000,
} as const;

/** What one WebSocket connection may hold in server memory (SPEC §16); `connections` in the config file. */
export const DEFAULT_CONNECTION_BOUNDS = {
  /**
   * Bytes of requests read but not yet answered plus answers the client has not taken, past which the
   * server stops reading the connection (TCP backpressure reaches the client).
   */
  budgetBytes: 1024 * 1024,
  /** A connection that keeps more than 256 KiB unsent this long is closed (code 4008, `slow_reader`). */
  slowReaderMs: 30_000,
  /**
   * A WebSocket on which no request has authenticated this long after the upgrade is closed (code 4001,
   * `unauthorized`): token-less sockets used to live forever, and ~1,000 of them exhausted `nofile=1024`.
   */
  unauthenticatedMs: 30_000,
  /**
   * Connections one client (an IPv4 address, an IPv6 /64) may hold open at once; past it a new one is
   * closed before anything is read (server/connection-guard.ts). One address holding 20,000 token-less
   * sockets used to take every file descriptor: nobody else was answered.
   */
  maxPerAddress: 256,
  /**
   * On SIGTERM / SIGINT, how long requests already read get to be answered before their connections are
   * cut (server/graceful-shutdown.ts); new requests are refused meanwhile with `server_shutting_down`.
   */
  drainMs: 10_000,
} as const;
/**
 * The process's soft `nofile` limit (Linux: /proc/self/limits; elsewhere the common 1024). Open
 * workspaces take at most half of it (workspaces/registry.ts) and client connections at most 3/8
 * (server/connection-guard.ts); the rest is for git, child processes and the files a request opens.
 */
export function softOpenFileLimit(): number {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    if (m) return m[1] === 'unlimited' ? 1 << 20 : Number(m[1]);
  } catch {
    // Not Linux: assume the common 1024.
  }
  return 1024;
}
/** An IPv4 or IPv6 address literal (zod's checks: this layer does not import node:net). */
const IP_LITERAL = z.union([z.ipv4(), z.ipv6()]);

/** `maxConnections`: connections open at once from all clients; default from the file limit (defaultMaxConnections). */
export type ConnectionBounds = { -readonly [K in keyof typeof DEFAULT_CONNECTION_BOUNDS]: number } & { maxConnections: number };

/**
 * The default `connections.maxConnections`: 3/8 of the soft `nofile` limit (at least 64). Open workspaces
 * take at most half of it (workspaces/registry.ts), so a full house of connections still leaves files for
 * the stores, git and child processes: 384 under `nofile=1024`, 7,500 under 20,000.
 */
export function defaultMaxConnections(): number {
  return Math.max(64, Math.floor((softOpenFileLimit() * 3) / 8));
}

const renderEntrySchema = z
  .object({
    /** Shell command run at the root of a throwaway worktree, inside the sandbox. */
    command: z.string().min(1).max(4000).optional(),
    outputDir: z.string().min(1).max(4000).optional(),
    timeoutMs: z.number().int().positive().max(3_600_000).optional(),
    paths: z.array(z.string().min(1).max(1000)).max(1000).optional(),
    /** Honour `visual` in the repo's own `.review-ledger.json` (read at the base commit). */
    repoConfig: z.boolean().optional(),
  })
  .strict()
  .refine((e) => !e.command || e.outputDir, { message: 'outputDir: required with command' })
  .refine((e) => e.command || e.repoConfig, { message: 'an entry needs a command (with outputDir) or "repoConfig": true' });
export type OperatorRenderEntry = z.infer<typeof renderEntrySchema>;

const positive = z.number().int().positive();

const clientIdSchema = z.string().min(1).max(500);
const clientSecretSchema = z.string().min(1).max(2000);

/**
 * The identity provider humans sign in with (docs/security.md "Sign-in"). With one configured, a human's
 * token or session comes only from that person's own sign-in; without one, admins mint human tokens
 * (local mode, first run, demo) and the audit marks those acts `admin-provisioned`.
 */
export const identityProviderSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('oidc'),
      /** The issuer URL; its `/.well-known/openid-configuration` is read on first sign-in. */
      issuer: z.string().url().max(2000),
      clientId: clientIdSchema,
      /** Or REVIEW_LEDGER_IDP_CLIENT_SECRET; absent for a public client (PKCE only). */
      clientSecret: clientSecretSchema.optional(),
      /** Extra scopes besides `openid profile email`. */
      scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/, 'a scope token')).max(20).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('github'),
      clientId: clientIdSchema,
      clientSecret: clientSecretSchema.optional(),
      /** GitHub's web origin (GitHub Enterprise: https://<host>); default https://github.com. */
      webUrl: z.string().url().max(2000).optional(),
      /** GitHub's REST API root; default https://api.github.com (GitHub Enterprise: https://<host>/api/v3). */
      apiUrl: z.string().url().max(2000).optional(),
    })
    .strict(),
]);
export type IdentityProviderFile = z.infer<typeof identityProviderSchema>;

/** A session lasts at most this long (seconds) unless the operator sets `sessionTtlSeconds`. */
export const DEFAULT_SESSION_TTL_SECONDS = 3600;

export type IdentityProviderConfig =
  | { kind: 'oidc'; issuer: string; clientId: string; clientSecret: string | null; scopes: string[] }
  | { kind: 'github'; issuer: string; clientId: string; clientSecret: string | null; webUrl: string; apiUrl: string };

/**
 * Caps of TypeScript's checker in a review computation (defaults: CHECKER_LIMITS in
 * src/codegraph/checker/type-edges.ts, docs/configuration.md "Operator config file"). The work caps are deterministic; `safetyMs`
 * is the wall-clock security bound past which the whole review is syntax-only.
 */
export const typeEdgeLimitsSchema = z
  .object({
    maxFiles: z.number().int().min(0).max(100_000),
    maxProgramFiles: z.number().int().min(1).max(100_000),
    maxProgramChars: z.number().int().min(1).max(1_000_000_000),
    maxQueries: z.number().int().min(0).max(1_000_000_000),
    maxTypeWork: z.number().int().min(0).max(1_000_000_000),
    safetyMs: z.number().int().min(100).max(3_600_000),
    heapMb: z.number().int().min(16).max(65_536),
  })
  .partial()
  .strict();
export type TypeEdgeLimits = z.infer<typeof typeEdgeLimitsSchema>;

export const operatorConfigSchema = z
  .object({
    /** Folder RPC-registered repos live in (cloned there by the server); default `<dataDir>/repos`. */
    repoRoot: z.string().min(1).max(4000).optional(),
    /** Bytes one workspace's repos may take under the repo root; a clone past it is stopped (default 8 GiB). */
    repoQuotaBytes: z.number().int().min(1024 * 1024).max(2 ** 50).optional(),
    /** Bytes one workspace's event log may take before member-level commands are refused (default 4 GiB; SQLite). */
    logQuotaBytes: z.number().int().min(1024 * 1024).max(2 ** 50).optional(),
    /** Workspaces one owner may create over RPC (default 20). */
    maxWorkspacesPerOwner: z.number().int().min(0).max(100_000).optional(),
    /**
     * Workspaces whose stores stay open at once (default: half the process's open-file limit over 12);
     * past it the least recently used idle one closes, and opens again on its next request.
     */
    maxOpenWorkspaces: z.number().int().min(1).max(100_000).optional(),
    /** Seconds an unused workspace's store stays open (default 300). */
    workspaceIdleSeconds: z.number().int().min(1).max(86_400).optional(),
    /**
     * The audit checkpoint signing key (Ed25519, PKCS#8 PEM), shared by every server on one store: all
     * of them sign one checkpoint chain. Default: `<dataDir>/audit-ed25519.pem`, created on first use.
     */
    auditKeyFile: z.string().min(1).max(4000).optional(),
    /**
     * The 256-bit secret token secrets are derived from (so an idempotent issueToken replays the same
     * token on any server). Default: `<dataDir>/server.key`, created on first use.
     */
    serverKeyFile: z.string().min(1).max(4000).optional(),
    /** GitHub Enterprise hosts (exact host names) the GitHub credential may be sent to, besides github.com. */
    githubEnterpriseHosts: z.array(z.string().min(1).max(253)).max(100).optional(),
    /** Origins (scheme://host[:port]) besides the server's own that may open the WebSocket /rpc. */
    allowedOrigins: z.array(z.string().min(1).max(300)).max(100).optional(),
    /** Host names (no port) browsers may reach this server by, besides IP literals, localhost and the listen host. */
    allowedHosts: z.array(z.string().regex(/^[A-Za-z0-9.-]{1,253}$/, 'a host name, without scheme or port')).max(100).optional(),
    /** Addresses of reverse proxies whose X-Forwarded-For names the client (per-client sign-in limits). */
    trustedProxies: z.array(z.string().refine((a) => IP_LITERAL.safeParse(a).success, 'an IP address')).max(100).optional(),
    /** TypeScript's checker in review computations: `false` = syntax-only edges, or its caps. */
    typeEdges: z.union([z.literal(false), typeEdgeLimitsSchema]).optional(),
    /** Where humans sign in (docs/security.md "Sign-in"); absent: tokens only, minted by admins. */
    identityProvider: identityProviderSchema.optional(),
    /** The URL browsers reach this server by (the sign-in redirect URI is `<publicUrl>/auth/callback`); default the listen address. */
    publicUrl: z.string().url().max(2000).optional(),
    /** How long a sign-in session or a CLI sign-in token lasts, seconds (default 3600, at most 7 days). */
    sessionTtlSeconds: z.number().int().min(60).max(7 * 24 * 3600).optional(),
    audit: z
      .object({
        /**
         * A directory outside the workspace databases (best on another volume or machine) to which every
         * signed checkpoint is appended as a receipt; `audit verify` compares the log with it, and the
         * server refuses to sign a store that went backwards relative to it (docs/audit.md). Default: none.
         */
        witnessDir: z.string().min(1).max(4000).optional(),
      })
      .strict()
      .optional(),
    /** Index/compute jobs at once in this server, and waiting per workspace (compute/job-slots.ts). */
    jobs: z.object({ running: z.number().int().min(1).max(1024), waitingPerWorkspace: z.number().int().min(0).max(100_000) }).partial().strict().optional(),
    /** The PostgreSQL store's bounds (DEFAULT_POSTGRES_BOUNDS). */
    postgres: z.object({ queryTimeoutMs: z.number().int().min(100).max(3_600_000), startWaitMs: z.number().int().min(0).max(3_600_000) }).partial().strict().optional(),
    connections: z.object({ budgetBytes: z.number().int().min(64 * 1024).max(1024 ** 3), slowReaderMs: z.number().int().min(100).max(3_600_000), unauthenticatedMs: z.number().int().min(100).max(600_000), maxPerAddress: z.number().int().min(1).max(1_000_000), maxConnections: z.number().int().min(1).max(1_000_000), drainMs: z.number().int().min(0).max(600_000) }).partial().strict().optional(),
    render: z
      .object({
        /** Per repo, keyed `<workspaceId>/<repoId>`. */
        repos: z.record(z.string().regex(/^[a-z0-9][a-z0-9-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/, 'keys are "<workspaceId>/<repoId>"'), renderEntrySchema).optional(),
        sandbox: z
          .object({
            /** The bubblewrap binary (default `bwrap` on PATH). */
            bwrap: z.string().min(1).max(4000).optional(),
            /** Extra host folders mounted read-only (e.g. a toolchain outside /usr). */
            readOnlyPaths: z.array(z.string().min(1).max(4000)).max(100).optional(),
            /** When the server runs as root: the uid/gid the sandbox runs as (default 65534, nobody). */
            uid: z.number().int().min(1).max(2 ** 31).optional(),
            limits: z.object({ cpuSeconds: positive, memoryBytes: positive, processes: positive, fileBytes: positive, outputBytes: positive, tmpBytes: positive }).partial().strict().optional(),
          })
          .strict()
          .optional(),
        /** Run render commands with no sandbox. Only for a host where every repo is trusted. */
        unsafeWithoutSandbox: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type OperatorConfigFile = z.infer<typeof operatorConfigSchema>;

export interface RenderSandboxConfig {
  /** `bwrap`: bubblewrap namespaces; `none`: the operator's explicit unsafe choice. */
  kind: 'bwrap' | 'none';
  bwrap: string;
  readOnlyPaths: string[];
  uid: number;
  limits: SandboxLimits;
}

export interface OperatorConfig {
  repoRoot: string;
  /** The operator-provided audit signing key file (absolute), or null: `<dataDir>/audit-ed25519.pem`. */
  auditKeyFile: string | null;
  /** The operator-provided token-derivation secret (absolute), or null: `<dataDir>/server.key`. */
  serverKeyFile: string | null;
  repoQuotaBytes: number;
  logQuotaBytes: number;
  maxWorkspacesPerOwner: number;
  /** Open workspace stores at once (null: from the file limit, see registry.ts defaultMaxOpenWorkspaces). */
  maxOpenWorkspaces: number | null;
  workspaceIdleSeconds: number;
  githubEnterpriseHosts: string[];
  allowedOrigins: string[];
  allowedHosts: string[];
  /** Reverse proxies (IP addresses, lowercase) whose X-Forwarded-For names the client (security/client-key.ts). */
  trustedProxies: string[];
  connections: ConnectionBounds;
  /** Index/compute jobs running at once in this server and waiting per workspace (compute/job-slots.ts). */
  jobs: { running: number; waitingPerWorkspace: number };
  postgres: { queryTimeoutMs: number; startWaitMs: number };
  /** `false`: syntax-only edges; else the caps that differ from the defaults (empty: all defaults). */
  typeEdges: false | TypeEdgeLimits;
  renderRepos: Record<string, OperatorRenderEntry>;
  sandbox: RenderSandboxConfig;
  /** The audit witness directory (`audit.witnessDir`, REVIEW_LEDGER_AUDIT_WITNESS_DIR), absolute; null: none. */
  auditWitnessDir: string | null;
  /** The identity provider humans sign in with, or null (tokens only; human acts are admin-provisioned). */
  identityProvider: IdentityProviderConfig | null;
  /** `publicUrl` without a trailing slash, or null (the listen address). */
  publicUrl: string | null;
  sessionTtlSeconds: number;
}

export interface OperatorOverrides {
  configFile?: string;
  auditKeyFile?: string;
  serverKeyFile?: string;
  unsafeRenderWithoutSandbox?: boolean;
  repoRoot?: string;
  githubEnterpriseHosts?: string[];
}

/** Reads and validates the operator file (when named); flags override it. Errors name the file and field. */
export function loadOperatorConfig(dataDir: string, overrides: OperatorOverrides = {}, env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  const file = overrides.configFile ?? env.REVIEW_LEDGER_CONFIG;
  let parsed: OperatorConfigFile = {};
  if (file) {
    let json: unknown;
    try {
      json = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new DomainError('invalid_config', `config: cannot read ${file}: ${(err as Error).message}`);
    }
    const r = operatorConfigSchema.safeParse(json);
    if (!r.success) throw new DomainError('invalid_config', `config ${file}: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
    parsed = r.data;
  }
  const unsafe = overrides.unsafeRenderWithoutSandbox ?? (env.REVIEW_LEDGER_UNSAFE_RENDER_WITHOUT_SANDBOX === '1' || parsed.render?.unsafeWithoutSandbox === true);
  const enterprise = [...(parsed.githubEnterpriseHosts ?? []), ...(overrides.githubEnterpriseHosts ?? []), ...splitList(env.REVIEW_LEDGER_GITHUB_ENTERPRISE_HOSTS)];
  const keyFile = overrides.auditKeyFile ?? env.REVIEW_LEDGER_AUDIT_KEY_FILE ?? parsed.auditKeyFile;
  const serverKeyFile = overrides.serverKeyFile ?? env.REVIEW_LEDGER_SERVER_KEY_FILE ?? parsed.serverKeyFile;
  const witnessDir = env.REVIEW_LEDGER_AUDIT_WITNESS_DIR || parsed.audit?.witnessDir;
  return {
    identityProvider: parsed.identityProvider ? identityProviderOf(parsed.identityProvider, env) : null,
    publicUrl: parsed.publicUrl ? parsed.publicUrl.replace(/\/+$/, '') : null,
    sessionTtlSeconds: parsed.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS,
    auditWitnessDir: witnessDir ? path.resolve(witnessDir) : null,
    repoRoot: path.resolve(overrides.repoRoot ?? env.REVIEW_LEDGER_REPO_ROOT ?? parsed.repoRoot ?? path.join(dataDir, 'repos')),
    auditKeyFile: keyFile ? checkAuditKeyFile(path.resolve(keyFile)) : null,
    serverKeyFile: serverKeyFile ? path.resolve(serverKeyFile) : null,
    repoQuotaBytes: parsed.repoQuotaBytes ?? DEFAULT_REPO_QUOTA_BYTES,
    logQuotaBytes: parsed.logQuotaBytes ?? DEFAULT_LOG_QUOTA_BYTES,
    maxWorkspacesPerOwner: parsed.maxWorkspacesPerOwner ?? DEFAULT_MAX_WORKSPACES_PER_OWNER,
    maxOpenWorkspaces: parsed.maxOpenWorkspaces ?? null,
    workspaceIdleSeconds: parsed.workspaceIdleSeconds ?? 300,
    githubEnterpriseHosts: [...new Set(enterprise.map((h) => h.trim().toLowerCase()).filter(Boolean))],
    allowedOrigins: (parsed.allowedOrigins ?? []).map((o) => o.replace(/\/+$/, '').toLowerCase()),
    allowedHosts: (parsed.allowedHosts ?? []).map((h) => h.toLowerCase().replace(/\.$/, '')),
    trustedProxies: (parsed.trustedProxies ?? []).map((a) => a.toLowerCase()),
    connections: { ...DEFAULT_CONNECTION_BOUNDS, maxConnections: defaultMaxConnections(), ...(parsed.connections ?? {}) },
    jobs: { ...DEFAULT_JOB_SLOTS, ...(parsed.jobs ?? {}) },
    postgres: { ...DEFAULT_POSTGRES_BOUNDS, ...(parsed.postgres ?? {}) },
    typeEdges: parsed.typeEdges ?? {},
    renderRepos: parsed.render?.repos ?? {},
    sandbox: {
      kind: unsafe ? 'none' : 'bwrap',
      bwrap: parsed.render?.sandbox?.bwrap ?? 'bwrap',
      readOnlyPaths: parsed.render?.sandbox?.readOnlyPaths ?? [],
      uid: parsed.render?.sandbox?.uid ?? 65534,
      limits: { ...DEFAULT_SANDBOX_LIMITS, ...(parsed.render?.sandbox?.limits ?? {}) },
    },
  };
}

/**
 * An operator-provided signing key must exist and be an Ed25519 private key: a server that made its
 * own instead would sign a chain the others cannot continue (docs/stores.md, several servers).
 */
function checkAuditKeyFile(file: string): string {
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new DomainError('invalid_config', `auditKeyFile (REVIEW_LEDGER_AUDIT_KEY_FILE): cannot read ${file}: ${(err as Error).message}`);
  }
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch (err) {
    throw new DomainError('invalid_config', `auditKeyFile (REVIEW_LEDGER_AUDIT_KEY_FILE): ${file} is not a PEM private key: ${(err as Error).message}`);
  }
  if (type !== 'ed25519') throw new DomainError('invalid_config', `auditKeyFile (REVIEW_LEDGER_AUDIT_KEY_FILE): ${file} holds a ${type} key, not Ed25519`);
  return file;
}

function identityProviderOf(p: IdentityProviderFile, env: NodeJS.ProcessEnv): IdentityProviderConfig {
  const clientSecret = p.clientSecret ?? (env.REVIEW_LEDGER_IDP_CLIENT_SECRET || null);
  if (p.kind === 'oidc') return { kind: 'oidc', issuer: p.issuer.replace(/\/+$/, ''), clientId: p.clientId, clientSecret, scopes: p.scopes ?? [] };
  if (!clientSecret) throw new DomainError('invalid_config', 'identityProvider.clientSecret: required for kind "github" (or set REVIEW_LEDGER_IDP_CLIENT_SECRET)');
  const webUrl = (p.webUrl ?? 'https://github.com').replace(/\/+$/, '');
  return { kind: 'github', issuer: webUrl, clientId: p.clientId, clientSecret, webUrl, apiUrl: (p.apiUrl ?? 'https://api.github.com').replace(/\/+$/, '') };
}

const splitList = (v: string | undefined): string[] => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []);

/** The operator config of a ledger built without one (tests, embedded use): nothing enabled, sandbox on. */
export const defaultOperatorConfig = (dataDir: string): OperatorConfig => loadOperatorConfig(dataDir, {}, {});

/** Operator-provided audit key files by data dir (a Ledger registers its own: configureAuditKeyFile). */
const auditKeyFiles = new Map<string, string>();

/**
 * Makes every audit keyring of `dataDir` use the operator's key file (`auditKeyFile`,
 * REVIEW_LEDGER_AUDIT_KEY_FILE) instead of `<dataDir>/audit-ed25519.pem`. The Ledger calls it for its
 * data dir, so the server, the CLI and the audit reads (which know only a workspace's folder) all sign
 * and verify with the same key.
 */
export function configureAuditKeyFile(dataDir: string, file: string | null): void {
  if (file) auditKeyFiles.set(path.resolve(dataDir), path.resolve(file));
  else auditKeyFiles.delete(path.resolve(dataDir));
}

export const configuredAuditKeyFile = (dataDir: string): string | undefined => auditKeyFiles.get(path.resolve(dataDir));

/** Name of the ledger service holding the OperatorConfig (commands read it through CommandEnv.services). */
export const OPERATOR_CONFIG_SERVICE = new Slot<OperatorConfig>('operator.config');
