import { ACCESS_GUARD_SERVICE, accessGuardFor } from './workspaces/access-guard';
import { DomainError } from './domain-error';
import { roleAtLeast } from './events/roles';
import { CommandExecutor, CommandEnvelope, CommandOutcome } from './commands/kernel';
import { commandByName } from './commands/registry';
import { createWorkspace } from './commands/create-workspace';
import { assertMayMintFor, deriveToken, issueToken, issueTokenRequestSchema } from './commands/issue-token';
import { checkAccess, type CommandDefinition } from './commands/kernel';
import { assertKnownFields, assertNoReservedKeys } from './commands/payload-keys';
import { placeRemoteRegistration } from './commands/register-repo';
import { loadServerKey } from './workspaces/server-key';
import { canonicalJson } from './events/canonical-json';
import { principalSchema } from './events/envelope';
import type { z } from 'zod';
import type { LedgerConfig } from './config';
import { StoreFactory, WorkspaceHandle, WorkspaceRegistry, sqliteStoreFactory } from './workspaces/registry';
import { kurrentdbStoreFactory, postgresStoreFactory, requireUrl } from './workspaces/store-factories';
import { workspaceIdSchema } from './events/catalogue/workspace';
import { validationError } from './domain-error';
import { assertIdempotencyKey, deriveEventId } from './events/ids';
import { configureAuditKeyFile, defaultOperatorConfig, OPERATOR_CONFIG_SERVICE, type OperatorConfig } from './operator-config';
import { LedgerServices } from './slots';

export interface LedgerOptions {
  clock?: () => Date;
  storeFactory?: StoreFactory;
  services?: LedgerServices;
  /**
   * Called on every workspace handle as it opens: the entry points attach the read side with it
   * (src/readmodels' attachReadModels), so queries answer from checkpointed read models.
   */
  onOpenWorkspace?: (handle: WorkspaceHandle) => void;
}

/**
 * The application core every edge (CLI, JSON-RPC, MCP, webhooks) goes through: one code path from a
 * validated request to the command kernel, with the workspace resolved (and refused) first.
 */
export class Ledger {
  readonly workspaces: WorkspaceRegistry;
  readonly executor: CommandExecutor;
  /** Commands in run() now, and who waits for there to be none (commandsSettled). */
  private running = 0;
  private settledWaiters: Array<() => void> = [];
  readonly clock: () => Date;
  readonly services: LedgerServices;

  constructor(readonly config: LedgerConfig, options: LedgerOptions = {}) {
    this.clock = options.clock ?? (() => new Date());
    this.services = options.services ?? new LedgerServices();
    // Commands reach the operator's decisions through this service; a ledger built without them gets
    // the safe defaults (nothing enabled, sandbox on).
    if (!this.services.has(OPERATOR_CONFIG_SERVICE)) this.services.set(OPERATOR_CONFIG_SERVICE, config.operator ?? defaultOperatorConfig(config.dataDir));
    // The audit signing key: the operator's shared key file when configured (several servers, one chain).
    configureAuditKeyFile(config.dataDir, this.operator.auditKeyFile ?? null);
    // The read side of every workspace (the entry points pass src/readmodels' one): queries answer from
    // the checkpointed read models where they have one, and by folding the log otherwise.
    // Stores open on first use and close when idle or past the operator's bound (an fd budget).
    this.workspaces = new WorkspaceRegistry(config.dataDir, options.storeFactory ?? storeFactoryFor(config), undefined, options.onOpenWorkspace, {
      maxOpen: this.operator.maxOpenWorkspaces ?? undefined,
      idleMs: this.operator.workspaceIdleSeconds * 1000,
    });
    this.executor = new CommandExecutor(this.clock, this.services);
    // Running index/compute jobs stop when the token that started them is revoked (kernel.ts).
    if (!this.services.has(ACCESS_GUARD_SERVICE)) this.services.set(ACCESS_GUARD_SERVICE, accessGuardFor(this));
  }

  get operator(): OperatorConfig {
    return this.services.get(OPERATOR_CONFIG_SERVICE)!;
  }

