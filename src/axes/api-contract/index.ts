import { CONTRACT_SEVERITIES, needsDecision, type ApiContractComputation, type ContractChange } from '../types';
import { posix } from 'node:path';
import { DEFAULT_SPEC_NAMES, matchSpecPath } from './detect';
import { diffSpecs } from './diff';
import { loadSpec, SpecParseError, type LoadedSpec } from './document';

export { contractGate, type ContractGateResult } from './gate';
export { diffSpecs } from './diff';
export { isSpecPath, matchSpecPath, DEFAULT_SPEC_NAMES } from './detect';
export { loadSpec, loadSpecFromTexts, SpecParseError } from './document';
export { CONTRACT_RULES, RULES_BY_ID } from './rules';

export interface ChangedFileInput {
  status: 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type_changed';
  path: string;
  oldPath?: string;
}

export interface ComputeApiContractInput {
  readFile(commit: string, path: string): Promise<Buffer | null>;
  baseSha: string;
  headSha: string;
  changedFiles: ChangedFileInput[];
  /**
   * ISO date the sunset rules compare against. Pass it (e.g. the head commit date) to make the result a
   * pure function of the input; when absent the current date is used.
   */
  asOf?: string;
}

type SpecChange = ApiContractComputation['specs'][number]['change'];

interface Candidate {
  basePath?: string;
  headPath?: string;
  change: SpecChange;
  /** Only default-named files must be specs; a loose match (`openapi-config.json`) may turn out not to be one. */
  mustBeSpec: boolean;
}

/** Which changed files are spec files, and what each compares against (SPEC §11 detection). */
export function specCandidates(changedFiles: ChangedFileInput[]): Candidate[] {
  const out: Candidate[] = [];
  for (const f of changedFiles) {
    const headMatch = matchSpecPath(f.path);
    const oldMatch = f.oldPath ? matchSpecPath(f.oldPath) : null;
    const mustBeSpec = headMatch === 'default-name' || oldMatch === 'default-name';
    switch (f.status) {
      case 'added':
      case 'copied':
        if (headMatch) out.push({ headPath: f.path, change: 'added', mustBeSpec });
        break;
      case 'deleted':
        if (headMatch) out.push({ basePath: f.path, change: 'deleted', mustBeSpec });
        break;
      case 'renamed':
        if (headMatch && oldMatch) out.push({ basePath: f.oldPath, headPath: f.path, change: 'renamed', mustBeSpec });
        else if (headMatch) out.push({ headPath: f.path, change: 'added', mustBeSpec });
        else if (oldMatch) out.push({ basePath: f.oldPath, change: 'deleted', mustBeSpec });
        break;
      default:
        if (headMatch) out.push({ basePath: f.path, headPath: f.path, change: 'modified', mustBeSpec });
    }
  }
  return out.sort((a, b) => (a.headPath ?? a.basePath!).localeCompare(b.headPath ?? b.basePath!));
}

/**
 * The API-contract computation of one PR (SPEC §11): detect the spec files the PR touches (and the
 * default-named specs whose `$ref`s reach a changed file), load each side at its commit (with every file
 * reached through `$ref`), diff and classify. Decisions are not
 * applied here: `contractGate` turns this plus the recorded decisions into the axis result.
 *
 * Status: `not_applicable` when no spec file changed; `pass` when every spec was compared; `partial` when
 * some spec could not be parsed or had unresolvable `$ref`s (the changes that could be computed are kept);
 * `unavailable` when no spec could be compared at all. Never `pass` on a parse failure.
 */
export async function computeApiContract(input: ComputeApiContractInput): Promise<ApiContractComputation> {
  const direct = specCandidates(input.changedFiles);
  const candidates = [...direct, ...(await specsReachingChangedFiles(input, direct))];
  if (candidates.length === 0) return { status: 'not_applicable', reason: 'no API spec file changed', specs: [], changes: [] };
  const asOf = input.asOf ?? new Date().toISOString().slice(0, 10);
  const specs: ApiContractComputation['specs'] = [];
  const changes: ContractChange[] = [];
  const problems: string[] = [];
  let compared = 0;
  for (const c of candidates) {
    const path = c.headPath ?? c.basePath!;
    try {
      const base = c.basePath ? await loadAt(input, input.baseSha, c.basePath, c.mustBeSpec) : null;
      const head = c.headPath ? await loadAt(input, input.headSha, c.headPath, c.mustBeSpec) : null;
      if (!base && !head) continue; // a loosely named file that is not an OpenAPI document on either side
      const diff = diffSpecs(base, head, path, { asOf });
      changes.push(...diff.changes);
      compared++;
      if (diff.unresolvedRefs.length > 0) {
        const error = `unresolvable $ref: ${diff.unresolvedRefs.slice(0, 5).join('; ')}${diff.unresolvedRefs.length > 5 ? ` (and ${diff.unresolvedRefs.length - 5} more)` : ''}`;
        problems.push(`${path}: ${error}`);
        specs.push({ path, change: c.change, error });
      } else specs.push({ path, change: c.change });
    } catch (err) {
      if (!(err instanceof SpecParseError)) throw err;
      problems.push(err.message);
      specs.push({ path, change: c.change, error: bounded(err.message, MAX_REASON_CHARS) });
    }
  }
  if (specs.length === 0) return { status: 'not_applicable', reason: 'the changed files named like specs are not OpenAPI documents', specs: [], changes: [] };
  const kept = withinBudget(changes);
  if (kept.overBudget) problems.push(kept.note!);
  if (problems.length === 0) return { status: 'pass', ...(kept.note ? { reason: kept.note } : {}), specs, changes: kept.changes };
  return { status: compared === 0 ? 'unavailable' : 'partial', reason: bounded(problems.join(' | '), MAX_REASON_CHARS), specs, changes: kept.changes };
}

