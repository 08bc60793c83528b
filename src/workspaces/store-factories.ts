import { DomainError } from '../domain-error';
import { PostgresBackend, type StoreHealth } from '../stores/postgres/backend';
import { PostgresEventStore } from '../stores/postgres/postgres-event-store';
import type * as KurrentDb from '../stores/kurrentdb/kurrentdb-event-store';
import { PostgresCatalogue } from './postgres-catalogue';
import { SqliteCatalogue } from './catalogue';
import type { StoreFactory } from './registry';
import { openSidePool } from '../stores/postgres/side-pool';

/**
 * Every workspace of the process on one PostgreSQL database: one pool, one LISTEN connection, one
 * schema, and the catalogue in the same database — so several processes on the same DATABASE_URL form
 * one deployment. `migrate` (default true: `serve`, a ledger built in code) brings an outdated schema
 * to the code's version once, when the backend opens; false (CLI reads) only checks the version and
 * refuses with schema_outdated. Reconnects never migrate.
 */
export function postgresStoreFactory(connectionString: string, schema?: string, options: { migrate?: boolean; synchronousCommit?: boolean; aloneAfterMs?: number; queryTimeoutMs?: number } = {}): StoreFactory {
  let backend: Promise<PostgresBackend> | null = null;
  let opened: PostgresBackend | null = null;
  let openError: { message: string; since: Date } | null = null;
  const open = (): Promise<PostgresBackend> =>
    (backend ??= PostgresBackend.open({ connectionString, schema, migrate: options.migrate, synchronousCommit: options.synchronousCommit, aloneAfterMs: options.aloneAfterMs, queryTimeoutMs: options.queryTimeoutMs }).then(
      (b) => {
        opened = b;
        openError = null;
        return b;
      },
      (err) => {
        backend = null;
        openError ??= { message: (err as Error).message, since: new Date() };
        throw err;
      },
    ));
  const factory: StoreFactory = async (workspaceId) => new PostgresEventStore({ backend: await open(), workspaceId });
  factory.catalogue = () =>
    new PostgresCatalogue(connectionString, schema, options.migrate ?? true, {
      // The store's probe knows first when the database is away: the catalogue then refuses without blocking.
      unreachable: () => opened?.unreachable() ?? null,
    });
  factory.sharesConnections = true;
  factory.ready = async () => {
    await open();
  };
  factory.listWorkspaces = async () => (await open()).listWorkspaces();
  factory.health = (): StoreHealth => {
    if (opened) return opened.health();
    if (openError) return { status: 'degraded', reason: `PostgreSQL store not open: ${openError.message}`, since: openError.since.toISOString() };
    return { status: 'ok' };
  };
  factory.close = async () => {
    const b = backend;
    backend = null;
    opened = null;
    if (b) await (await b.catch(() => null))?.close();
  };
  return factory;
}

/**
 * Every workspace on one KurrentDB connection, streams prefixed by workspace. The catalogue is
 * PostgreSQL when a DATABASE_URL is also configured (several processes), else SQLite under the data dir.
 */
export function kurrentdbStoreFactory(connectionString: string, catalogueDatabaseUrl?: string): StoreFactory {
  let connection: KurrentDb.KurrentDbConnection | null = null;
  // The read models go to the catalogue's database (schema review_ledger), on a small pool of their own.
  let readModelPool: import('pg').Pool | null = null;
  const factory: StoreFactory = async (workspaceId) => {
    // Loaded on demand: the gRPC client is only paid for by deployments that use it.
    const { KurrentDbConnection, KurrentDbEventStore } = require('../stores/kurrentdb/kurrentdb-event-store') as typeof KurrentDb;
    connection ??= new KurrentDbConnection(connectionString);
    if (catalogueDatabaseUrl) readModelPool ??= openSidePool(catalogueDatabaseUrl);
    return new KurrentDbEventStore({ connection, workspaceId, readModels: readModelPool ? { pool: readModelPool, schema: 'review_ledger' } : undefined });
  };
  factory.sharesConnections = true;
  factory.catalogue = (dataDir) => (catalogueDatabaseUrl ? new PostgresCatalogue(catalogueDatabaseUrl) : new SqliteCatalogue(dataDir));
  factory.close = async () => {
    const c = connection;
    connection = null;
    await c?.close();
    const p = readModelPool;
    readModelPool = null;
    await p?.end();
  };
  return factory;
}

export function requireUrl(value: string | undefined, store: string, env: string, flag: string): string {
  if (!value) throw new DomainError('invalid_config', `${flag}: required with --store ${store} (or set ${env})`);
  return value;
}