  /** Resolves a workspace; unknown or malformed ids are refused before any store opens. */
  workspace(id: unknown): Promise<WorkspaceHandle> {
    return this.workspaces.open(id);
  }

  /**
   * The one entry path: every transport (RPC, MCP, the CLI, webhooks, the CQRS bus) runs a registry command
   * through here, once. `workspace` is an id (opened and held for the command) or a handle the caller
   * already holds. A command with a special need before the kernel (minting a token's secret, creating a
   * workspace, placing a tenant's repo) has its own entry step (ENTRY_STEPS below); every other one goes
   * straight to the kernel, which checks access and payload and runs validate → replay → prepare → decide →
   * append.
   */
  async run(command: string, workspace: unknown, envelope: CommandEnvelope, payload: unknown, edge: CommandEdge = OPERATOR_EDGE): Promise<CommandOutcome> {
    const def = commandByName.get(command);
    if (!def) throw new DomainError('unknown_command', `method: "${String(command).slice(0, 100)}" is not a command`);
    const step = ENTRY_STEPS[def.name];
    this.running++;
    try {
      if (!roleAtLeast(def.access.minRole, 'admin') && def.name !== 'createWorkspace') await this.assertLogQuota(workspace);
      return await (step ? step(this, { def, workspace, envelope, payload, edge }) : this.execute(def, workspace, envelope, payload));
    } finally {
      if (--this.running === 0) for (const settled of this.settledWaiters.splice(0)) settled();
    }
  }

  /** How many commands run now (every transport's). */
  commandsRunning(): number {
    return this.running;
  }

