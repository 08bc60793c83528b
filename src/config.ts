import * as path from 'node:path';
import { DomainError } from './domain-error';
import type { SynchronousMode } from './stores/sqlite/sqlite-event-store';
import { loadOperatorConfig, type OperatorConfig, type OperatorOverrides } from './operator-config';

/** Server configuration: flags override environment variables, which override these defaults. */
export interface LedgerConfig {
  /** Root of the embedded data: `<dataDir>/<workspaceId>/workspace.db`. */
  dataDir: string;
  host: string;
  port: number;
  store: 'sqlite' | 'postgres' | 'kurrentdb';
  /** SQLite durability: FULL (default) survives power loss; NORMAL survives a process crash. */
  synchronous: SynchronousMode;
  databaseUrl?: string;
  kurrentdbUrl?: string;
  /** Bytes of one response on any transport (RPC, batch, watch frame, MCP tool result); see src/rpc/limits.ts. */
  maxResponseBytes?: number;
  /** What only the operator decides (render commands, repo root, forge hosts): see operator-config.ts. */
  operator?: OperatorConfig;
  /**
   * PostgreSQL: may opening the store bring an outdated schema to this code's version? true (default)
   * for `serve` and a ledger built in code; the CLI's other commands set false: they check the version
   * and refuse with schema_outdated, naming `review-ledger migrate`.
   */
  migrateSchema?: boolean;
}

/** A few MiB: a page of 1000 audit rows is well under 1 MiB; what passes it is a request to refuse. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/** Below this no ordinary answer (a review's nodes, a context pack) would fit. */
export const MIN_MAX_RESPONSE_BYTES = 64 * 1024;

function maxResponseBytesOf(value: number | string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_MAX_RESPONSE_BYTES;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < MIN_MAX_RESPONSE_BYTES) throw new DomainError('invalid_config', `maxResponseBytes (REVIEW_LEDGER_MAX_RESPONSE_BYTES): must be an integer number of bytes ≥ ${MIN_MAX_RESPONSE_BYTES}, got ${JSON.stringify(String(value).slice(0, 40))}`);
  return n;
}

export function loadConfig(overrides: Partial<LedgerConfig> & OperatorOverrides = {}, env: NodeJS.ProcessEnv = process.env): LedgerConfig {
  const sync = (overrides.synchronous ?? env.REVIEW_LEDGER_SYNCHRONOUS ?? 'FULL').toUpperCase();
  if (!['FULL', 'NORMAL', 'OFF', 'EXTRA'].includes(sync)) throw new DomainError('invalid_config', `synchronous: must be FULL, NORMAL, EXTRA or OFF, got ${sync}`);
  const store = (overrides.store ?? env.REVIEW_LEDGER_STORE ?? 'sqlite') as LedgerConfig['store'];
  if (!['sqlite', 'postgres', 'kurrentdb'].includes(store)) throw new DomainError('invalid_config', `store: must be sqlite, postgres or kurrentdb, got ${store}`);
  const port = Number(overrides.port ?? env.REVIEW_LEDGER_PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new DomainError('invalid_port', `port: must be an integer 0–65535, got ${overrides.port ?? env.REVIEW_LEDGER_PORT}`);
  const dataDir = path.resolve(overrides.dataDir ?? env.REVIEW_LEDGER_DATA_DIR ?? './data');
  return {
    dataDir,
    host: overrides.host ?? env.REVIEW_LEDGER_HOST ?? '127.0.0.1',
    port,
    store,
    synchronous: sync as SynchronousMode,
    databaseUrl: overrides.databaseUrl ?? env.DATABASE_URL,
    kurrentdbUrl: overrides.kurrentdbUrl ?? env.KURRENTDB_URL,
    maxResponseBytes: maxResponseBytesOf(overrides.maxResponseBytes ?? env.REVIEW_LEDGER_MAX_RESPONSE_BYTES),
    operator: overrides.operator ?? loadOperatorConfig(dataDir, overrides, env),
    ...(overrides.migrateSchema !== undefined ? { migrateSchema: overrides.migrateSchema } : {}),
  };
}
