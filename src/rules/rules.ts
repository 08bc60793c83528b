import * as fs from 'node:fs';
import { z } from 'zod';
import { DomainError, validationError } from '../domain-error';
import { prioritySchema, reviewerBriefSchema, verdictSchema } from '../events/catalogue/review';
import type { WorkspaceHandle } from '../workspaces/registry';
import { loadWorkspaceState } from '../workspaces/workspace-state';
import v1Document from './v1.json';

const axisNameSchema = z.enum(['correctness', 'security', 'testGap', 'visual', 'apiContract', 'performance']);
const priorityRuleSchema = z.object({ atOrAboveThreshold: verdictSchema, belowThreshold: verdictSchema });
const levelRuleSchema = z.object({
  /** Reviewer briefs dispatched at this level: a node filed under any other brief is refused. */
  roster: z.array(reviewerBriefSchema).min(1),
  /** Priorities reported in the main list; the others are grouped "below threshold", never deleted. */
  mainPriorities: z.array(prioritySchema),
});

/**
 * A rules document (SPEC §7.4): every parameter of the verdict, gating, levels and contract severity,
 * under one version id. Projections take it as a parameter; `replay` folds the log under another one.
 */
export const rulesSchema = z.object({
  rulesVersion: z.string().min(1).max(100),
  description: z.string().max(4000).optional(),
  verdict: z.object({
    /** "confident" means confidence ≥ blockThreshold. */
    blockThreshold: z.number().min(0).max(1),
    /** The priority→verdict table: what one live node of that priority asks for. */
    priorities: z.object({ P0: priorityRuleSchema, P1: priorityRuleSchema, P2: priorityRuleSchema, P3: priorityRuleSchema }),
  }),
  axes: z.object({
    gated: z.array(axisNameSchema),
    /** The least verdict a gated axis in this status forces (pass/warn/not_applicable force nothing). */
    onGatedStatus: z.object({ fail: verdictSchema, partial: verdictSchema, unavailable: verdictSchema }),
  }),
  confidence: z.object({
    decimals: z.number().int().min(0).max(10),
    withoutContributingNodes: z.number().min(0).max(1),
    penaltyPerIncompleteGatedAxis: z.number().min(0).max(1),
  }),
  levels: z.object({ light: levelRuleSchema, balanced: levelRuleSchema, thorough: levelRuleSchema }),
  /** contract rule id → severity, applied to computed changes before the contract gate. */
  contractSeverityOverrides: z.record(z.string().max(200), z.enum(['breaking', 'warning', 'non-breaking', 'info'])),
});
export type Rules = z.infer<typeof rulesSchema>;

/** Rules v1 as shipped (src/rules/v1.json). */
export const RULES_V1: Rules = parseRules(v1Document, 'src/rules/v1.json');

export function parseRules(document: unknown, source = 'rules'): Rules {
  const parsed = rulesSchema.safeParse(document);
  if (!parsed.success) throw validationError(parsed.error.issues, source);
  return parsed.data;
}

export function loadRulesFile(file: string): Rules {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new DomainError('rules_not_found', `rules: cannot read "${file}": ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new DomainError('invalid_rules', `rules: "${file}" is not JSON: ${(err as Error).message}`);
  }
  return parseRules(json, file);
}

/** The rules in force given the workspace's last RulesVersionActivated document (v1 when none). */
export function activeRules(document: Record<string, unknown> | null | undefined): Rules {
  return document ? parseRules(document, 'RulesVersionActivated.document') : RULES_V1;
}

/** The rules document the workspace has activated (v1 until one is). */
export async function loadActiveRules(ws: WorkspaceHandle): Promise<Rules> {
  return activeRules((await loadWorkspaceState(ws)).rulesDocument);
}
