import type { Command } from 'commander';
import { INDEX_PROGRESS_SERVICE } from '../../commands/index-code';
import type { CohortData } from '../../events/catalogue/compute';
import { isEvent, type EventOfType } from '../../events/catalogue/event-types';
import { newUuidV7 } from '../../events/ids';
import { LOCAL_OPERATOR } from '../../ledger';
import { loadRepoState } from '../../compute/streams';
import { withLedger } from '../context';
import { runQuery } from '../../readmodels/queries/run-query';
import { verdictQuery } from '../../readmodels/queries/verdict';
import type { WorkspaceHandle } from '../../workspaces/registry';
import { progressBar } from './index-code.actions';

/** The actions of compute.ts, loaded when `compute` runs. */

/** A readable cohort report: riskiest first, grouping mode, blast radius, guided reading order. */
export function formatCohortReport(data: { baseSha: string; headSha: string; cohorts: CohortData[]; dependencyDiffs: Array<{ path: string; changes: Array<{ name: string; change: string; from?: string; to?: string; major: boolean }>; versionOnly?: boolean }>; metrics: Record<string, number> }): string {
  const lines: string[] = [];
  lines.push(`review ${data.baseSha.slice(0, 10)}..${data.headSha.slice(0, 10)} — ${data.cohorts.length} cohort(s), ${data.metrics.changedFiles ?? '?'} changed file(s), computed in ${data.metrics.elapsedMs ?? '?'} ms`);
  for (const c of data.cohorts) {
    const b = c.blastRadius;
    lines.push('');
    lines.push(`#${c.rank} ${c.title}   [${c.key}]`);
    lines.push(`   grouping: ${c.grouping}${c.groupingReason ? ` — ${c.groupingReason}` : ''}`);
    lines.push(`   files: ${c.files.join(', ')}`);
    lines.push(`   blast radius: score ${b.score} · ${b.dependents.files.length} dependent file(s), ${b.dependents.symbols.length} symbol(s) (depth ≤ ${b.dependents.depth}${b.dependents.truncated ? ', truncated' : ''}) · public API ${b.publicApi.length} · tests ${b.tests.length ? b.tests.join(', ') : 'none reach it'}`);
    if (c.readingOrder.steps.length) {
      lines.push(`   reading order (${c.readingOrder.order}):`);
      c.readingOrder.steps.forEach((s, i) => lines.push(`     ${i + 1}. ${s.symbolId ?? s.path}${s.startLine ? ` (L${s.startLine}-${s.endLine})` : ''} — ${s.why}`));
    }
    for (const clue of c.clues) lines.push(`   clue: ${clue.note ?? clue.path}`);
  }
  const deps = data.dependencyDiffs.filter((d) => d.changes.length);
  if (deps.length) {
    lines.push('');
    lines.push('dependency changes:');
    for (const d of deps) for (const ch of d.changes) lines.push(`   ${d.path}: ${ch.name} ${ch.change}${ch.from ? ` ${ch.from}` : ''}${ch.to ? ` → ${ch.to}` : ''}${ch.major ? ' (MAJOR)' : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function compute(opts: { workspace: string; repo: string; pr: string; base: string; head: string; json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const target = { repoId: opts.repo, prNumber: Number(opts.pr) };
    const envelope = () => ({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() });
    // Everything computeReview would refuse for the repo is checked before the first append: a failed
    // `compute` must leave the log as it was (issue 38: `--repo nosuch` recorded a ReviewRequested).
    await loadRepoState(await ledger.workspace(opts.workspace), opts.repo);
    // One code path from a PR to its review (SPEC §10): requesting returns the existing review.
    await ledger.run('requestReview', opts.workspace, envelope(), { ...target, baseSha: opts.base, headSha: opts.head });
    const bar = progressBar('indexing');
    ledger.services.set(INDEX_PROGRESS_SERVICE, bar);
    const out = await ledger.run('computeReview', opts.workspace, envelope(), { ...target, baseSha: opts.base, headSha: opts.head });
    bar.done();
    const ws = await ledger.workspace(opts.workspace);
    let latest: EventOfType<'ReviewComputed'> | undefined;
    for await (const e of ws.store.readStream(`pr-${opts.repo}-${opts.pr}`)) if (isEvent(e, 'ReviewComputed')) latest = e;
    if (!latest) return;
    // A note, not output: with --json stdout is exactly one JSON document.
    if (!out.response.eventIds.length) (opts.json ? process.stderr : process.stdout).write('identical inputs: the latest computation stands (nothing recorded)\n');
    const gated = await withGates(ws, target, latest.data);
    process.stdout.write(opts.json ? `${JSON.stringify(gated, null, 2)}\n` : formatCohortReport(latest.data) + formatGates(gated));
  });
}

/**
 * The text report's closing lines (issue 38: it had none): each gated axis as the verdict reads it — its
 * gate's status, what holds it — and the verdict's state. Absent when the computation is not the head
 * the verdict describes (withGates then leaves the data ungated).
 */
export function formatGates(gated: Record<string, any>): string {
  const lines: string[] = [''];
  const contract = gated.apiContract as { status: string; reason?: string | null; changes: Array<{ severity: string; ruleId: string; message: string }>; pending?: unknown[] } | undefined;
  if (contract) {
    const breaking = contract.changes.filter((c) => c.severity === 'breaking').length;
    lines.push(`api contract: ${contract.status} — ${contract.changes.length} change(s), ${breaking} breaking${contract.pending?.length ? `, ${contract.pending.length} awaiting a decision` : ''}${contract.reason ? ` (${contract.reason})` : ''}`);
    for (const c of contract.changes.slice(0, 20)) lines.push(`   ${c.severity.padEnd(12)} ${c.ruleId}: ${c.message}`);
    if (contract.changes.length > 20) lines.push(`   … ${contract.changes.length - 20} more (--json lists every one)`);
  }
  const visual = gated.visual as { status: string; reason?: string | null; snapshots: Array<{ snapshotId: string; state: string; changedRatio?: number }>; pending?: unknown[] } | undefined;
  if (visual) {
    const moved = visual.snapshots.filter((v) => v.state !== 'unchanged');
    lines.push(`visual: ${visual.status} — ${visual.snapshots.length} snapshot(s), ${moved.length} changed/added/removed${visual.pending?.length ? `, ${visual.pending.length} awaiting approval` : ''}${visual.reason ? ` (${visual.reason})` : ''}`);
    for (const v of moved.slice(0, 20)) lines.push(`   ${v.state.padEnd(9)} ${v.snapshotId}${v.changedRatio !== undefined ? ` (${(v.changedRatio * 100).toFixed(2)} % of pixels)` : ''}`);
  }
  const verdict = gated.verdict as { state: string; verdict: string; reasons: string[] } | undefined;
  if (verdict) {
    lines.push(`verdict: ${verdict.verdict} (${verdict.state})`);
    for (const r of verdict.reasons.slice(0, 5)) lines.push(`   ${r}`);
  }
  return lines.length > 1 ? `${lines.join('\n')}\n` : '';
}

/**
 * The computation as JSON, with each gated deterministic axis reporting its gate's state (SPEC §6, §11):
 * the computed `status` only says how complete the evidence is (it read "pass" beside an undecided
 * breaking change, issue 38), so `status` is the gate's (decisions and approvals folded in, as the
 * verdict reads it), the computed one becomes `evidence` (complete | partial | unavailable |
 * not_applicable), and `pending` lists what holds the gate. The verdict's state rides along.
 */
/** The axis computation's own status, named for what it says: how complete the evidence is. */
const evidenceOf = (status: string): string => (status === 'pass' ? 'complete' : status);

async function withGates(ws: WorkspaceHandle, target: { repoId: string; prNumber: number }, data: Record<string, any>): Promise<Record<string, unknown>> {
  const v = (await runQuery(verdictQuery, ws, target)).value as any;
  if (!v.exists || v.headSha !== data.headSha) return data;
  const gate = (axis: string, computed: Record<string, any>) => {
    const a = v.axes.find((x: any) => x.axis === axis);
    return a ? { ...computed, status: a.status, reason: a.reason ?? null, evidence: evidenceOf(computed.status), pending: a.pending ?? [] } : computed;
  };
  return { ...data, apiContract: gate('apiContract', data.apiContract), visual: gate('visual', data.visual), verdict: { state: v.state, verdict: v.verdict, reasons: v.reasons } };
}
