import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import { Ledger } from '../../src/ledger';
import { postgresStoreFactory } from '../../src/workspaces/store-factories';
import { DATABASE_URL } from './pg-support';

/**
 * Counts every statement this process sends to PostgreSQL (every pooled connection), by name — `fwd`, a
 * stream read; `append`, append_commit — and passes it on: each still reaches the real server. The
 * statement-count tests (pg-round-trips, pg-stream-freshness) install it around their ledgers.
 */
const BACKGROUND = new Set(['hello', 'logsize', 'chaininfo', 'chainpage', 'cps', 'addcp', 'SET statement_timeout']);

export function statementCounter(schema: string) {
  const counts = new Map<string, number>();
  const original = Client.prototype.query;
  const prefix = `"${schema}".`;
  return {
    install(): void {
      Client.prototype.query = function (this: Client, config: any, ...rest: any[]) {
        const name = typeof config === 'object' && config ? (config.name ?? String(config.text).split(' ').slice(0, 2).join(' ')) : String(config).split(' ').slice(0, 2).join(' ');
        counts.set(name, (counts.get(name) ?? 0) + 1);
        return (original as any).call(this, config, ...rest);
      } as any;
    },
    /** How many statements of this exact name went out since the last `during` began. */
    count(name: string): number {
      return counts.get(name) ?? 0;
    },
    restore(): void {
      Client.prototype.query = original;
    },
    /** The statements `run` sends, by name without the schema; `schemaOnly` drops those of no schema (BEGIN, LISTEN…). */
    async during(run: () => Promise<unknown>, schemaOnly = false): Promise<Record<string, number>> {
      counts.clear();
      await run();
      const out: Record<string, number> = {};
      for (const [k, v] of counts) {
        // Statements of the process's own timers are no statements of the work measured: a listening process's
        // hello (once a second), the log quota's running sum (logsize, once a second) and the audit checkpointer's
        // tick (chaininfo, chainpage, cps, addcp); nor is the session setup of a connection the pool opened
        // meanwhile (`SET statement_timeout …`). Counted by chance when one fell inside `run` (CI, session 56:
        // {append: 1, logsize: 1}; {SET statement_timeout: 1, append: 1, notify_all: 1}).
        if (BACKGROUND.has(k.startsWith(prefix) ? k.slice(prefix.length) : k)) continue;
        if (k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
        else if (!schemaOnly) out[k] = v;
      }
      return out;
    },
  };
}

/** A server's ledger on `schema` with a data dir of its own (pushed to `dirs` for the caller to remove). */
export function openPostgresLedger(schema: string, dirs: string[], options: { synchronousCommit?: boolean; aloneAfterMs?: number } = {}): Ledger {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-pg-ledger-'));
  dirs.push(dir);
  return new Ledger(loadConfig({ dataDir: dir, store: 'postgres', databaseUrl: DATABASE_URL }), { storeFactory: postgresStoreFactory(DATABASE_URL, schema, options) });
}

/** A finding as agents file it in these tests. */
export const findingNode = (title: string) => ({
  kind: 'bug',
  priority: 'P2',
  triage: { category: 'correctness', severity: 'medium', effort: 'small' },
  confidence: 0.6,
  reasoning: 'The guard is evaluated after the dereference.',
  title,
  body: 'Move the length check before the access.',
  brief: 'engineer',
});
