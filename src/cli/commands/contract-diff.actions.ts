/** The action of contract-diff.ts, loaded when `contract-diff` runs. */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { diffSpecs } from '../../axes/api-contract/diff';
import { loadSpec, SpecParseError, type LoadedSpec } from '../../axes/api-contract/document';
import type { ContractChange } from '../../axes/types';

/**
 * Loads a spec from the file system. Paths are kept relative to the file-system root so `$ref`s into
 * sibling (or parent) directories resolve exactly as they would in a repository.
 */
async function loadFromDisk(file: string): Promise<LoadedSpec> {
  const absolute = path.resolve(file);
  const rootRelative = path.relative(path.parse(absolute).root, absolute).split(path.sep).join('/');
  const loaded = await loadSpec(rootRelative, async (p) => {
    try {
      return await fs.readFile(path.join(path.parse(absolute).root, ...p.split('/')), 'utf8');
    } catch {
      return null;
    }
  });
  return loaded!;
}

const ORDER: Record<ContractChange['severity'], number> = { breaking: 0, 'non-breaking': 1, info: 2 };

export async function contractDiff(baseSpec: string, headSpec: string, opts: { json?: boolean; asOf?: string }): Promise<void> {
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
  const changes = [...result.changes].sort((a, b) => ORDER[a.severity] - ORDER[b.severity]);
  const count = (s: ContractChange['severity']) => changes.filter((c) => c.severity === s).length;
  const summary = { breaking: count('breaking'), nonBreaking: count('non-breaking'), info: count('info') };
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ base: baseSpec, head: headSpec, summary, unresolvedRefs: result.unresolvedRefs, changes }, null, 2)}\n`);
  } else {
    for (const c of changes) {
      process.stdout.write(`${c.severity.padEnd(12)} ${c.ruleId}\n             ${c.message}\n`);
      const at = [c.basePointer && `base ${c.basePointer}`, c.headPointer && `head ${c.headPointer}`].filter(Boolean).join('  ');
      if (at) process.stdout.write(`             ${at}\n`);
    }
    for (const r of result.unresolvedRefs) process.stdout.write(`warning      unresolved ${r}\n`);
    process.stdout.write(`${summary.breaking} breaking, ${summary.nonBreaking} non-breaking, ${summary.info} info\n`);
  }
  process.exitCode = result.unresolvedRefs.length > 0 && summary.breaking === 0 ? 2 : summary.breaking > 0 ? 1 : 0;
}
