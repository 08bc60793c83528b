/**
 * bench:contract — `contract-diff` as a user runs it (a fresh `review-ledger contract-diff BASE HEAD --json`
 * process: start-up, module loading, reading, parsing, diffing, classifying, printing) against Optic's raw
 * `diff()` (@useoptic/openapi-utilities: a fresh node process that loads it, reads and parses both files —
 * JSON.parse, or js-yaml for YAML, the fastest parser there is — and diffs). Same pairs, YAML and JSON.
 *
 * Pairs: GitHub's descriptions (@octokit/openapi, ghes-3.17 → ghes-3.18; the YAML twin is written from the
 * JSON into .bench-cache/) and the real-spec pairs in --real DIR (default .bench-cache/contract-real), named
 * <spec>@base.{yaml,json} and <spec>@head.{yaml,json}. docs/contract-rules.md says which commits of
 * Stripe, Cloudflare and OpenAI they are and how to extract them (`node bench/run.js contract --prepare`).
 *
 * Each round runs every tool once per pair and format, interleaved, each in its own process timed by
 * /usr/bin/time (wall time, peak RSS of that process alone); figures are medians over rounds. Targets
 * (issue #17): ours ≤ 1.0× Optic in both formats, peak RSS < 512 MiB. The breaking and warning findings
 * of each real pair are printed (counts per rule and a sample) for the hand check in docs/contract-rules.md.
 *
 * Rounds alternate the two tools (A B A B, default 5 rounds); the JSON line carries min / median / max of
 * wall and CPU per side, the median of the per-round CPU ratios, and the load average at start and end.
 *
 *   npm run bench:contract [-- --runs 5] [-- --only cloudflare,stripe] [-- --formats json,yaml]
 *   node bench/run.js contract --prepare      (extract the real pairs from fetched mirrors, see PREPARE)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadAverage, type Spread } from './support/abab';
import { round } from './support/report';

const ROOT = path.join(__dirname, '..');
const CACHE = path.join(ROOT, '.bench-cache');
const GENERATED = path.join(ROOT, 'node_modules', '@octokit', 'openapi', 'generated');

/** The real pairs: a month of churn each (git dir of the fetched mirror, path in the repo, base and head commit). */
const PREPARE: Record<string, { git: string; file: string; base: string; head: string }> = {
  cloudflare: { git: '/work/.mirror/cloudflare+api-schemas/repo', file: 'openapi.yaml', base: '289c84b0', head: '5e8071fc' }, // 2023-06-20 → 2023-07-31, heavy allOf
  stripe: { git: '/work/.mirror/stripe+openapi/repo', file: 'openapi/spec3.yaml', base: '38321b8c', head: 'ef16c287' }, // 2023-08-09 → 2023-09-05
  openai: { git: '/work/.mirror/openai+openai-openapi/repo', file: 'openapi.yaml', base: 'f940017', head: 'f85dbe2' }, // 2026-07-22 → 2026-08-21
};

