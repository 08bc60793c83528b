import { ACCESS_GUARD_SERVICE, accessGuardFor } from './workspaces/access-guard';
import { DomainError } from './domain-error';
import { CommandExecutor, CommandEnvelope, CommandOutcome } from './commands/kernel';
import { commandByName } from './commands/registry';
import { createWorkspace } from './commands/create-workspace';
import { assertMayMintFor, issueToken } from './commands/issue-token';
import type { LedgerConfig } from './config';
import { StoreFactory, WorkspaceHandle, WorkspaceRegistry, sqliteStoreFactory } from './workspaces/registry';
import { kurrentdbStoreFactory, postgresStoreFactory, requireUrl } from './workspaces/store-factories';
import { workspaceIdSchema } from './events/catalogue/workspace';
import { validationError } from './domain-error';
import { assertIdempotencyKey } from './events/ids';
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

  async run(command: string, workspaceId: unknown, envelope: CommandEnvelope, payload: unknown): Promise<CommandOutcome> {
    const def = commandByName.get(command);
    if (!def) throw new DomainError('unknown_command', `method: "${String(command).slice(0, 100)}" is not a command`);
    if (def === createWorkspace) return this.createWorkspace(envelope, payload);
    if (def === issueToken) assertMayMintFor(this.operator, envelope.principal, (payload as { principal?: unknown } | null)?.principal);
    // The workspace stays open while the command (and any job it runs) does.
    const { handle, release } = await this.workspaces.acquire(workspaceId);
    try {
      return await this.executor.execute(def, handle, envelope, payload);
    } finally {
      release();
    }
  }

  /** Registers the workspace in the catalogue, then records WorkspaceCreated in its own stream. */
  /**
   * `quota`: for a tenant's request (RPC), the owner key the workspace counts against and the operator's
   * limit (`WorkspaceRegistry.registerWithin`); the local operator's CLI passes none.
   */
  async createWorkspace(envelope: CommandEnvelope, payload: unknown, quota?: { owner: string; limit: number }): Promise<CommandOutcome> {
    const parsed = createWorkspace.input.safeParse(payload);
    if (!parsed.success) throw validationError(parsed.error.issues);
    workspaceIdSchema.parse(parsed.data.workspaceId);
    // Validate the key before the catalogue is touched: a refused request creates nothing.
    const key = assertIdempotencyKey(envelope.idempotencyKey, this.clock());
    const name = parsed.data.name ?? parsed.data.workspaceId;
    if (quota) this.workspaces.registerWithin(parsed.data.workspaceId, name, this.clock().toISOString(), quota.owner, quota.limit);
    else this.workspaces.register(parsed.data.workspaceId, name, this.clock().toISOString());
    const { handle: ws, release } = await this.workspaces.acquire(parsed.data.workspaceId);
    try {
      await assertSameCreator(ws, key, envelope);
      return await this.executor.execute(createWorkspace, ws, envelope, parsed.data);
    } finally {
      release();
    }
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
      });
    case 'kurrentdb':
      return kurrentdbStoreFactory(requireUrl(config.kurrentdbUrl, 'kurrentdb', 'KURRENTDB_URL', '--kurrentdb-url'), config.databaseUrl);
    default:
      throw new DomainError('store_unavailable', `store: "${String(config.store)}" is not sqlite, postgres or kurrentdb`);
  }
}

export { LOCAL_OPERATOR } from './local-operator';

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