  /**
   * Resolves once no command runs (at once when none does). A server's shutdown awaits it before the stores
   * close: a command whose client left while it ran (a proxy's timeout, a load generator's end) still
   * finishes — its answer is there for the client's retry with the same key — instead of meeting a closed
   * store halfway (its append made, its follow-up refused).
   */
  commandsSettled(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  /**
   * Refuses a member-level command (log_quota_exceeded) once the workspace's log takes logQuotaBytes: one
   * member must not fill the disk every tenant's log shares. Admin-level commands stay open, so the abuser's
   * token can be revoked and the member removed. Checked before the command runs (the one that crosses the
   * quota is taken: it overshoots by the requests in flight at that moment, ~1 MiB each at most); only where the store can say its size (SQLite; PostgreSQL from its first background sum).
   */
  private async assertLogQuota(workspace: unknown): Promise<void> {
    const handle = isHandle(workspace) ? workspace : await this.workspaces.open(workspace);
    const quota = this.operator.logQuotaBytes;
    const bytes = handle.store.logBytes?.(quota);
    if (bytes !== undefined && bytes >= quota) {
      throw new DomainError('log_quota_exceeded', `workspace "${handle.id}": its event log takes ${bytes} bytes, at or past logQuotaBytes (${quota}): commands that add to it are refused until the operator raises the quota (admins may still revoke tokens and remove members)`, { quotaBytes: quota, usedBytes: bytes });
    }
  }

  /**
   * Whether `command` takes effect only through the kernel's append on the caller's own workspace, after
   * nothing but a cheap prepare free of outside effects: no entry step (which may create another workspace
   * or clone a repo first) and no long `prepare`. Only such a command may run on a token check that took
   * the workspace state from the store's freshness (CommandEnvelope.accessCheckedAt): the kernel stands
   * behind the check at its append.
   */
  guardsAccessAtAppend(command: string): boolean {
    const def = commandByName.get(command);
    return !!def && !ENTRY_STEPS[def.name] && (!def.prepare || def.prepareAgainOnConflict === true);
  }

  /** The kernel on `workspace` (a handle, or an id opened and held until the command and its job end). */
  async execute(def: AnyCommand, workspace: unknown, envelope: CommandEnvelope, payload: unknown): Promise<CommandOutcome> {
    if (isHandle(workspace)) return this.executor.execute(def, workspace, envelope, payload);
    const { handle, release } = await this.workspaces.acquire(workspace);
    try {
      return await this.executor.execute(def, handle, envelope, payload);
    } finally {
      release();
    }
  }

  /**
   * `issueToken`'s entry step: the secret is derived from the server key and the idempotency key (so a
   * replay answers with byte-identical output), the command records only its hash, and the answer carries
   * the token once.
   */
  async issueToken(workspace: unknown, envelope: CommandEnvelope, request: unknown): Promise<CommandOutcome & { token: string }> {
    admit(issueToken, envelope, issueTokenRequestSchema, request);
    const parsed = issueTokenRequestSchema.safeParse(request);
    if (!parsed.success) throw validationError(parsed.error.issues);
    assertMayMintFor(this.operator, envelope.principal, parsed.data.principal);
    const key = assertIdempotencyKey(envelope.idempotencyKey, this.clock());
    const workspaceId = isHandle(workspace) ? workspace.id : workspaceIdSchema.parse(workspace);
    const derived = deriveToken(loadServerKey(this.config.dataDir, this.operator.serverKeyFile), workspaceId, key);
    const outcome = await this.execute(issueToken, workspace, envelope, { ...parsed.data, tokenId: derived.tokenId, tokenHash: derived.tokenHash });
    const response = { ...outcome.response, result: { ...(outcome.response.result as object), token: derived.token } };
    return { ...outcome, response, json: canonicalJson(response), token: derived.token };
  }

  /**
   * `createWorkspace`'s entry step: registers the workspace in the catalogue, then records WorkspaceCreated
   * in its own stream. For a tenant (`from`: the workspace it asks from) the new workspace counts against
   * the operator's per-owner quota and the answer carries an owner token for it (tokens are
   * workspace-scoped; derived from the same idempotency key, so a replay returns the same bytes). The
   * local operator's CLI passes no `from`.
   */
  async createWorkspace(envelope: CommandEnvelope, payload: unknown, from?: { workspaceId: string }): Promise<CommandOutcome> {
    admit(createWorkspace, envelope, createWorkspace.input, payload);
    const parsed = createWorkspace.input.safeParse(payload);
    if (!parsed.success) throw validationError(parsed.error.issues);
    workspaceIdSchema.parse(parsed.data.workspaceId);
    // Validate the key before the catalogue is touched: a refused request creates nothing.
    const key = assertIdempotencyKey(envelope.idempotencyKey, this.clock());
    const name = parsed.data.name ?? parsed.data.workspaceId;
    if (from) this.workspaces.registerWithin(parsed.data.workspaceId, name, this.clock().toISOString(), this.workspaces.ownerKeyOf(from.workspaceId, envelope.principal), this.operator.maxWorkspacesPerOwner);
    else this.workspaces.register(parsed.data.workspaceId, name, this.clock().toISOString());
    const { handle: ws, release } = await this.workspaces.acquire(parsed.data.workspaceId);
    let created: CommandOutcome;
    try {
      await assertSameCreator(ws, key, envelope);
      created = await this.executor.execute(createWorkspace, ws, envelope, parsed.data);
    } finally {
      release();
    }
    if (!from) return created;
    const workspaceId = (created.response.result as { workspaceId: string }).workspaceId;
    // Index 1000: far past the ids the createWorkspace batch itself derives from the key.
    const issued = await this.issueToken(workspaceId, { ...envelope, idempotencyKey: deriveEventId(key, 1000) }, { principal: envelope.principal, role: 'owner', label: 'created with the workspace' });
    const response = { ...created.response, result: { workspaceId, token: issued.token, tokenId: (issued.response.result as { tokenId: string }).tokenId } };
    return { ...created, response, json: canonicalJson(response) };
  }

  async close(): Promise<void> {
    await this.workspaces.close();
  }
}

export function storeFactoryFor(config: LedgerConfig): StoreFactory {
  switch (config.store) {
    case 'sqlite':
      return sqliteStoreFactory(config.synchronous);
    case 'postgres':
      // --synchronous NORMAL/OFF: commits do not wait for their WAL flush (PostgresBackendOptions.synchronousCommit).
      return postgresStoreFactory(requireUrl(config.databaseUrl, 'postgres', 'DATABASE_URL', '--database-url'), undefined, {
        migrate: config.migrateSchema ?? true,
        synchronousCommit: config.synchronous === 'FULL' || config.synchronous === 'EXTRA',
        queryTimeoutMs: config.operator?.postgres.queryTimeoutMs,
      });
    case 'kurrentdb':
      return kurrentdbStoreFactory(requireUrl(config.kurrentdbUrl, 'kurrentdb', 'KURRENTDB_URL', '--kurrentdb-url'), config.databaseUrl);
    default:
      throw new DomainError('store_unavailable', `store: "${String(config.store)}" is not sqlite, postgres or kurrentdb`);
  }
}

export { LOCAL_OPERATOR } from './local-operator';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyCommand = CommandDefinition<any, any, any>;

/** Where a command comes from: a tenant (RPC, MCP over HTTP: a token holder, bounded by the operator's rules) or the operator (the CLI, server code). */
export interface CommandEdge {
  tenant: boolean;
}
export const OPERATOR_EDGE: CommandEdge = { tenant: false };
export const TENANT_EDGE: CommandEdge = { tenant: true };

interface EntryCall {
  def: AnyCommand;
  workspace: unknown;
  envelope: CommandEnvelope;
  payload: unknown;
  edge: CommandEdge;
}

const workspaceIdOf = (w: unknown): string => (isHandle(w) ? w.id : workspaceIdSchema.parse(w));

/**
 * The commands that need a step before the kernel, one each. Such a step does work the kernel cannot undo
 * (a catalogue entry, a clone, a derived secret), so it admits the call (access, then known fields) first;
 * the kernel checks again on its own (server code also calls it directly).
 */
const ENTRY_STEPS: Partial<Record<string, (ledger: Ledger, call: EntryCall) => Promise<CommandOutcome>>> = {
  issueToken: (ledger, c) => ledger.issueToken(c.workspace, c.envelope, c.payload),
  createWorkspace: (ledger, c) => ledger.createWorkspace(c.envelope, c.payload, c.edge.tenant ? { workspaceId: workspaceIdOf(c.workspace) } : undefined),
  registerRepo: async (ledger, c) => {
    if (!c.edge.tenant) return ledger.execute(c.def, c.workspace, c.envelope, c.payload);
    // A tenant's repo lives under the operator's repo root: a folder there, or a forge URL cloned there.
    admit(c.def, c.envelope, c.def.input, c.payload);
    const op = ledger.operator;
    if (typeof c.payload !== 'object' || c.payload === null || Array.isArray(c.payload)) throw new DomainError('invalid_payload', 'params: must be an object of named parameters');
    const placed = await placeRemoteRegistration(c.payload as Record<string, unknown>, op.repoRoot, workspaceIdOf(c.workspace), op.githubEnterpriseHosts, op.repoQuotaBytes);
    return ledger.execute(c.def, c.workspace, c.envelope, placed);
  },
};

/** Access, then the payload's fields against `schema`: what an entry step checks before it does anything. */
function admit(def: Pick<CommandDefinition, 'name' | 'access'>, envelope: CommandEnvelope, schema: z.ZodType, payload: unknown): void {
  checkAccess(def, principalSchema.parse(envelope.principal), envelope.role);
  assertNoReservedKeys(payload);
  assertKnownFields(schema, payload);
}

function isHandle(w: unknown): w is WorkspaceHandle {
  return typeof w === 'object' && w !== null && 'store' in w && 'cache' in w;
}


/**
 * The one command whose caller comes from another workspace: a principal's name means nothing across
 * workspaces (the owner of workspace A may name itself after B's creator there), so a replay of B's
 * creation — which answers with B's owner token — is answered only to the token that created it (or,
 * for a workspace the local operator created, to the local operator again).
 */
async function assertSameCreator(ws: WorkspaceHandle, key: string, envelope: CommandEnvelope): Promise<void> {
  for await (const first of ws.store.readStream('workspace')) {
    if (first.type !== 'WorkspaceCreated' || first.eventId.toLowerCase() !== key) return;
    if ((first.metadata.tokenId ?? null) !== (envelope.tokenId ?? null) || first.metadata.principal !== envelope.principal) {
      throw new DomainError('idempotency_key_reused', `idempotencyKey: ${key} was already used by another principal; generate a new key`, { idempotencyKey: key });
    }
    return;
  }
}