function prepare(dir: string): void {
  const jsYaml = require('js-yaml') as typeof import('js-yaml');
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, p] of Object.entries(PREPARE)) {
    for (const side of ['base', 'head'] as const) {
      const text = execFileSync('git', ['--git-dir', p.git, 'show', `${p[side]}:${p.file}`], { maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' });
      fs.writeFileSync(path.join(dir, `${name}@${side}.yaml`), text);
      fs.writeFileSync(path.join(dir, `${name}@${side}.json`), JSON.stringify(jsYaml.load(text, { schema: jsYaml.CORE_SCHEMA })));
    }
    console.log(`prepared ${name} (${p.base} → ${p.head})`);
  }
}

interface Pair {
  name: string;
  files: Record<'json' | 'yaml', [string, string]>;
}

function githubPair(): Pair | null {
  const base = path.join(GENERATED, 'ghes-3.17.json');
  const head = path.join(GENERATED, 'ghes-3.18.json');
  if (!fs.existsSync(base) || !fs.existsSync(head)) return null;
  const dir = path.join(CACHE, 'contract-github');
  fs.mkdirSync(dir, { recursive: true });
  const jsYaml = require('js-yaml') as typeof import('js-yaml');
  const yamlOf = (src: string, name: string) => {
    const out = path.join(dir, name);
    if (!fs.existsSync(out)) fs.writeFileSync(out, jsYaml.dump(JSON.parse(fs.readFileSync(src, 'utf8')), { noRefs: true, lineWidth: -1 }));
    return out;
  };
  return { name: 'github', files: { json: [base, head], yaml: [yamlOf(base, 'ghes-3.17.yaml'), yamlOf(head, 'ghes-3.18.yaml')] } };
}

function realPairs(dir: string): Pair[] {
  if (!fs.existsSync(dir)) return [];
  const names = [...new Set(fs.readdirSync(dir).filter((f) => f.includes('@base.')).map((f) => f.split('@')[0]))].sort();
  return names
    .filter((n) => ['json', 'yaml'].every((e) => fs.existsSync(path.join(dir, `${n}@base.${e}`)) && fs.existsSync(path.join(dir, `${n}@head.${e}`))))
    .map((n) => ({ name: n, files: { json: [path.join(dir, `${n}@base.json`), path.join(dir, `${n}@head.json`)], yaml: [path.join(dir, `${n}@base.yaml`), path.join(dir, `${n}@head.yaml`)] } }));
}

const OPTIC_SCRIPT = `
const fs = require('node:fs');
const { diff } = require('@useoptic/openapi-utilities');
const load = (f) => { const t = fs.readFileSync(f, 'utf8'); return f.endsWith('.json') ? JSON.parse(t) : require('js-yaml').load(t, { schema: require('js-yaml').CORE_SCHEMA }); };
const n = diff(load(process.argv[2]), load(process.argv[3])).length;
process.stdout.write(JSON.stringify({ rawDiffs: n }) + '\\n');
`;

interface Run {
  ms: number;
  /** user + system CPU time of the process: far less sensitive than wall time to a machine shared with other work */
  cpuMs: number;
  rssMiB: number;
  stdout: string;
}

/** One process, timed from outside: wall time and the peak RSS of that process (GNU time). */
function timed(args: string[]): Run {
  const r = spawnSync('/usr/bin/time', ['-f', '@@time %e %M %U %S', ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 512 * 1024 * 1024, env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '' } });
  const line = r.stderr.split('\n').find((l) => l.startsWith('@@time '));
  if (!line || (r.status !== 0 && r.status !== 1)) throw new Error(`${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const [, secs, kb, user, sys] = line.split(' ');
  return { ms: Math.round(Number(secs) * 1000), cpuMs: Math.round((Number(user) + Number(sys)) * 1000), rssMiB: Number(kb) / 1024, stdout: r.stdout };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const f1 = (n: number) => n.toFixed(1);
const spreadOf = (xs: number[]): Spread => ({ min: Math.min(...xs), median: median(xs), max: Math.max(...xs) });

function ensureBuilt(): string {
  const main = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
  const newest = (dir: string): number =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((m, e) => Math.max(m, e.isDirectory() ? newest(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).mtimeMs), 0);
  if (!fs.existsSync(main) || fs.statSync(main).mtimeMs < newest(path.join(ROOT, 'src'))) {
    console.log('building the CLI (tsc -p tsconfig.build.json) so contract-diff runs as a user runs it…');
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  }
  return path.join(ROOT, 'bin', 'review-ledger.js');
}

export async function main(args: string[]): Promise<void> {
  const arg = (name: string) => (args.indexOf(name) >= 0 ? args[args.indexOf(name) + 1] : undefined);
  const realDir = arg('--real') ?? path.join(CACHE, 'contract-real');
  if (args.includes('--prepare')) return prepare(realDir);
  const runs = Number(arg('--runs') ?? 5);
  const loadAtStart = loadAverage();
  const only = arg('--only')?.split(',');
  const formats = (arg('--formats') ?? 'json,yaml').split(',') as Array<'json' | 'yaml'>;
  const pairs = [githubPair(), ...realPairs(realDir)].filter((p): p is Pair => !!p && (!only || only.includes(p.name)));
  if (pairs.length === 0) throw new Error('no pairs: is @octokit/openapi installed, and did `node bench/run.js contract --prepare` run?');
  const bin = ensureBuilt();
  // inside the project, so it resolves @useoptic/openapi-utilities and js-yaml from node_modules
  fs.mkdirSync(CACHE, { recursive: true });
  const opticScript = path.join(CACHE, `optic-diff-${process.pid}.js`);
  fs.writeFileSync(opticScript, OPTIC_SCRIPT);
  const nodeWithPaths = (script: string) => [process.execPath, script];
  const results: Record<string, Record<string, unknown>> = {};
  const findings: Record<string, Record<string, number>> = {};
  const samples: Record<string, Array<{ ruleId: string; severity: string; message: string }>> = {};
  const times = new Map<string, { ours: Run[]; optic: Run[] }>();
  for (let round = 0; round < runs; round++) {
    for (const p of pairs) {
      for (const fmt of formats) {
        const key = `${p.name}.${fmt}`;
        const t = times.get(key) ?? { ours: [], optic: [] };
        const [b, h] = p.files[fmt];
        t.ours.push(timed([...nodeWithPaths(bin), 'contract-diff', b, h, '--json', '--as-of', '2026-12-01']));
        t.optic.push(timed([process.execPath, opticScript, b, h]));
        times.set(key, t);
      }
    }
  }
  fs.rmSync(opticScript, { force: true });
  for (const p of pairs) {
    for (const fmt of formats) {
      const key = `${p.name}.${fmt}`;
      const t = times.get(key)!;
      const out = JSON.parse(t.ours[t.ours.length - 1].stdout) as { summary: Record<string, number>; changes: Array<{ ruleId: string; severity: string; message: string }> };
      const opticOut = JSON.parse(t.optic[t.optic.length - 1].stdout.trim().split('\n').pop()!) as { rawDiffs: number };
      const oursMs = median(t.ours.map((r) => r.ms));
      const opticMs = median(t.optic.map((r) => r.ms));
      const oursCpu = median(t.ours.map((r) => r.cpuMs));
      const opticCpu = median(t.optic.map((r) => r.cpuMs));
      const size = (fs.statSync(p.files[fmt][0]).size + fs.statSync(p.files[fmt][1]).size) / 1024 / 1024;
      results[key] = {
        sizeMiB: Number(f1(size)),
        oursMs,
        opticMs,
        oursOverOptic: Number((oursMs / opticMs).toFixed(2)),
        oursCpuMs: oursCpu,
        opticCpuMs: opticCpu,
        oursOverOpticCpu: Number((oursCpu / opticCpu).toFixed(2)),
        oursOverOpticCpuPaired: round(median(t.ours.map((r, i) => r.cpuMs / t.optic[i].cpuMs)), 2),
        oursWallMs: spreadOf(t.ours.map((r) => r.ms)),
        opticWallMs: spreadOf(t.optic.map((r) => r.ms)),
        oursCpuMsSpread: spreadOf(t.ours.map((r) => r.cpuMs)),
        opticCpuMsSpread: spreadOf(t.optic.map((r) => r.cpuMs)),
        oursPeakRssMiB: Number(f1(Math.max(...t.ours.map((r) => r.rssMiB)))),
        opticPeakRssMiB: Number(f1(Math.max(...t.optic.map((r) => r.rssMiB)))),
        summary: out.summary,
        opticRawDiffs: opticOut.rawDiffs,
      };
      console.log(
        `${key.padEnd(18)} ${f1(size).padStart(5)} MiB  ours ${String(oursMs).padStart(6)} ms (${f1(Math.max(...t.ours.map((r) => r.rssMiB)))} MiB)  optic ${String(opticMs).padStart(6)} ms (${f1(Math.max(...t.optic.map((r) => r.rssMiB)))} MiB)  ours/optic ${(oursMs / opticMs).toFixed(2)}× wall, ${(oursCpu / opticCpu).toFixed(2)}× CPU (${oursCpu} vs ${opticCpu} ms)  ${JSON.stringify(out.summary)}`,
      );
      if (fmt === formats[0]) {
        const counts: Record<string, number> = {};
        for (const c of out.changes) if (c.severity === 'breaking' || c.severity === 'warning') counts[`${c.ruleId} (${c.severity})`] = (counts[`${c.ruleId} (${c.severity})`] ?? 0) + 1;
        findings[p.name] = counts;
        const decisive = out.changes.filter((c) => c.severity === 'breaking' || c.severity === 'warning');
        const firstPerRule = decisive.filter((c, i) => decisive.findIndex((d) => d.ruleId === c.ruleId) === i);
        samples[p.name] = firstPerRule.slice(0, 25).map(({ ruleId, severity, message }) => ({ ruleId, severity, message: message.slice(0, 300) }));
      }
    }
  }
  console.log('\nbreaking and warning findings per real pair (counts per rule; first of each rule):');
  for (const [name, counts] of Object.entries(findings)) {
    console.log(`  ${name}: ${JSON.stringify(counts)}`);
    for (const s of samples[name]) console.log(`    [${s.ruleId}] ${s.message}`);
  }
  console.log(JSON.stringify({ bench: 'contract', runs, machine: 'shared', load: { start: loadAtStart, end: loadAverage() }, pairs: results }));
}
