/**
 * docs/cohorts.md's generated tables: the formation signals, rendered from the registry (registry.ts), so the
 * documented signals, their order, their defaults and their tests can never drift from the ones formCohorts runs; and
 * the latest results, rendered from docs/cohorts-results.jsonl (one `eval:cohorts` summary line per repository, the
 * `{"bench":"eval-cohorts",…}` line plus its role and engine version). `--check` exits 1 when stale.
 *   node -r ./tools/ts-register.js src/cohorts/cohort-docs.ts [--check]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SIGNALS, STAGES } from './registry';

const ROOT = path.join(__dirname, '..', '..');
export const COHORTS_DOC = path.join(ROOT, 'docs', 'cohorts.md');
const GENERATED = 'generated from src/cohorts/registry.ts by src/cohorts/cohort-docs.ts; do not edit';
export const SIGNALS_BEGIN = `<!-- signals-table:begin (${GENERATED}) -->`;
export const SIGNALS_END = '<!-- signals-table:end -->';
export const RESULTS = path.join(ROOT, 'docs', 'cohorts-results.jsonl');
const RESULTS_GENERATED = 'generated from docs/cohorts-results.jsonl by src/cohorts/cohort-docs.ts; do not edit';
export const RESULTS_BEGIN = `<!-- results-table:begin (${RESULTS_GENERATED}) -->`;
export const RESULTS_END = '<!-- results-table:end -->';

interface Score { median: number; mean: number }
/** One repository's line of docs/cohorts-results.jsonl: eval:cohorts' summary with its role and engine. */
export interface ResultLine {
  repo: string;
  role: 'evaluation' | 'validation' | 'fresh';
  engineVersion: string;
  cases: number;
  engine: Score;
  byFile: Score;
  byDirectory: Score;
  vsDirectory: { wins: number; ties: number; losses: number };
  sameCommitPairsSplit: number;
  differentCommitPairsJoined: number;
  /** The engine it was measured against, case by case. */
  against?: { engineVersion: string; engine: Score; casesUp: number; casesDown: number };
}

export const readResults = (file = RESULTS): ResultLine[] =>
  fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as ResultLine);

const STAGE_WORDS: Record<(typeof STAGES)[number], string> = {
  input: 'input (computeReview)',
  edge: 'edge rule',
  link: 'link pass',
  'pre-join': 'join, before references',
  join: 'join',
};

const cell = (s: string): string => s.replace(/\|/g, '\\|');

export function renderSignalTable(): string {
  const lines = [SIGNALS_BEGIN, '', '| # | Signal | Stage | Default | What it joins | What the cohort\'s reason says | Measured | Test |', '|---|---|---|---|---|---|---|---|'];
  const ordered = STAGES.flatMap((stage) => SIGNALS.filter((s) => s.stage === stage));
  ordered.forEach((s, i) => {
    const file = `src/cohorts/signals/${s.id}.ts`;
    lines.push(`| ${i + 1} | [\`${s.id}\`](../${file}) | ${STAGE_WORDS[s.stage]} | ${s.default ? 'on' : 'off'} | ${cell(s.joins)} | ${cell(s.evidence)} | ${cell(s.measured)} | [${path.posix.basename(s.test)}](../${s.test}) |`);
  });
  lines.push('', `${SIGNALS.filter((s) => s.default).length} of ${SIGNALS.length} on by default. Rows are in the order formCohorts applies them.`, '', SIGNALS_END);
  return lines.join('\n');
}

const score = (s: Score): string => `${s.median.toFixed(3)} / ${s.mean.toFixed(3)}`;
const percent = (x: number): string => `${(x * 100).toFixed(1)} %`;
const ROLES: ResultLine['role'][] = ['evaluation', 'validation', 'fresh'];

export function renderResultsTable(results: ResultLine[]): string {
  const lines = [RESULTS_BEGIN, '', '| repo | role | engine | cases | median / mean | against | cases up / down | by-file | by-directory | W/T/L vs by-dir | same-commit split | diff-commit joined |', '|---|---|---|---|---|---|---|---|---|---|---|---|'];
  for (const role of ROLES) {
    for (const r of results.filter((x) => x.role === role)) {
      const against = r.against ? `${score(r.against.engine)} (${r.against.engineVersion})` : '';
      const upDown = r.against ? `${r.against.casesUp} / ${r.against.casesDown}` : '';
      lines.push(`| ${r.repo} | ${r.role} | ${r.engineVersion} | ${r.cases} | **${score(r.engine)}** | ${against} | ${upDown} | ${score(r.byFile)} | ${score(r.byDirectory)} | ${r.vsDirectory.wins}/${r.vsDirectory.ties}/${r.vsDirectory.losses} | ${percent(r.sameCommitPairsSplit)} | ${percent(r.differentCommitPairsJoined)} |`);
    }
  }
  lines.push('', RESULTS_END);
  return lines.join('\n');
}

/** Replaces the block from the begin marker (matched by its first words, `<!-- signals-table:begin`) through the end one. */
function replaceBetween(doc: string, begin: string, end: string, body: string): string {
  const s = doc.indexOf(begin.slice(0, begin.indexOf(' (')));
  const e = doc.indexOf(end);
  if (s < 0 || e < s) throw new Error(`docs/cohorts.md: the markers ${begin} … ${end} are missing`);
  return doc.slice(0, s) + body + doc.slice(e + end.length);
}

export const withSignalTable = (doc: string): string => replaceBetween(doc, SIGNALS_BEGIN, SIGNALS_END, renderSignalTable());
export const withResultsTable = (doc: string, results = readResults()): string => replaceBetween(doc, RESULTS_BEGIN, RESULTS_END, renderResultsTable(results));

if (require.main === module) {
  const current = fs.readFileSync(COHORTS_DOC, 'utf8');
  const next = withResultsTable(withSignalTable(current));
  if (next !== current) {
    if (process.argv.includes('--check')) {
      console.error(`${COHORTS_DOC}: a generated table is stale; run node -r ./tools/ts-register.js src/cohorts/cohort-docs.ts`);
      process.exit(1);
    }
    fs.writeFileSync(COHORTS_DOC, next);
    console.log(`wrote the generated tables to ${COHORTS_DOC}`);
  }
}
