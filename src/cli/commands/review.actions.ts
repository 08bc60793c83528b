import type { Command } from 'commander';
import { z } from 'zod';
import { DomainError, validationError } from '../../domain-error';
import type { ErrorCode } from '../../errors/codes';
import { commandByName, COMMANDS } from '../../commands/registry';
import { newUuidV7 } from '../../events/ids';
import { LOCAL_OPERATOR } from '../../ledger';
import { resolveAsOf } from '../../readmodels/queries/as-of';
import { AuditRow, auditQuery } from '../../readmodels/queries/audit';
import { AuditRowCheck, checkAuditRows } from '../../readmodels/queries/audit-check';
import { QUERIES, queryByName } from '../../readmodels/queries/queries';
import { replayReviews, ReplayRow } from '../../readmodels/queries/replay';
import { runQuery } from '../../readmodels/queries/run-query';
import { loadRulesFile } from '../../rules/rules';
import { withLedger } from '../context';
import { hasAuditLog } from '../../events/chain';
import { verifyStore } from '../../audit/checkpointer';
import { AuditKeyring } from '../../audit/keys';
import { formatReport } from '../../audit/verify';
import { cliIdentity } from '../identity';
import { didYouMean } from '../../errors/suggest';
import { printAct } from '../act-line';
// Workspace-wide queries (audit, …) answer from checkpointed read models: installs the answerer into runQuery.

/** The actions of review.ts, loaded when one of its commands runs (or its help is shown). */

/** The fields of a zod object input, `name` or `name?`, for the help catalogues. */
function fieldsOf(schema: z.ZodType): string {
  if (!(schema instanceof z.ZodObject)) return '(payload: see rpc.discover)';
  const shape = schema.shape as Record<string, z.ZodType>;
  return Object.entries(shape)
    .map(([k, v]) => (v.safeParse(undefined).success ? `${k}?` : k))
    .join(', ');
}

const firstSentence = (text: string): string => text.split(/(?<=\.)\s/)[0];

/** `review run --help`: every command of the registry, generated from it. */
export function commandCatalogue(): string {
  return `\nCommands (the command registry; the payload fields follow each name):\n${COMMANDS.map((c) => `  ${c.name} {${fieldsOf(c.input)}}\n      ${firstSentence(c.description)}`).join('\n')}\n`;
}

/** `review show --help`: every query of the registry, generated from it. */
export function queryCatalogue(): string {
  return `\nQueries (the query registry; the input fields follow each name):\n${QUERIES.map((q) => `  ${q.name} {${fieldsOf(q.input)}}\n      ${firstSentence(q.description)}`).join('\n')}\n`;
}

function parseJson(text: string, field: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    /* reported below */
  }
  throw new DomainError('invalid_payload', `${field}: must be a JSON object`);
}

function positiveInt(value: string, field: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new DomainError('invalid_payload', `${field}: must be a positive integer, got "${value}"`);
  return Number(value);
}

type RunOptions = { workspace: string; payload: string; token?: string; as?: string; idempotencyKey?: string; json?: boolean };
type ShowOptions = { workspace: string; repo?: string; pr?: string; round?: string; input?: string; asOf?: string };
type ReplayOptions = { workspace: string; rules: string; pr?: string; repo?: string; asOf?: string; all?: boolean; json?: boolean; activate?: boolean };
type AuditOptions = { workspace: string; actor?: string; action?: string; repo?: string; pr?: string; since?: string; until?: string; authn?: string; subject?: string; asOf?: string; order?: string; limit?: string; cursor?: string; json?: boolean };

export async function runReviewCommand(name: string, opts: RunOptions, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    if (!commandByName.has(name)) throw new DomainError('unknown_command', `command: "${name.slice(0, 100)}" is not in the command registry${didYouMean(name, COMMANDS.map((c) => c.name))} (${COMMANDS.map((c) => c.name).join(', ')})`);
    const payload = parseJson(opts.payload, '--payload');
    const actor = await cliIdentity(ledger, opts.workspace, opts);
    const out = await ledger.run(name, opts.workspace, { ...actor, idempotencyKey: opts.idempotencyKey ?? newUuidV7() }, payload);
    printAct(name, out, opts.json);
  });
}

