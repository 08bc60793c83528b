import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { languageOf } from '../src/codegraph/languages/languages';
import { editKey } from '../src/cohorts/evidence/similar-edits';
import { BOILERPLATE_FILE, BoilerplateLines } from '../src/cohorts/boilerplate';
import { argValue } from './support/report';

/**
 * Learns the boilerplate lines `similar-edit` ignores (src/cohorts/boilerplate-lines.json) from the history of the
 * corpus's TRAINING repositories: the dumps' repositories (bench/cohort-corpus) sorted by name, even positions
 * (0, 2, 4, …); the odd positions are the validation half, never read here. For each repository, the last
 * COMMITS_PER_REPO non-merge commits of HEAD's history (`git log -p -U0`), changed lines of code files (a file with a
 * grammar) only, a commit changing more than MAX_COMMIT_LINES lines skipped (vendored or generated code). A line counts
 * as the engine compares it (`editKey`: normalized, ≥ MIN_EDIT_CHARS, no comment), once per commit whatever its sign.
 * Kept: the lines found in at least MIN_STORED_REPOS repositories, most repositories first (then most commits, then
 * text), at most MAX_LINES. Deterministic: same clones, same file; the date is the newest HEAD commit read.
 *
 * Usage: node bench/run.js learn-boilerplate --clones /tmp/corpus [--threshold N] [--write]
 */
export const COMMITS_PER_REPO = 1500;
export const MAX_COMMIT_LINES = 2000;
export const MIN_STORED_REPOS = 2;
export const MAX_LINES = 400;
const DUMPS = path.join(__dirname, 'cohort-corpus');

/** The corpus halves: repository names (`owner+name`) of the dumps, sorted; even positions train. */
export function corpusHalves(dir = DUMPS): { training: string[]; validation: string[] } {
  const names = fs.readdirSync(dir).filter((f) => /\.jsonl(\.gz)?$/.test(f)).map((f) => f.replace(/\.jsonl(\.gz)?$/, '')).sort();
  return { training: names.filter((_, i) => i % 2 === 0), validation: names.filter((_, i) => i % 2 === 1) };
}

async function linesOf(dir: string, onCommit: (lines: Set<string>) => void): Promise<number> {
  const git = spawn('git', ['-C', dir, 'log', '--no-merges', '-n', String(COMMITS_PER_REPO), '-p', '-U0', '--no-color', '--no-ext-diff', '--no-renames', '--format=%x00%H', 'HEAD'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let buf = '';
  let lines = new Set<string>();
  let changed = 0;
  let code = false;
  let commits = 0;
  const flush = () => {
    if (changed && changed <= MAX_COMMIT_LINES && lines.size) onCommit(lines);
    lines = new Set();
    changed = 0;
  };
  const take = (l: string) => {
    if (l.startsWith('\0')) {
      flush();
      commits++;
      return;
    }
    if (l.startsWith('diff --git ')) {
      const m = / b\/(.*)$/.exec(l);
      code = !!m && !!languageOf(m[1]);
      return;
    }
    if (!code || l.startsWith('+++') || l.startsWith('---')) return;
    if (l[0] !== '+' && l[0] !== '-') return;
    changed++;
    const k = editKey(l[0] as '+' | '-', l.slice(1));
    if (k) lines.add(k.slice(1));
  };
  for await (const chunk of git.stdout) {
    buf += chunk.toString('utf8');
    const parts = buf.split('\n');
    buf = parts.pop()!;
    for (const l of parts) take(l);
  }
  if (buf) take(buf);
  flush();
  return commits;
}

/** The lines of the repositories' histories (see above), stored order, and the newest HEAD date read. */
export async function learnBoilerplate(repos: Array<{ name: string; dir: string }>, log: (s: string) => void = () => {}): Promise<{ lines: Array<[string, number, number]>; date: string }> {
  const repoSets = new Map<string, Set<string>>();
  const commits = new Map<string, number>();
  let newest = '';
  for (const { name, dir } of repos) {
    const n = await linesOf(dir, (ls) => {
      for (const l of ls) {
        commits.set(l, (commits.get(l) ?? 0) + 1);
        const r = repoSets.get(l) ?? new Set<string>();
        r.add(name);
        repoSets.set(l, r);
      }
    });
    const date = await new Promise<string>((resolve) => {
      const g = spawn('git', ['-C', dir, 'log', '-1', '--format=%cI', 'HEAD']);
      let out = '';
      g.stdout.on('data', (d) => (out += d));
      g.on('close', () => resolve(new Date(out.trim()).toISOString().slice(0, 10)));
    });
    if (date > newest) newest = date;
    log(`${name}: ${n} commits read`);
  }
  const lines = [...repoSets]
    .map(([text, r]): [string, number, number] => [text, r.size, commits.get(text)!])
    .filter(([, r]) => r >= MIN_STORED_REPOS)
    .sort((a, b) => b[1] - a[1] || b[2] - a[2] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, MAX_LINES);
  return { lines, date: newest };
}

/** The file's text: one line per learned line. */
export function renderBoilerplate(b: BoilerplateLines): string {
  return JSON.stringify(b, null, 1).replace(/\[\n\s+("(?:[^"\\]|\\.)*"),\n\s+(\d+),\n\s+(\d+)\n\s+\]/g, '[$1, $2, $3]') + '\n';
}

export async function main(args: string[]): Promise<void> {
  const clones = argValue(args, '--clones') ?? '/tmp/corpus';
  const threshold = Number(argValue(args, '--threshold') ?? 0);
  const { training } = corpusHalves();
  for (const name of training) if (!fs.existsSync(path.join(clones, name))) throw new Error(`no clone of ${name} in ${clones}`);
  const { lines, date } = await learnBoilerplate(training.map((name) => ({ name, dir: path.join(clones, name) })), (s) => console.error(s));
  const out: BoilerplateLines = {
    version: 'boilerplate-1',
    date,
    threshold,
    method: `changed code lines (editKey) of the last ${COMMITS_PER_REPO} non-merge commits of each training repository (commits over ${MAX_COMMIT_LINES} changed lines skipped); a line counts once per commit; stored: found in ≥ ${MIN_STORED_REPOS} repositories, top ${MAX_LINES}; ignored by similar-edit: found in ≥ threshold repositories`,
    sourceRepos: training,
    lines,
  };
  const text = renderBoilerplate(out);
  if (args.includes('--write')) fs.writeFileSync(BOILERPLATE_FILE, text);
  else process.stdout.write(text);
  for (const t of [2, 3, 4, 5, 6, 8]) console.error(`lines in ≥ ${t} repositories: ${lines.filter(([, r]) => r >= t).length}`);
}
