import { Command } from 'commander';
import { CLI_MODULES } from './commands';
import { neutralize } from '../publish/output-hygiene';

export function buildProgram(): Command {
  const program = new Command('review-ledger')
    .description('The event-sourced ledger behind AI-assisted pull-request review')
    .option('--data-dir <dir>', 'embedded store root (default ./data; env REVIEW_LEDGER_DATA_DIR)')
    .option('--store <kind>', 'sqlite | postgres | kurrentdb (env REVIEW_LEDGER_STORE)')
    .option('--synchronous <mode>', 'SQLite durability FULL | NORMAL (env REVIEW_LEDGER_SYNCHRONOUS)')
    .option('--database-url <url>', 'PostgreSQL connection string (env DATABASE_URL)')
    .option('--kurrentdb-url <url>', 'KurrentDB connection string (env KURRENTDB_URL)')
    .option('--config <file>', 'operator config file: render commands per repo, render sandbox, repo root, GitHub Enterprise hosts (env REVIEW_LEDGER_CONFIG)')
    .option('--audit-key-file <file>', 'audit checkpoint signing key (Ed25519 PKCS#8 PEM) shared by every server on one store (default <data-dir>/audit-ed25519.pem; env REVIEW_LEDGER_AUDIT_KEY_FILE)')
    .option('--server-key-file <file>', 'secret (≥ 32 bytes) token secrets are derived from, shared by every server on one store (default <data-dir>/server.key; env REVIEW_LEDGER_SERVER_KEY_FILE)')
    .option('--repo-root <dir>', 'folder repos registered over RPC live in (default <data-dir>/repos; env REVIEW_LEDGER_REPO_ROOT)')
    .option('--github-enterprise-host <host...>', 'GitHub Enterprise host the GitHub credential may be sent to (exact host; env REVIEW_LEDGER_GITHUB_ENTERPRISE_HOSTS, comma-separated)')
    .option('--unsafe-render-without-sandbox', 'run visual render commands (PR code) on the host with no sandbox: only when every repo is trusted')
    // A mistyped command gets commander's "Did you mean" and a pointer to --help, not the whole usage.
    .showHelpAfterError('(add --help for the usage)');
  for (const m of CLI_MODULES) m.register(program);
  return program;
}

/**
 * Every string the CLI writes passes output hygiene: stored text is exact, and a finding title holding an
 * ANSI escape or a bidi override cannot repaint the operator's terminal (src/publish/output-hygiene.ts).
 * JSON output stays exact: inside a JSON string an escape is the same string.
 */
function neutralizeWrites(stream: NodeJS.WriteStream): void {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => write(typeof chunk === 'string' ? neutralize(chunk) : chunk, ...rest)) as typeof stream.write;
}

/**
 * What a failed command prints: `error [code]: message`, one line, no stack and no colours (start-up
 * errors included: port in use, bad port, bad config). REVIEW_LEDGER_DEBUG=1 adds the stack of an
 * unexpected error.
 */
export function errorLine(err: unknown): string {
  const e = err as { name?: string; code?: unknown; message?: unknown; stack?: string } | null;
  // Duck-typed so a DomainError needs no import here (--help stays light).
  if (e && e.name === 'DomainError' && typeof e.code === 'string') return `error [${e.code}]: ${String(e.message)}`;
  const message = err instanceof Error ? err.message : String(err);
  const debug = process.env.REVIEW_LEDGER_DEBUG && err instanceof Error && err.stack ? `\n${err.stack}` : '';
  return `error [internal]: ${message.replace(/\x1b\[[0-9;]*m/g, '')}${debug}`;
}

export function run(argv: string[]): void {
  neutralizeWrites(process.stdout);
  neutralizeWrites(process.stderr);
  buildProgram()
    .parseAsync(argv)
    .catch((err) => {
      process.stderr.write(`${errorLine(err)}\n`);
      process.exit(1);
    });
}

if (require.main === module) run(process.argv);
