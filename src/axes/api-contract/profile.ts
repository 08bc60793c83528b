import type { ContractChange } from '../types';
import { levelOfSeverity, severityOfLevel, type OasdiffFinding } from './oasdiff-id';
import type { OasdiffLevel } from './oasdiff-registry';

/**
 * Grading profiles of the contract engine. `review-ledger` (the default): our severities, stricter than
 * oasdiff where a client really breaks (see "Where we grade differently from oasdiff" in
 * docs/contract-rules.md). `oasdiff`: every change oasdiff has a rule for takes oasdiff's default level of
 * its exact id (ERR = breaking, WARN = warning, INFO = non-breaking or info as we classify it); changes
 * oasdiff has no rule for keep our severity.
 */
export const CONTRACT_PROFILES = ['review-ledger', 'oasdiff'] as const;
export type ContractProfile = (typeof CONTRACT_PROFILES)[number];

/** The changes graded by `profile` (new objects; the input is not touched). */
export function applyProfile(changes: readonly ContractChange[], oasdiff: ReadonlyMap<string, OasdiffFinding> | undefined, profile: ContractProfile): ContractChange[] {
  if (profile === 'review-ledger') return changes.map((c) => ({ ...c }));
  return changes.map((c) => {
    const o = oasdiff?.get(c.changeId);
    if (!o || o.exempt) return { ...c };
    return { ...c, severity: severityOfLevel(o.level, c.severity) };
  });
}

/** oasdiff's changelog entry (its `changelog --format json|yaml` output): level 3 = error, 2 = warning, 1 = info. */
export interface OasdiffChangelogEntry {
  id: string;
  text: string;
  level: 1 | 2 | 3;
  operation?: string;
  path?: string;
  source: string;
  section?: string;
}

const LEVEL_NUMBER: Record<OasdiffLevel, 1 | 2 | 3> = { ERR: 3, WARN: 2, INFO: 1 };

/**
 * The changes as oasdiff changelog entries. Under `oasdiff` only changes oasdiff has a rule for are listed
 * (what oasdiff would not report is absent); under `review-ledger` the others are listed too, with our rule
 * id marked `~` so a pipeline never mistakes it for one of oasdiff's. `changes` are already graded by the
 * profile (applyProfile): the level is the graded severity's. Under `oasdiff`, a change inside a component
 * several operations reach is listed once per operation, with the id oasdiff gives it there.
 */
export function oasdiffChangelog(changes: readonly ContractChange[], oasdiff: ReadonlyMap<string, OasdiffFinding> | undefined, profile: ContractProfile, source: string): OasdiffChangelogEntry[] {
  const out: OasdiffChangelogEntry[] = [];
  for (const c of changes) {
    const o = oasdiff?.get(c.changeId);
    if (!o && profile === 'oasdiff') continue;
    const written = o?.method !== undefined ? `${o.method} ${o.path}: ` : undefined;
    const text = written !== undefined && c.message.startsWith(written) ? c.message.slice(written.length) : c.message;
    out.push({
      id: o ? o.id : `~${c.ruleId}`,
      text,
      level: LEVEL_NUMBER[levelOfSeverity(c.severity)],
      ...(o?.method !== undefined ? { operation: o.method, path: o.path, section: 'paths' } : {}),
      source,
    });
    // oasdiff reports a change inside a shared component once per operation it affects; we track it as one
    // change (one changeId, one acknowledgement), so only the oasdiff profile lists it at each operation
    if (profile === 'oasdiff' && o?.also)
      for (const a of o.also)
        out.push({
          id: a.id,
          text,
          // an alpha/draft operation is exempt: its findings are info, as oasdiff's are
          level: a.exempt ? 1 : LEVEL_NUMBER[a.level],
          operation: a.method!,
          path: a.path!,
          section: 'paths',
          source,
        });
  }
  return out;
}
