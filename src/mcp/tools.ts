import { z } from 'zod';
import type { AccessRule, CommandDefinition } from '../commands/kernel';
import { commandByName } from '../commands/registry';
import { reviewTargetSchema } from '../events/streams';
import { QUERIES } from '../readmodels/queries/queries';
import type { QueryDefinition } from '../readmodels/queries/query';

/**
 * The agent tools. Each is a command of COMMANDS (or a read over QUERIES) under an MCP-style name; the
 * input schema is the command's own zod schema, reshaped only where the tool asks for it:
 *  - `lift`: a nested field moved to the FRONT of the tool schema. `add_review_node` lifts
 *    `node.reasoning` so a model writes its analysis before the finding it justifies.
 *  - `defaults`: values the tool fills when the agent leaves them out (publish defaults to consensus).
 * A binding to a command or query that is not in the registries is a start-up error (resolveTools
 * throws), never a tool silently missing. Every command and query is either bound here or listed in
 * NOT_AGENT_TOOLS with the reason; a test keeps the three lists complete against the registries.
 */
export interface ToolBinding {
  tool: string;
  /** The command the tool runs. */
  command: string;
  description?: string;
  lift?: { from: string; field: string; required?: boolean };
  defaults?: Record<string, unknown>;
  /** Other spellings of a field (alias → field): a default never overrides what the agent sent under an alias. */
  aliases?: Record<string, string>;
}

export const COMMAND_TOOLS: ToolBinding[] = [
  { tool: 'add_review_node', command: 'addReviewNode', lift: { from: 'node', field: 'reasoning', required: true } },
  { tool: 'confirm_review_node', command: 'confirmNode' },
  { tool: 'set_cohort_summary', command: 'setCohortSummary' },
  { tool: 'add_review_diagram', command: 'addReviewDiagram' },
  { tool: 'finalize_review', command: 'finalizeReview' },
  { tool: 'mark_cohort_reviewed', command: 'markCohortReviewed' },
  { tool: 'publish_review_to_github', command: 'publish', defaults: { selection: 'consensus', approveOnShip: false }, aliases: { approve_on_ship: 'approveOnShip' } },
];

/** Read tools: one query each, its input schema as the tool schema. */
export const QUERY_TOOLS: Array<{ tool: string; query: string; description?: string }> = [
  { tool: 'get_cohort_context', query: 'cohortContext', description: 'The context pack of one cohort: its fragments and clues (relation × kind), degraded to signatures then pointers to fit budgetBytes; every degraded clue is listed in `truncated`.' },
  { tool: 'list_contract_changes', query: 'apiContract', description: "The API-contract changes of one review's current head, one per rule hit (id, rule, severity, where, before/after), each with its decision (approved / rejected / undecided, by whom) — what the contract gate of the verdict waits on. Deciding is a human act (RPC setContractDecision)." },
  { tool: 'list_visual_snapshots', query: 'visual', description: "The visual snapshots of one review's current head (changed, added, removed; diff ratio and images), each with its approval state — what the visual gate of the verdict waits on. Approving is a human act (RPC approveVisual)." },
  { tool: 'get_audit_log', query: 'audit', description: 'Who decided what, when: one row per decision act (filters: actor, action, repoId, prNumber, since, until), newest first, one page at a time (`limit`: default 100, at most 1000; pass `value.next` back as `cursor` for the next page, null on the last), and `chain`: whether the log behind the rows verifies (hash chain and signed checkpoints) and up to which checkpoint.' },
];

/** What `get_review` gathers, one query each (the axes are part of `verdict`). */
export const REVIEW_PARTS = ['cohorts', 'cohortProgress', 'nodeStatus', 'verdict', 'reviewStatus', 'ciSignals'];

/**
 * The commands and queries deliberately not offered to agents, with why. With the bindings above they
 * cover the registries exactly (test/mcp/bindings.test.ts), so a new command or query is a decision.
 */
export const NOT_AGENT_TOOLS: Readonly<Record<string, string>> = {
  createWorkspace: 'workspace administration (owner, CLI or RPC)',
  requestReview: 'a review starts from the forge (webhook) or a human',
  setReviewLevel: 'the review level is an admin decision',
  observeHead: 'heads are observed from the forge (webhook) or the CLI',
  dismissNode: 'dismissing a finding is left to the humans who read it',
  resolveNode: 'resolving a finding is left to the humans who read it',
  recordAxis: 'axes are recorded by the compute pipeline',
  recordCiSignal: 'CI signals come from the forge',
  activateRules: 'rules are operator configuration',
  issueToken: 'token administration (owner)',
  revokeToken: 'token administration (owner)',
  addMember: 'membership administration (owner)',
  changeMemberRole: 'membership administration (owner)',
  removeMember: 'membership administration (owner)',
  registerRepo: 'repo administration (admin)',
  indexCode: 'run by the compute pipeline and the CLI',
  computeReview: 'run by the compute pipeline and the CLI',
  requestPublish: "an agent's publish_review_to_github (publish) already records a request waiting for a human",
  approvePublish: 'human-only act (the publish approver)',
  setContractDecision: 'human-only act (contract decisions)',
  approveVisual: 'human-only act (visual approvals)',
  setVerdictStatusCheck: 'repo administration (admin)',
  reviewMetrics: 'review metrics are for operators',
  dependencyDiffs: 'part of the review page (RPC)',
  blastRadius: 'part of the review page (RPC); agents get it inside cohort context',
  cohortImpact: 'part of the review page (RPC); agents get it inside cohort context',
  publishPreview: 'read by the human approving a publish',
  reReviewDelta: 'part of the review page (RPC)',
  reportingGroups: 'part of the review page (RPC)',
};

