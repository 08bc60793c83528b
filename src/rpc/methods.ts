import { z } from 'zod';
import { createWorkspace } from '../commands/create-workspace';
import type { AccessRule, CommandDefinition } from '../commands/kernel';
import { COMMANDS } from '../commands/registry';
import type { QueryDefinition } from '../readmodels/queries/query';
import { QUERIES } from '../readmodels/queries/queries';
import { issueTokenRequestSchema } from '../commands/issue-token';
import { READ_PROCEDURES, type ReadProcedure } from './reads';

export type MethodKind = 'command' | 'query' | 'watch' | 'read' | 'progress';

/**
 * One RPC method, derived from a command or a query definition. Nothing here is written by hand per
 * method: whatever lands in COMMANDS / QUERIES appears in the dispatcher, `rpc.discover` and (for the
 * agent subset) the MCP tools.
 */
export interface MethodSpec {
  name: string;
  kind: MethodKind;
  description: string;
  /** The payload schema clients send (besides workspace_id / idempotencyKey / since / asOf). */
  params: z.ZodType;
  access: AccessRule;
  command?: CommandDefinition;
  query?: QueryDefinition;
  read?: ReadProcedure;
}

/** Commands whose public params differ from their internal input (the server derives the rest). */
const PUBLIC_PARAMS: Record<string, z.ZodType> = {
  issueToken: issueTokenRequestSchema,
};

export const REVIEW_STUDIO = 'review_studio.';
export const watchName = (queryName: string): string => `watch${queryName[0].toUpperCase()}${queryName.slice(1)}`;

/**
 * The SPEC's names for commands registered under another name. Added only when the target exists and the
 * alias is not itself a registered method. Read models have no aliases: one name each, everywhere.
 */
const SPEC_ALIASES: Record<string, string> = {
  'review_studio.compute': 'computeReview',
};

/** Progress of indexCode / computeReview in the caller's workspace (src/job-progress): not a query of the log. */
export const WATCH_PROGRESS: MethodSpec = {
  name: 'watchProgress',
  kind: 'progress',
  description:
    'Subscribe to the progress of indexCode and computeReview jobs in this workspace: a snapshot of running (and recently ended) jobs, then `watch.update` notifications `{subscription, value}`, coalesced to the latest per job, each job ending with status done or failed. Ephemeral: no position, no since.',
  params: z.object({}).strict(),
  access: { minRole: 'viewer' },
};

let table: Map<string, MethodSpec> | null = null;

/** Built on first use so every registry module has finished loading. */
export function methodTable(): Map<string, MethodSpec> {
  if (table) return table;
  const t = new Map<string, MethodSpec>();
  for (const c of COMMANDS) {
    const spec: MethodSpec = { name: c.name, kind: 'command', description: c.description, params: PUBLIC_PARAMS[c.name] ?? c.input, access: c.access, command: c };
    t.set(c.name, spec);
    t.set(REVIEW_STUDIO + c.name, { ...spec, name: REVIEW_STUDIO + c.name });
  }
  for (const q of QUERIES) {
    // A command of the same name keeps `review_studio.<name>`; the query is then read through watch/SSE.
    if (!t.has(REVIEW_STUDIO + q.name)) t.set(REVIEW_STUDIO + q.name, { name: REVIEW_STUDIO + q.name, kind: 'query', description: q.description, params: q.input, access: { minRole: q.access.minRole }, query: q });
    t.set(watchName(q.name), { name: watchName(q.name), kind: 'watch', description: `Subscribe to ${q.name}: a snapshot, then ordered updates with the global position. ${q.description}`, params: q.input, access: { minRole: q.access.minRole }, query: q });
  }
  for (const r of READ_PROCEDURES) {
    if (!t.has(REVIEW_STUDIO + r.name)) t.set(REVIEW_STUDIO + r.name, { name: REVIEW_STUDIO + r.name, kind: 'read', description: r.description, params: r.input, access: r.access, read: r });
  }
  t.set(WATCH_PROGRESS.name, WATCH_PROGRESS);
  for (const [alias, target] of Object.entries(SPEC_ALIASES)) {
    const spec = t.get(target);
    if (spec && !t.has(alias)) t.set(alias, { ...spec, name: alias });
  }
  table = t;
  return t;
}

/** Looks a query up by the name used in SSE paths: `verdict`, `watchVerdict` or `review_studio.verdict`. */
export function queryForPath(name: string): QueryDefinition | undefined {
  for (const spec of methodTable().values()) {
    if (spec.kind !== 'watch' || !spec.query) continue;
    if (name === spec.query.name || name === spec.name || name === REVIEW_STUDIO + spec.query.name) return spec.query;
  }
  return undefined;
}
