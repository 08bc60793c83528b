/**
 * docs/cohorts.md's table of formation signals, rendered from the registry (registry.ts), so the documented signals,
 * their order, their defaults and their tests can never drift from the ones formCohorts runs. `--check` exits 1 when
 * stale.
 *   node -r ./tools/ts-register.js src/cohorts/signal-docs.ts [--check]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SIGNALS, STAGES } from './registry';

const ROOT = path.join(__dirname, '..', '..');
export const COHORTS_DOC = path.join(ROOT, 'docs', 'cohorts.md');
const GENERATED = 'generated from src/cohorts/registry.ts by src/cohorts/signal-docs.ts; do not edit';
export const SIGNALS_BEGIN = `<!-- signals-table:begin (${GENERATED}) -->`;
export const SIGNALS_END = '<!-- signals-table:end -->';

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

/** Replaces the block from the begin marker (matched by its first words, `<!-- signals-table:begin`) through the end one. */
export function withSignalTable(doc: string): string {
  const s = doc.indexOf(SIGNALS_BEGIN.slice(0, SIGNALS_BEGIN.indexOf(' (')));
  const e = doc.indexOf(SIGNALS_END);
  if (s < 0 || e < s) throw new Error(`docs/cohorts.md: the markers ${SIGNALS_BEGIN} … ${SIGNALS_END} are missing`);
  return doc.slice(0, s) + renderSignalTable() + doc.slice(e + SIGNALS_END.length);
}

if (require.main === module) {
  const current = fs.readFileSync(COHORTS_DOC, 'utf8');
  const next = withSignalTable(current);
  if (next !== current) {
    if (process.argv.includes('--check')) {
      console.error(`${COHORTS_DOC}: the signal table is stale; run node -r ./tools/ts-register.js src/cohorts/signal-docs.ts`);
      process.exit(1);
    }
    fs.writeFileSync(COHORTS_DOC, next);
    console.log(`wrote the signal table to ${COHORTS_DOC}`);
  }
}