/**
 * The computation is recorded inside one ReviewComputed event (bounded to 1 MiB with everything else),
 * so the changes get a byte budget. Non-breaking and info changes never hold the gate and are dropped
 * first; if the breaking ones alone do not fit, the result is partial: an unseen breaking change must
 * not let the gate open.
 */
export const CHANGES_BYTE_BUDGET = 384 * 1024;
const MAX_REASON_CHARS = 4000;
const MAX_FIELD_CHARS = { message: 1000, pointer: 2000 };

function withinBudget(all: ContractChange[]): { changes: ContractChange[]; overBudget: boolean; note?: string } {
  const changes = all.map(boundFields);
  const size = (c: ContractChange) => JSON.stringify(c).length + 1;
  const total = changes.reduce((n, c) => n + size(c), 0);
  if (total <= CHANGES_BYTE_BUDGET) return { changes, overBudget: false };
  const kept: ContractChange[] = [];
  let used = 0;
  let droppedBreaking = 0;
  let droppedOther = 0;
  for (const severity of CONTRACT_SEVERITIES) {
    for (const c of changes) {
      if (c.severity !== severity) continue;
      const n = size(c);
      if (used + n <= CHANGES_BYTE_BUDGET) {
        kept.push(c);
        used += n;
      } else if (needsDecision(severity)) droppedBreaking++;
      else droppedOther++;
    }
  }
  const order = new Map(changes.map((c, i) => [c, i]));
  kept.sort((a, b) => order.get(a)! - order.get(b)!);
  const note =
    droppedBreaking > 0
      ? `${droppedBreaking} breaking and ${droppedOther} other contract changes not recorded (over the ${CHANGES_BYTE_BUDGET / 1024} KiB budget); run contract-diff on the specs for the full list`
      : `${droppedOther} non-breaking/info contract changes not recorded (over the ${CHANGES_BYTE_BUDGET / 1024} KiB budget); every breaking and warning change is kept`;
  return { changes: kept, overBudget: droppedBreaking > 0, note };
}

function boundFields(c: ContractChange): ContractChange {
  const out = { ...c, message: bounded(c.message, MAX_FIELD_CHARS.message) };
  if (out.basePointer !== undefined) out.basePointer = bounded(out.basePointer, MAX_FIELD_CHARS.pointer);
  if (out.headPointer !== undefined) out.headPointer = bounded(out.headPointer, MAX_FIELD_CHARS.pointer);
  if (out.operation !== undefined) out.operation = bounded(out.operation, MAX_FIELD_CHARS.message);
  return out;
}

const bounded = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/** Bounds the existence probes for default-named specs above changed YAML/JSON files. */
const MAX_SPEC_PROBES = 200;

/**
 * A spec split over several files changes when only a file it references changes (`openapi.yaml` →
 * `schemas/user.yaml`). For each changed YAML/JSON file that is not itself a spec, look for a
 * default-named spec in its directory and every ancestor directory, and keep those whose `$ref`
 * closure (at head, or at base when the head no longer loads) contains a changed file.
 */
async function specsReachingChangedFiles(input: ComputeApiContractInput, direct: Candidate[]): Promise<Candidate[]> {
  const taken = new Set(direct.flatMap((c) => [c.basePath, c.headPath]).filter((p): p is string => !!p));
  const changed = new Set(input.changedFiles.flatMap((f) => [f.path, f.oldPath]).filter((p): p is string => !!p));
  const dirs = new Set<string>();
  for (const p of changed) {
    if (taken.has(p) || !/\.(ya?ml|json)$/i.test(p)) continue;
    let dir = posix.dirname(p);
    for (;;) {
      dirs.add(dir);
      if (dir === '.' || dir === '/' || dir === '') break;
      dir = posix.dirname(dir);
    }
  }
  const found: Candidate[] = [];
  let probes = 0;
  for (const dir of [...dirs].sort()) {
    for (const name of DEFAULT_SPEC_NAMES) {
      const specPath = dir === '.' ? name : `${dir}/${name}`;
      if (taken.has(specPath) || changed.has(specPath)) continue;
      if (++probes > MAX_SPEC_PROBES) return found;
      if ((await input.readFile(input.headSha, specPath)) === null) continue;
      taken.add(specPath);
      let reached: string[];
      try {
        reached = (await loadAt(input, input.headSha, specPath, true))!.docs.filePaths;
      } catch (err) {
        if (!(err instanceof SpecParseError)) throw err;
        // it no longer loads at head: related to this PR only if its base version reached a changed file
        try {
          reached = (await loadAt(input, input.baseSha, specPath, true))!.docs.filePaths;
        } catch {
          continue;
        }
      }
      if (reached.some((f) => changed.has(f))) found.push({ basePath: specPath, headPath: specPath, change: 'modified', mustBeSpec: true });
    }
  }
  return found;
}

async function loadAt(input: ComputeApiContractInput, commit: string, path: string, mustBeSpec: boolean): Promise<LoadedSpec | null> {
  return loadSpec(path, async (p) => (await input.readFile(commit, p))?.toString('utf8') ?? null, { requireSpec: mustBeSpec });
}
