import { spawnSync } from 'node:child_process';
import { Client } from 'pg';
import type { NewEvent } from '../../src/events/envelope';
import { newUuidV7 } from '../../src/events/ids';

/** The local test server (trust auth); DATABASE_URL overrides it. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let probed: string | null | undefined;

/**
 * Whether PostgreSQL answers, checked synchronously (jest builds suites synchronously) by a child
 * process: null when reachable, otherwise the reason.
 */
export function postgresUnreachable(): string | null {
  if (probed !== undefined) return probed;
  const probe = `const {Client}=require(${JSON.stringify(require.resolve('pg'))});const c=new Client({connectionString:process.argv[1],connectionTimeoutMillis:3000});c.connect().then(()=>c.query('select 1')).then(()=>c.end()).then(()=>process.exit(0),(e)=>{console.error(e.message);process.exit(1)})`;
  const r = spawnSync(process.execPath, ['-e', probe, DATABASE_URL], { encoding: 'utf8', timeout: 10_000 });
  probed = r.status === 0 ? null : (r.stderr || r.error?.message || `exit ${r.status}`).trim();
  return probed;
}

/**
 * Defines the PostgreSQL suites when the server is reachable. Otherwise (outside CI, where .ci/run
 * starts the server) it prints why and registers one test that pins the reason, so the run says
 * plainly that these suites did not run.
 */
export function whenPostgres(name: string, define: () => void): void {
  const reason = postgresUnreachable();
  if (reason === null || process.env.CI) {
    define();
    return;
  }
  console.log(`${name}: PostgreSQL at ${DATABASE_URL} is unreachable (${reason}); its suites are not run`);
  test(`${name}: not run, PostgreSQL is unreachable at ${DATABASE_URL}`, () => {
    expect(postgresUnreachable()).not.toBeNull();
  });
}

/** A schema name unique to this run (each test file gets its own tables and drops them). */
export function uniqueSchema(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`.toLowerCase();
}

export async function dropSchema(schema: string): Promise<void> {
  const c = new Client({ connectionString: DATABASE_URL });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await c.end();
  }
}

/** A small event for store-level tests (ReviewLevelSet, a fresh id), with `extra` added to its data. */
export function levelSetEvent(workspaceId: string, extra: Record<string, unknown> = {}): NewEvent {
  return {
    eventId: newUuidV7(),
    type: 'ReviewLevelSet',
    schemaVersion: 1,
    data: { level: 'light', ...extra },
    metadata: { principal: 'user:alice', workspaceId, correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' },
  };
}

/** Polls `what` every 10 ms, at most `tries` times (what another server's announcement takes to arrive), then asserts it. */
export async function until(what: () => boolean, tries = 500): Promise<void> {
  for (let i = 0; i < tries && !what(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(what()).toBe(true);
}

/** One statement on its own connection (CREATE / DROP DATABASE, a count): `url` defaults to DATABASE_URL. */
export async function adminQuery<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, url = DATABASE_URL): Promise<R[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(sql)).rows;
  } finally {
    await c.end();
  }
}

/**
 * A database of its own for a test of several servers (each server migrates the default schema):
 * `url` to connect to it, `create()` before, `drop()` after (FORCE: a server that did not close cleanly).
 */
export function ownDatabase(tag: string): { name: string; url: string; create(): Promise<void>; drop(): Promise<void> } {
  const name = `rl_${tag}_${process.pid}_${Date.now().toString(36)}`;
  const u = new URL(DATABASE_URL);
  u.pathname = `/${name}`;
  return {
    name,
    url: u.toString(),
    create: async () => void (await adminQuery(`CREATE DATABASE "${name}"`)),
    drop: async () => void (await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
  };
}

/** Polls `probe` every 50 ms until it returns a value, which it returns; fails naming `what` after `ms`. */
export async function untilValue<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