export async function showReview(name: string, opts: ShowOptions, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const q = queryByName(name);
    if (!q) throw new DomainError('unknown_query', `query: "${name.slice(0, 100)}" is not in the query registry${didYouMean(name, QUERIES.map((x) => x.name))} (${QUERIES.map((x) => x.name).join(', ')})`);
    const raw: Record<string, unknown> = opts.input !== undefined ? parseJson(opts.input, '--input') : {};
    if (opts.repo !== undefined) raw.repoId = opts.repo;
    if (opts.pr !== undefined) raw.prNumber = positiveInt(opts.pr, '--pr');
    if (opts.round !== undefined) raw.round = positiveInt(opts.round, '--round');
    const parsed = q.input.safeParse(raw);
    if (!parsed.success) throw validationError(parsed.error.issues);
    const ws = await ledger.workspace(opts.workspace);
    const asOf = opts.asOf !== undefined ? await resolveAsOf(ws, opts.asOf) : undefined;
    const answer = await runQuery(q, ws, parsed.data, asOf);
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  });
}

export async function replay(opts: ReplayOptions, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const rules = loadRulesFile(opts.rules);
    const ws = await ledger.workspace(opts.workspace);
    const asOf = opts.asOf !== undefined ? await resolveAsOf(ws, opts.asOf) : undefined;
    const rows = await replayReviews(ws, rules, { repoId: opts.repo, prNumber: opts.pr !== undefined ? positiveInt(opts.pr, '--pr') : undefined, asOf });
    const shown = opts.all ? rows : rows.filter((r) => r.changed);
    if (opts.json) process.stdout.write(`${JSON.stringify({ rulesVersion: rules.rulesVersion, reviews: rows.length, changed: rows.filter((r) => r.changed).length, rows: shown })}\n`);
    else process.stdout.write(replayTable(shown, rows.length, rules.rulesVersion));
    if (opts.activate) {
      const out = await ledger.run('activateRules', opts.workspace, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { document: rules });
      process.stderr.write((out.response.result as { activated: boolean }).activated ? `activated rules ${rules.rulesVersion}\n` : `rules ${rules.rulesVersion} already active\n`);
    }
  });
}

