/** The action of contract-diff.ts, loaded when `contract-diff` runs. */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type * as Diff from '../../axes/api-contract/diff';
import type * as Document from '../../axes/api-contract/document';
import type { LoadedSpec } from '../../axes/api-contract/document';
import type * as Rules from '../../axes/api-contract/rules';
import { CONTRACT_SEVERITIES, needsDecision, type ContractChange, type ContractSeverity } from '../../axes/types';

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
const FORMATS = ['text', 'json', 'oasdiff'] as const;

/** oasdiff's level words, for `--format oasdiff`. */
const OASDIFF_LEVEL = { ERR: 'error', WARN: 'warning', INFO: 'info' } as const;
const levelOf = (s: ContractSeverity): keyof typeof OASDIFF_LEVEL => (s === 'breaking' ? 'ERR' : s === 'warning' ? 'WARN' : 'INFO');

export async function contractDiff(baseSpec: string, headSpec: string, opts: { json?: boolean; format?: string; asOf?: string }): Promise<void> {
  const format = opts.json ? 'json' : (opts.format ?? 'text');
  if (!(FORMATS as readonly string[]).includes(format)) {
    process.stderr.write(`error [invalid_option]: --format must be one of ${FORMATS.join(', ')} (got "${format}")\n`);
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
  const result = diffSpecs(base, head, headSpec, { asOf });
  const changes = [...result.changes].sort((a, b) => ORDER.get(a.severity)! - ORDER.get(b.severity)!);
  const count = (s: ContractChange['severity']) => changes.filter((c) => c.severity === s).length;
  const summary = { breaking: count('breaking'), warning: count('warning'), nonBreaking: count('non-breaking'), info: count('info') };
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify({ base: baseSpec, head: headSpec, summary, unresolvedRefs: result.unresolvedRefs, changes }, null, 2)}\n`);
  } else if (format === 'oasdiff') {
    const { RULES_BY_ID } = require('../../axes/api-contract/rules') as typeof Rules;
    // oasdiff's text layout: level, [rule id], where; the API; the message. Rules oasdiff has no
    // equivalent for keep our id, marked with a "~" so they are not mistaken for oasdiff's.
    for (const c of changes) {
      const o = RULES_BY_ID.get(c.ruleId)?.oasdiff;
      const level = OASDIFF_LEVEL[levelOf(c.severity)];
      process.stdout.write(`${level}\t[${o ? o.id : `~${c.ruleId}`}] at ${c.specPath}\n`);
      if (c.operation) process.stdout.write(`\tin API ${c.operation}\n`);
      process.stdout.write(`\t\t${c.message}\n\n`);
    }
    const n = (l: keyof typeof OASDIFF_LEVEL) => changes.filter((c) => levelOf(c.severity) === l).length;
    process.stdout.write(`${changes.length} changes: ${n('ERR')} error, ${n('WARN')} warning, ${n('INFO')} info\n`);
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
