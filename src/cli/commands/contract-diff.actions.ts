/** The action of contract-diff.ts, loaded when `contract-diff` runs. */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type * as Diff from '../../axes/api-contract/diff';
import type * as Document from '../../axes/api-contract/document';
import type * as Profile from '../../axes/api-contract/profile';
import type { LoadedSpec } from '../../axes/api-contract/document';
import { CONTRACT_SEVERITIES, needsDecision, type ContractChange } from '../../axes/types';

/**
 * Loads a spec from the file system. Paths are kept relative to the file-system root so `$ref`s into
 * sibling (or parent) directories resolve exactly as they would in a repository.
 */
async function loadFromDisk(file: string): Promise<LoadedSpec> {
  const { loadSpec } = require('../../axes/api-contract/document') as typeof Document;
  const absolute = path.resolve(file);
  const rootRelative = path.relative(path.parse(absolute).root, absolute).split(path.sep).join('/');
  const onDisk = (p: string) => path.join(path.parse(absolute).root, ...p.split('/'));
  try {
    const loaded = await loadSpec(rootRelative, async (p) => {
      try {
        return await fs.readFile(onDisk(p), 'utf8');
      } catch {
        return null;
      }
    });
    return loaded!;
  } catch (err) {
    // The loader names files as keys relative to the file-system root; the user gave a path on disk.
    const { SpecParseError } = require('../../axes/api-contract/document') as typeof Document;
    if (!(err instanceof SpecParseError)) throw err;
    const detail = err.message.slice(err.file.length + 2).replace(/referenced file (\S+) not found/, (_m, f: string) => `referenced file ${onDisk(f)} not found`);
    throw new SpecParseError(onDisk(err.file), detail);
  }
}

const ORDER = new Map(CONTRACT_SEVERITIES.map((s, i) => [s, i]));
const FORMATS = ['text', 'json', 'oasdiff', 'oasdiff-yaml', 'oasdiff-text'] as const;
const PROFILES = ['review-ledger', 'oasdiff'] as const;


export async function contractDiff(baseSpec: string, headSpec: string, opts: { json?: boolean; format?: string; asOf?: string; profile?: string }): Promise<void> {
  const format = opts.json ? 'json' : (opts.format ?? 'text');
  if (!(FORMATS as readonly string[]).includes(format)) {
    process.stderr.write(`error [invalid_option]: --format must be one of ${FORMATS.join(', ')} (got "${format}")\n`);
    process.exitCode = 2;
    return;
  }
  const profile = opts.profile ?? 'review-ledger';
  if (!(PROFILES as readonly string[]).includes(profile)) {
    process.stderr.write(`error [invalid_option]: --profile must be one of ${PROFILES.join(', ')} (got "${profile}")\n`);
    process.exitCode = 2;
    return;
  }
  // Loaded on demand: the CLI's other commands never pay for the contract engine, and this one pays for nothing else.
  const { diffSpecs } = require('../../axes/api-contract/diff') as typeof Diff;
  const { SpecParseError } = require('../../axes/api-contract/document') as typeof Document;
  let base: LoadedSpec;
  let head: LoadedSpec;
  try {
    [base, head] = await Promise.all([loadFromDisk(baseSpec), loadFromDisk(headSpec)]);
  } catch (err) {
    if (!(err instanceof SpecParseError)) throw err;
    process.stderr.write(`error [spec_unparsable]: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  const asOf = opts.asOf ?? new Date().toISOString().slice(0, 10);
  const result = diffSpecs(base, head, headSpec, { asOf, profile: profile as Profile.ContractProfile });
  const { applyProfile, oasdiffChangelog } = require('../../axes/api-contract/profile') as typeof Profile;
  const changes = applyProfile(result.changes, result.oasdiff, profile as Profile.ContractProfile).sort((a, b) => ORDER.get(a.severity)! - ORDER.get(b.severity)!);
  const count = (s: ContractChange['severity']) => changes.filter((c) => c.severity === s).length;
  const summary = { breaking: count('breaking'), warning: count('warning'), nonBreaking: count('non-breaking'), info: count('info') };
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify({ base: baseSpec, head: headSpec, summary, unresolvedRefs: result.unresolvedRefs, changes }, null, 2)}\n`);
  } else if (format === 'oasdiff' || format === 'oasdiff-yaml') {
    // oasdiff's changelog output (`oasdiff changelog --format json|yaml`): an array of {id, text, level, operation, path, source, section}
    const entries = oasdiffChangelog(changes, result.oasdiff, profile as Profile.ContractProfile, headSpec);
    if (format === 'oasdiff') process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
    else {
      const { stringify } = require('yaml') as typeof import('yaml');
      process.stdout.write(entries.length === 0 ? '[]\n' : stringify(entries));
    }
  } else if (format === 'oasdiff-text') {
    // oasdiff's text layout: level, [rule id], where; the API; the message. Rules oasdiff has no
    // equivalent for keep our id, marked with a "~" so they are not mistaken for oasdiff's.
    const entries = oasdiffChangelog(changes, result.oasdiff, profile as Profile.ContractProfile, headSpec);
    const word = { 3: 'error', 2: 'warning', 1: 'info' } as const;
    for (const e of entries) {
      process.stdout.write(`${word[e.level]}\t[${e.id}] at ${e.source}\n`);
      if (e.operation) process.stdout.write(`\tin API ${e.operation} ${e.path}\n`);
      process.stdout.write(`\t\t${e.text}\n\n`);
    }
    const n = (l: 1 | 2 | 3) => entries.filter((e) => e.level === l).length;
    process.stdout.write(`${entries.length} changes: ${n(3)} error, ${n(2)} warning, ${n(1)} info\n`);
  } else {
    for (const c of changes) {
      process.stdout.write(`${c.severity.padEnd(12)} ${c.ruleId}\n             ${c.message}\n`);
      const at = [c.basePointer && `base ${c.basePointer}`, c.headPointer && `head ${c.headPointer}`].filter(Boolean).join('  ');
      if (at) process.stdout.write(`             ${at}\n`);
    }
    for (const r of result.unresolvedRefs) process.stdout.write(`warning      unresolved ${r}\n`);
    process.stdout.write(`${summary.breaking} breaking, ${summary.warning} warning, ${summary.nonBreaking} non-breaking, ${summary.info} info\n`);
  }
  const breaks = changes.some((c) => needsDecision(c.severity));
  process.exitCode = result.unresolvedRefs.length > 0 && !breaks ? 2 : breaks ? 1 : 0;
}