export async function audit(opts: AuditOptions, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    if (!opts.workspace) throw new DomainError('missing_workspace', '--workspace: required');
    const ws = await ledger.workspace(opts.workspace);
    const parsed = auditQuery.input.safeParse({ actor: opts.actor, action: opts.action, repoId: opts.repo, prNumber: opts.pr !== undefined ? positiveInt(opts.pr, '--pr') : undefined, since: opts.since, until: opts.until, authn: opts.authn, subject: opts.subject, order: opts.order, limit: opts.limit !== undefined ? Number(opts.limit) : undefined, cursor: opts.cursor });
    if (!parsed.success) throw new DomainError('invalid_payload', parsed.error.issues.map((i) => `--${String(i.path[0])}: ${i.message}`).join('; '));
    const asOf = opts.asOf !== undefined ? await resolveAsOf(ws, opts.asOf) : undefined;
    const { position, value } = await runQuery(auditQuery, ws, parsed.data, asOf);
    // The rows come from the read model (readmodels.audit.db), which the chain does not cover: each one
    // printed is checked against the chained event it comes from (docs/audit.md, "Audit rows against the chain").
    const report = hasAuditLog(ws.store)
      ? await verifyStore(ws.store, new AuditKeyring(ledger.config.dataDir).current(false)?.publicKey, { witnessDir: ledger.operator.auditWitnessDir })
      : null;
    const checks = report && hasAuditLog(ws.store) ? await checkAuditRows(ws.store, value.rows, report.firstBroken) : null;
    const mismatched = (checks ?? []).filter((c) => c.check === 'mismatch');
    if (opts.json) {
      const rows = checks ? value.rows.map((r, i) => ({ ...r, hash: checks[i].hash, check: checks[i].check, ...(checks[i].problem ? { problem: checks[i].problem } : {}) })) : value.rows;
      process.stdout.write(`${JSON.stringify({ position, rows, next: value.next })}\n`);
    } else {
      process.stdout.write(auditTable(value.rows, checks));
      // One page (newest first unless --order asc): the next one continues exactly where this stopped.
      process.stdout.write(value.next ? `\nnext page: --cursor ${value.next} (with the same filters and --order)\n` : `\n${value.rows.length} row(s), the last page\n`);
      for (const c of (checks ?? []).filter((x) => x.check !== 'verified')) {
        process.stdout.write(c.check === 'mismatch' ? `row at position ${c.position} does NOT match its event in the log — ${c.problem} (the read model was edited or is stale: \`projections rebuild --workspace ${opts.workspace} --name audit\` rebuilds it from the log)\n` : `row at position ${c.position} unverified: ${c.problem}\n`);
      }
      // The rows are only as good as the log behind them: say whether it verifies (docs/audit.md).
      if (report) process.stdout.write(`\nlog integrity: ${formatReport(report).trimEnd().split('\n').slice(1).join('\n  ')}\n`);
    }
    // A row shown as fact that its own event contradicts is a failed check, as a broken chain is for verify.
    if (mismatched.length) {
      const code: ErrorCode = 'audit_row_mismatch';
      process.stderr.write(`error [${code}]: ${mismatched.length} row(s) of the audit read model do not match their events in the log (positions ${mismatched.map((c) => c.position).slice(0, 10).join(', ')})\n`);
      process.exitCode = 1;
    }
  });
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

function replayTable(rows: ReplayRow[], total: number, version: string): string {
  const body = rows.map((r) => [`${r.repoId}#${r.prNumber}`, `${r.old.verdict} (${r.old.confidence})`, `${r.new.verdict} (${r.new.confidence})`, r.reason]);
  return table(['PR', 'old', `new (rules ${version})`, 'reason'], body) + `${rows.filter((r) => r.changed).length} of ${total} review(s) would change\n`;
}

/** `user:ada (token 1a2b…) <- user:local-operator (cli)`: who issued the acting token, then theirs, … */
function issuedBy(r: AuditRow): string {
  return r.issuerChain.map((l) => `${l.principal} (${l.tokenId ? `token ${l.tokenId}` : (l.via ?? 'local')})`).join(' <- ');
}

/** `sign-in alice-sub@https://idp.example` / `admin-provisioned` / `agent-token` / `local`. */
function authenticated(r: AuditRow): string {
  return r.signIn ? `sign-in ${r.signIn.subject}@${r.signIn.issuer}` : r.authn;
}

/** `check`: verified / MISMATCH / unverified against the chained event (docs/audit.md); absent for a store without a chain. */
function auditTable(rows: AuditRow[], checks: AuditRowCheck[] | null): string {
  const mark = { verified: 'verified', mismatch: 'MISMATCH', unverified: 'unverified' } as const;
  const body = rows.map((r, i) => [String(r.position), r.time, r.action, r.actor, r.role, r.target, r.repoId ? `${r.repoId}#${r.prNumber}` : '', (r.detail ?? '').replace(/\s+/g, ' ').slice(0, 80), r.via ?? '', authenticated(r), issuedBy(r), ...(checks ? [mark[checks[i].check]] : [])]);
  return table(['position', 'time', 'action', 'actor', 'role', 'target', 'PR', 'detail', 'via', 'authenticated', 'issued by', ...(checks ? ['check'] : [])], body);
}
