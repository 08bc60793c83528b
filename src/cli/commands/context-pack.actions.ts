import type { Command } from 'commander';
import { withLedger } from '../context';
import { runQuery } from '../../readmodels/queries/run-query';
import { reviewMetricsQuery, ReviewMetrics } from '../../readmodels/queries/review-metrics';
import { cohortContextQuery } from '../../readmodels/queries/cohort-context';
import type { ContextPack } from '../../context/pack-types';

/** A readable context pack: fragments with their diffs, then clues in certainty order, then what was degraded. */
export function formatContextPack(p: ContextPack): string {
  const out: string[] = [`context of ${p.title} [${p.cohortKey}] at ${p.headSha.slice(0, 10)} — ${p.usedBytes}/${p.budgetBytes} bytes${p.overBudget ? ' (OVER BUDGET: pointers only)' : ''}`];
  for (const f of p.fragments) {
    out.push('', `== fragment ${f.symbolId ?? f.id} (${f.change}, ${f.side} L${f.startLine}-${f.endLine})${f.diff === undefined ? ' [pointer]' : ''}`);
    if (f.diff) out.push(f.diff);
  }
  for (const c of p.clues) {
    out.push('', `-- ${c.relation}/${c.kind} ${c.ref} [${c.form}]`);
    if (c.content) out.push(c.content);
  }
  if (p.unresolved.length) out.push('', `unknown (name-only, no clue attached): ${p.unresolved.map((u) => `${u.from} → ${u.name}`).join(', ')}`);
  if (p.truncated.length) out.push('', `truncated (${p.truncated.length}): ${p.truncated.map((t) => `${t.ref} → ${t.form}`).join(', ')}`);
  return `${out.join('\n')}\n`;
}

/** The review metrics as a few readable lines (the CLI report). */
export function formatReviewMetrics(m: ReviewMetrics): string {
  const packs = 'perCohort' in m.contextPacks ? `median ${m.contextPacks.medianBytes} B, max ${m.contextPacks.maxBytes} B, ${m.contextPacks.degradedClues} degraded clue(s) at ${m.contextPacks.budgetBytes / 1024} KB` : `unavailable: ${m.contextPacks.unavailable}`;
  return [
    `files: ${m.files.changed} changed · ${m.files.filteredOut.total} filtered (generated ${m.files.filteredOut.generated}, vendored ${m.files.filteredOut.vendored}, version-only ${m.files.filteredOut.versionOnly}) · ${m.files.underReview} under review · ${m.files.targets} target file(s)`,
    `cohorts: ${m.cohorts.count} (${m.cohorts.semantic} semantic, ${m.cohorts.pathGrouped} by path) · ${m.cohorts.withinTargetFiles ? 'within' : 'MORE THAN'} one loop per target file (${m.cohorts.loopsPerTargetFile ?? '–'}) · ${m.cohorts.fragments} fragments, ${m.cohorts.fragmentsPerCohort ?? '–'} per cohort`,
    `context packs: ${packs}`,
    `progress: ${m.progress.clean} clean · ${m.progress.partial} partial · ${m.progress.unreviewed} unreviewed`,
  ].join('\n') + '\n';
}

const positiveInt = (v: string, name: string): number => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name}: must be a positive integer, got "${v}"`);
  return n;
};

/** The actions of cli.ts, loaded when `context` or `metrics` runs. */

export async function showContextPack(opts: { workspace: string; repo: string; pr: string; cohort: string; budget: string; json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const ws = await ledger.workspace(opts.workspace);
    const input = cohortContextQuery.input.parse({ repoId: opts.repo, prNumber: positiveInt(opts.pr, '--pr'), cohortKey: opts.cohort, budgetBytes: positiveInt(opts.budget, '--budget') });
    const { value } = await runQuery(cohortContextQuery, ws, input);
    process.stdout.write(opts.json || 'stale' in value ? `${JSON.stringify(value, null, 2)}\n` : formatContextPack(value));
  });
}

export async function showMetrics(opts: { workspace: string; repo: string; pr: string; json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const ws = await ledger.workspace(opts.workspace);
    const { value } = await runQuery(reviewMetricsQuery, ws, { repoId: opts.repo, prNumber: positiveInt(opts.pr, '--pr') });
    process.stdout.write(opts.json ? `${JSON.stringify(value, null, 2)}\n` : formatReviewMetrics(value));
  });
}
