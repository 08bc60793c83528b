/**
 * eval:contract — verdict accuracy of the API-contract engine on the corpus in ./corpus.ts (spec pairs
 * written for this project, labelled from oasdiff's documented semantics: ERR and WARN = breaking, INFO =
 * not). Every case runs for each OpenAPI version it declares (3.0 and 3.1 by default) and in both YAML and
 * JSON; a case counts as right only when both formats give the labelled verdict ("needs a decision": some
 * change is breaking or a warning). Also reported: per-family accuracy, and detection recall (the rule the
 * case is about fired, at any severity), and oasdiff-id exactness: for each case labelled with one oasdiff rule
 * id and level, whether a finding prints exactly that id and level — per finding under `--profile oasdiff`
 * ("finding"), and with the former one-id-per-rule mapping graded by our severities ("rule map").
 *
 *   npm run eval:contract [-- --verbose]
 */
import { stringify } from 'yaml';
import { diffSpecs } from '../../src/axes/api-contract/diff';
import { loadSpecFromTexts } from '../../src/axes/api-contract/document';
import { levelOfSeverity } from '../../src/axes/api-contract/oasdiff-id';
import { applyProfile, oasdiffChangelog } from '../../src/axes/api-contract/profile';
import { RULES_BY_ID } from '../../src/axes/api-contract/rules';
import { needsDecision } from '../../src/axes/types';
import { BASE_TWEAKS, baseSpec, CASES, HEAD_EDITS, type Version } from './corpus';

const AS_OF = '2026-12-01';

async function verdictOf(base: unknown, head: unknown, format: 'json' | 'yaml') {
  const file = `openapi.${format}`;
  const text = (x: unknown) => (format === 'json' ? JSON.stringify(x) : stringify(x, { aliasDuplicateObjects: false }));
  const b = await loadSpecFromTexts(file, { [file]: text(base) });
  const h = await loadSpecFromTexts(file, { [file]: text(head) });
  const diff = diffSpecs(b, h, file, { asOf: AS_OF });
  const changes = diff.changes;
  // what `contract-diff --format oasdiff --profile oasdiff` prints: detected as oasdiff does where we deliberately
  // differ, graded by oasdiff's levels, one entry per finding and affected operation
  const asOasdiff = diffSpecs(b, h, file, { asOf: AS_OF, profile: 'oasdiff' });
  const graded = applyProfile(asOasdiff.changes, asOasdiff.oasdiff, 'oasdiff');
  const LEVEL = { 3: 'ERR', 2: 'WARN', 1: 'INFO' } as const;
  const perFinding = new Set(oasdiffChangelog(graded, asOasdiff.oasdiff, 'oasdiff', file).map((e) => `${e.id} ${LEVEL[e.level]}`));
  const perRule = new Set(changes.flatMap((c) => {
    const o = RULES_BY_ID.get(c.ruleId)?.oasdiff;
    return o ? [`${o.id} ${levelOfSeverity(c.severity)}`] : [];
  }));
  return { breaking: changes.some((c) => needsDecision(c.severity)), rules: new Set(changes.map((c) => c.ruleId)), changes, perFinding, perRule };
}

export async function main(args: string[]): Promise<void> {
  const verbose = args.includes('--verbose');
  let total = 0;
  let right = 0;
  const fam = new Map<string, { n: number; right: number; detect: number; detectN: number; breakingN: number; breakingRight: number }>();
  const misses: string[] = [];
  const ids = { n: 0, finding: 0, rule: 0, wrong: [] as string[] };
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
      const labelled = /^([a-z][a-z-]+[a-z]) (ERR|WARN|INFO)\b/.exec(c.oasdiff);
      if (labelled) {
        const want = `${labelled[1]} ${labelled[2]}`;
        ids.n++;
        if (results.every((r) => r.perFinding.has(want))) ids.finding++;
        else ids.wrong.push(`oasdiff-id ${c.id}@${v}: want ${want}, got ${[...results[0].perFinding].join(', ') || 'none'}`);
        if (results.every((r) => r.perRule.has(want))) ids.rule++;
      }
      total++;
      if (ok) right++;
      if (!ok || !detected || verbose) {
        const r = results[0];
        misses.push(`${ok ? (detected ? 'ok  ' : 'miss-rule') : 'WRONG'} ${c.id}@${v}: label ${c.breaking ? 'breaking' : 'not breaking'} (oasdiff ${c.oasdiff}), got ${r.breaking ? 'breaking' : 'not breaking'}; rules ${[...r.rules].join(', ') || 'none'}${r.changes.length ? ` — ${r.changes.map((x) => `${x.severity}:${x.message}`).join(' | ').slice(0, 400)}` : ''}`);
      }
    }
  }
  for (const m of misses) console.log(m);
  for (const m of ids.wrong) console.log(m);
  console.log('\nfamily                      cases  verdict  breaking-graded  rule detected');
  const families: Record<string, unknown> = {};
  for (const [name, f] of [...fam].sort()) {
    console.log(`${name.padEnd(26)} ${String(f.n).padStart(6)}  ${(f.right / f.n).toFixed(2).padStart(7)}  ${f.breakingN ? `${f.breakingRight}/${f.breakingN}`.padStart(15) : '-'.padStart(15)}  ${f.detectN ? `${f.detect}/${f.detectN}`.padStart(13) : '-'.padStart(13)}`);
    families[name] = { cases: f.n, accuracy: Number((f.right / f.n).toFixed(3)), recallBreaking: f.breakingN ? Number((f.breakingRight / f.breakingN).toFixed(3)) : null, ruleRecall: f.detectN ? Number((f.detect / f.detectN).toFixed(3)) : null };
  }
  const det = [...fam.values()].reduce((a, f) => [a[0] + f.detect, a[1] + f.detectN], [0, 0]);
  console.log(`\n${right}/${total} verdicts right (${(right / total).toFixed(3)}); rule detected in ${det[0]}/${det[1]} (${(det[0] / det[1]).toFixed(3)})`);
  console.log(`oasdiff id+level exact: ${ids.finding}/${ids.n} per finding (--profile oasdiff), ${ids.rule}/${ids.n} with the one-id-per-rule map`);
  console.log(JSON.stringify({ bench: 'eval-contract', cases: total, right, accuracy: Number((right / total).toFixed(3)), ruleRecall: Number((det[0] / det[1]).toFixed(3)), oasdiffIdExact: { cases: ids.n, perFinding: ids.finding, ruleMap: ids.rule }, families }));
}
