/**
 * eval:contract — verdict accuracy of the API-contract engine on the corpus in ./corpus.ts (spec pairs
 * written for this project, labelled from oasdiff's documented semantics: ERR and WARN = breaking, INFO =
 * not). Every case runs for each OpenAPI version it declares (3.0 and 3.1 by default) and in both YAML and
 * JSON; a case counts as right only when both formats give the labelled verdict ("needs a decision": some
 * change is breaking or a warning). Also reported: per-family accuracy, and detection recall (the rule the
 * case is about fired, at any severity).
 *
 *   npm run eval:contract [-- --verbose]
 */
import { stringify } from 'yaml';
import { diffSpecs } from '../../src/axes/api-contract/diff';
import { loadSpecFromTexts } from '../../src/axes/api-contract/document';
import { needsDecision } from '../../src/axes/types';
import { BASE_TWEAKS, baseSpec, CASES, HEAD_EDITS, type Version } from './corpus';

const AS_OF = '2026-12-01';

async function verdictOf(base: unknown, head: unknown, format: 'json' | 'yaml') {
  const file = `openapi.${format}`;
  const text = (x: unknown) => (format === 'json' ? JSON.stringify(x) : stringify(x, { aliasDuplicateObjects: false }));
  const b = await loadSpecFromTexts(file, { [file]: text(base) });
  const h = await loadSpecFromTexts(file, { [file]: text(head) });
  const changes = diffSpecs(b, h, file, { asOf: AS_OF }).changes;
  return { breaking: changes.some((c) => needsDecision(c.severity)), rules: new Set(changes.map((c) => c.ruleId)), changes };
}

export async function main(args: string[]): Promise<void> {
  const verbose = args.includes('--verbose');
  let total = 0;
  let right = 0;
  const fam = new Map<string, { n: number; right: number; detect: number; detectN: number; breakingN: number; breakingRight: number }>();
  const misses: string[] = [];
  for (const c of CASES) {
    for (const v of c.versions ?? (['3.0', '3.1'] as Version[])) {
      const base = baseSpec(v);
      BASE_TWEAKS[c.id]?.(base, v);
      const head = JSON.parse(JSON.stringify(base));
      c.mutate(head, v);
      HEAD_EDITS[c.id]?.(head, v);
      const results = await Promise.all((['json', 'yaml'] as const).map((f) => verdictOf(base, head, f)));
      const ok = results.every((r) => r.breaking === c.breaking);
      const detected = c.rule === undefined || results.every((r) => r.rules.has(c.rule!));
      const f = fam.get(c.family) ?? { n: 0, right: 0, detect: 0, detectN: 0, breakingN: 0, breakingRight: 0 };
      f.n++;
      if (ok) f.right++;
      if (c.rule !== undefined) {
        f.detectN++;
        if (detected) f.detect++;
      }
      if (c.breaking) {
        f.breakingN++;
        if (ok) f.breakingRight++;
      }
      fam.set(c.family, f);
      total++;
      if (ok) right++;
      if (!ok || !detected || verbose) {
        const r = results[0];
        misses.push(`${ok ? (detected ? 'ok  ' : 'miss-rule') : 'WRONG'} ${c.id}@${v}: label ${c.breaking ? 'breaking' : 'not breaking'} (oasdiff ${c.oasdiff}), got ${r.breaking ? 'breaking' : 'not breaking'}; rules ${[...r.rules].join(', ') || 'none'}${r.changes.length ? ` — ${r.changes.map((x) => `${x.severity}:${x.message}`).join(' | ').slice(0, 400)}` : ''}`);
      }
    }
  }
  for (const m of misses) console.log(m);
  console.log('\nfamily                      cases  verdict  breaking-graded  rule detected');
  const families: Record<string, unknown> = {};
  for (const [name, f] of [...fam].sort()) {
    console.log(`${name.padEnd(26)} ${String(f.n).padStart(6)}  ${(f.right / f.n).toFixed(2).padStart(7)}  ${f.breakingN ? `${f.breakingRight}/${f.breakingN}`.padStart(15) : '-'.padStart(15)}  ${f.detectN ? `${f.detect}/${f.detectN}`.padStart(13) : '-'.padStart(13)}`);
    families[name] = { cases: f.n, accuracy: Number((f.right / f.n).toFixed(3)), recallBreaking: f.breakingN ? Number((f.breakingRight / f.breakingN).toFixed(3)) : null, ruleRecall: f.detectN ? Number((f.detect / f.detectN).toFixed(3)) : null };
  }
  const det = [...fam.values()].reduce((a, f) => [a[0] + f.detect, a[1] + f.detectN], [0, 0]);
  console.log(`\n${right}/${total} verdicts right (${(right / total).toFixed(3)}); rule detected in ${det[0]}/${det[1]} (${(det[0] / det[1]).toFixed(3)})`);
  console.log(JSON.stringify({ bench: 'eval-contract', cases: total, right, accuracy: Number((right / total).toFixed(3)), ruleRecall: Number((det[0] / det[1]).toFixed(3)), families }));
}