const envelopeShape = {
  workspace_id: z.string().max(63).optional().describe('Workspace; defaults to the workspace of the token or session.'),
  idempotencyKey: z.string().max(36).optional().describe('UUIDv7 for a safe retry; generated when omitted.'),
};

export interface ResolvedTool {
  name: string;
  description: string;
  /** The tool's input schema as clients see it. */
  schema: z.ZodObject<z.ZodRawShape>;
  inputJsonSchema: Record<string, unknown>;
  access: AccessRule;
  kind: 'command' | 'review' | 'query';
  command?: CommandDefinition;
  query?: QueryDefinition;
  binding?: ToolBinding;
  queries?: QueryDefinition[];
}

function objectShape(schema: z.ZodType): z.ZodRawShape | null {
  return schema instanceof z.ZodObject ? (schema.shape as z.ZodRawShape) : null;
}

/** The command's schema reshaped for the tool (see ToolBinding). */
export function toolSchemaFor(command: CommandDefinition, binding: ToolBinding): z.ZodObject<z.ZodRawShape> {
  const shape = objectShape(command.input);
  if (!shape) return z.object({ ...envelopeShape, payload: command.input });
  let front: Record<string, z.ZodType> = {};
  let rest: Record<string, z.ZodType> = { ...(shape as Record<string, z.ZodType>) };
  const lift = binding.lift;
  if (lift) {
    const inner = objectShape(shape[lift.from] as z.ZodType);
    const field = inner?.[lift.field] as z.ZodType | undefined;
    if (inner && field) {
      const lifted = lift.required && field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field;
      front = { [lift.field]: lift.required && lifted instanceof z.ZodString ? lifted.min(1) : lifted };
      const { [lift.field]: _moved, ...innerRest } = inner;
      rest = { ...rest, [lift.from]: z.object(innerRest) };
    }
  }
  // The tool's default replaces the command's own (the schema clients see states the tool's default).
  for (const [k, v] of Object.entries(binding.defaults ?? {})) {
    const field = rest[k];
    if (!field) continue;
    const bare = field instanceof z.ZodDefault || field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field;
    rest[k] = bare.default(v as never);
  }
  return z.object({ ...front, ...rest, ...envelopeShape });
}

/** Turns tool arguments back into the command's payload (undoes the lift, applies defaults). */
export function payloadFor(binding: ToolBinding, args: Record<string, unknown>): Record<string, unknown> {
  const { workspace_id: _w, idempotencyKey: _k, ...payload } = args;
  const spelledOtherwise = new Set(Object.entries(binding.aliases ?? {}).filter(([alias]) => payload[alias] !== undefined).map(([, field]) => field));
  for (const [k, v] of Object.entries(binding.defaults ?? {})) if (payload[k] === undefined && !spelledOtherwise.has(k)) payload[k] = v;
  const lift = binding.lift;
  if (lift && lift.field in payload) {
    const value = payload[lift.field];
    delete payload[lift.field];
    const inner = payload[lift.from];
    payload[lift.from] = inner && typeof inner === 'object' && !Array.isArray(inner) ? { [lift.field]: value, ...(inner as object) } : inner;
  }
  return payload;
}

const jsonSchemaOf = (schema: z.ZodType): Record<string, unknown> => {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

function missing(what: string, names: string[], registry: string): never {
  throw new Error(`MCP tool bindings: ${what} names ${names.map((n) => `"${n}"`).join(', ')}, not in the ${registry} registry`);
}

let resolved: ResolvedTool[] | undefined;

/** The tools, resolved once; a binding to a missing command or query throws (at server start-up). */
export function resolveTools(): ResolvedTool[] {
  resolved ??= bindTools(COMMAND_TOOLS, QUERY_TOOLS, REVIEW_PARTS);
  return resolved;
}

export function bindTools(commandTools: ToolBinding[], queryTools: typeof QUERY_TOOLS, reviewParts: string[]): ResolvedTool[] {
  const out: ResolvedTool[] = [];
  for (const b of commandTools) {
    const command = commandByName.get(b.command);
    if (!command) missing(`tool ${b.tool}`, [b.command], 'command');
    const schema = toolSchemaFor(command, b);
    out.push({ name: b.tool, description: b.description ?? command.description, schema, inputJsonSchema: jsonSchemaOf(schema), access: command.access, kind: 'command', command, binding: b });
  }
  for (const b of queryTools) {
    const query = QUERIES.find((q) => q.name === b.query);
    if (!query) missing(`tool ${b.tool}`, [b.query], 'query');
    const shape = objectShape(query.input);
    if (!shape) throw new Error(`MCP tool bindings: tool ${b.tool}: query "${b.query}" has no object input`);
    const schema = z.object({ ...shape, workspace_id: envelopeShape.workspace_id });
    out.push({ name: b.tool, description: b.description ?? query.description, schema, inputJsonSchema: jsonSchemaOf(schema), access: { minRole: query.access.minRole }, kind: 'query', query });
  }
  const absentParts = reviewParts.filter((n) => !QUERIES.some((q) => q.name === n));
  if (absentParts.length) missing('tool get_review', absentParts, 'query');
  const parts = reviewParts.map((n) => QUERIES.find((q) => q.name === n)!);
  const schema = reviewTargetSchema.extend({ workspace_id: envelopeShape.workspace_id });
  out.push({
    name: 'get_review',
    description: `The review of a PR in one read: ${parts.map((q) => q.name).join(', ')}, each with the global position it reflects.`,
    schema,
    inputJsonSchema: jsonSchemaOf(schema),
    access: { minRole: 'viewer' },
    kind: 'review',
    queries: parts,
  });
  return out;
}
