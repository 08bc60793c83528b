import { z } from 'zod';
import { BOUNDS } from './bounds';
import { defineEvent } from './define';

const sha = z.string().regex(/^[0-9a-f]{7,64}$/, 'must be a hex commit id (7-64 lowercase hex digits)');
const repoPath = z.string().min(1).max(BOUNDS.path);
const symbolId = z.string().min(1).max(BOUNDS.symbolId);
const cohortKey = z.string().regex(/^[a-z]+-[0-9a-f]{8,64}$/, 'cohortKey must look like "<prefix>-<hex>" as produced by compute');
const principal = z.string().min(1).max(200);

// ---- axis computations (shapes of src/axes/types.ts) ---------------------------------------------
export const axisStatusSchema = z.enum(['pass', 'warn', 'fail', 'partial', 'unavailable', 'not_applicable']);

export const contractChangeSchema = z.object({
  changeId: z.string().min(1).max(300),
  ruleId: z.string().min(1).max(200),
  severity: z.enum(['breaking', 'warning', 'non-breaking', 'info']),
  direction: z.enum(['request', 'response', 'none']),
  message: z.string().max(4000),
  specPath: repoPath,
  operation: z.string().max(2000).optional(),
  basePointer: z.string().max(4000).optional(),
  headPointer: z.string().max(4000).optional(),
  derived: z.boolean().optional(),
});

export const apiContractComputationSchema = z.object({
  status: axisStatusSchema,
  reason: z.string().max(4000).optional(),
  specs: z.array(z.object({ path: repoPath, change: z.enum(['added', 'modified', 'deleted', 'renamed']), error: z.string().max(4000).optional() })),
  changes: z.array(contractChangeSchema),
});

export const visualSnapshotSchema = z.object({
  snapshotId: z.string().min(1).max(BOUNDS.snapshotId),
  state: z.enum(['unchanged', 'added', 'changed', 'removed']),
  harness: z.enum(['goldens', 'render', 'flutter']),
  baseHash: z.string().max(128).optional(),
  headHash: z.string().max(128).optional(),
  diffHash: z.string().max(128).optional(),
  changedPixels: z.number().nonnegative().optional(),
  changedRatio: z.number().min(0).max(1).optional(),
  width: z.number().int().nonnegative().optional(),
  height: z.number().int().nonnegative().optional(),
  error: z.string().max(4000).optional(),
});

export const visualComputationSchema = z.object({
  status: axisStatusSchema,
  reason: z.string().max(4000).optional(),
  snapshots: z.array(visualSnapshotSchema),
});

// ---- changed files, fragments, cohorts (SPEC §8) -------------------------------------------------
export const fileRoleSchema = z.enum(['source', 'test', 'manifest', 'lock', 'spec', 'generated', 'vendored', 'docs', 'version-bump', 'other']);
export type FileRole = z.infer<typeof fileRoleSchema>;

export const changedFileSchema = z.object({
  path: repoPath,
  oldPath: repoPath.optional(),
  status: z.enum(['added', 'modified', 'deleted', 'renamed', 'copied', 'type_changed']),
  role: fileRoleSchema,
  /** Grammar language when the file has one; absent for files no grammar covers. */
  language: z.string().max(BOUNDS.kind).optional(),
  /** The grammar's parse of this file has ERROR/MISSING nodes: its definitions and references may be incomplete. */
  parseErrors: z.boolean().optional(),
});

export const fragmentSchema = z.object({
  /** `<path>#<symbol>` for a definition fragment, `<path>#<residual>` for the rest of the file. */
  id: z.string().min(1).max(BOUNDS.fragmentId),
  path: repoPath,
  /** Stable symbol id of the definition the hunks intersect (absent for the residual fragment). */
  symbolId: symbolId.optional(),
  kind: z.string().max(BOUNDS.kind),
  /** Which side the lines refer to: head, or base for deleted definitions. */
  side: z.enum(['head', 'base']),
  change: z.enum(['added', 'modified', 'deleted']),
  startLine: z.number().int().positive(),
  endLine: z.number().int().positive(),
});
export type FragmentData = z.infer<typeof fragmentSchema>;

export const dependencyChangeSchema = z.object({
  name: z.string().min(1).max(BOUNDS.dependencyName),
  change: z.enum(['added', 'removed', 'upgraded', 'downgraded', 'changed']),
  from: z.string().max(BOUNDS.dependencyVersion).optional(),
  to: z.string().max(BOUNDS.dependencyVersion).optional(),
  /** A major-version bump (or a 0.x minor bump, which semver treats as breaking). */
  major: z.boolean(),
  /** dev / build / optional dependency group, when the manifest says so. */
  group: z.string().max(BOUNDS.dependencyGroup).optional(),
});

export const dependencyDiffSchema = z.object({
  ecosystem: z.enum(['npm', 'go', 'cargo', 'python', 'dart']),
  /** The manifest (or lock file) the changes were read from. */
  path: repoPath,
  /** Directory of the component the manifest belongs to ("" for the repo root). */
  component: z.string().max(4000),
  changes: z.array(dependencyChangeSchema),
  /** The file changed but only its own version field moved (no dependency changed). */
  versionOnly: z.boolean().optional(),
  error: z.string().max(BOUNDS.error).optional(),
});
export type DependencyDiffData = z.infer<typeof dependencyDiffSchema>;

export const clueSchema = z.object({
  kind: z.enum(['dependency-diff', 'manifest', 'lock', 'spec', 'docs', 'generated']),
  path: repoPath,
  note: z.string().max(BOUNDS.note).optional(),
  dependencyChanges: z.array(dependencyChangeSchema).optional(),
});

export const blastRadiusSchema = z.object({
  /** Head-repo files and symbols referencing the cohort's changed symbols (resolved edges, bounded depth; at most 200 of each listed, `truncated` when the walk or a list was cut). */
  dependents: z.object({
    files: z.array(repoPath),
    symbols: z.array(symbolId),
    depth: z.number().int().nonnegative(),
    truncated: z.boolean(),
  }),
  /** Exported / public symbols the cohort changes. */
  publicApi: z.array(symbolId),
  /** Test files that reach the changed symbols (directly or through dependents). */
  tests: z.array(repoPath),
  score: z.number().nonnegative(),
});

export const readingStepSchema = z.object({
  path: repoPath,
  symbolId: symbolId.optional(),
  startLine: z.number().int().positive().optional(),
  endLine: z.number().int().positive().optional(),
  why: z.string().max(BOUNDS.readingWhy),
});

export const cohortSchema = z.object({
  key: cohortKey,
  title: z.string().max(BOUNDS.cohortTitle),
  grouping: z.enum(['semantic', 'path']),
  groupingReason: z.string().max(BOUNDS.groupingReason).optional(),
  files: z.array(repoPath),
  fragments: z.array(fragmentSchema),
  /** Stable symbol ids the key is derived from. */
  anchors: z.array(symbolId),
  blastRadius: blastRadiusSchema,
  readingOrder: z.object({ order: z.enum(['callee-first', 'caller-first']), steps: z.array(readingStepSchema) }),
  /** 1 = riskiest. */
  rank: z.number().int().positive(),
  clues: z.array(clueSchema),
});
export type CohortData = z.infer<typeof cohortSchema>;

/**
 * `complete`: every changed TS/JS file under a project root was walked; `partial`: some were not (a
 * deterministic cap, listed in `skippedFiles`, or one side's file-count cap, said in `reason`); `skipped`:
 * no checker edge is in the review (a cap on both sides, or the wall-clock safety limit); `off`: the
 * computation did not ask for it. Files not walked keep the syntactic edges (provenance `syntax`).
 */
export const typeEdgesSchema = z.object({
  status: z.enum(['complete', 'partial', 'skipped', 'off']),
  reason: z.string().max(BOUNDS.note).optional(),
  /** At most BOUNDS.typeEdgeSkips files, in the order asked; `omittedFiles` counts the rest. */
  skippedFiles: z.array(z.object({ path: repoPath, side: z.enum(['head', 'base']), reason: z.string().max(BOUNDS.note) })).max(BOUNDS.typeEdgeSkips),
  omittedFiles: z.number().int().nonnegative().optional(),
});

export const ReviewComputed = defineEvent(
  'ReviewComputed',
  'pr',
  1,
  z.object({
    baseSha: sha,
    headSha: sha,
    engineVersion: z.string().min(1).max(100),
    /** Hash of (engineVersion, baseSha, headSha, repo config): identical inputs record nothing new. */
    inputsDigest: z.string().regex(/^[0-9a-f]{64}$/, 'inputsDigest must be a sha256 hex digest'),
    cohorts: z.array(cohortSchema),
    dependencyDiffs: z.array(dependencyDiffSchema),
    apiContract: apiContractComputationSchema,
    visual: visualComputationSchema,
    changedFiles: z.array(changedFileSchema),
    /** What TypeScript's checker contributed (type-resolved edges); absent when there was no TS/JS file for it. */
    typeEdges: typeEdgesSchema.optional(),
    /** Counters and timings of the computation (informative only). */
    metrics: z.record(z.string(), z.number()),
  }),
);

export const CohortSummarySet = defineEvent(
  'CohortSummarySet',
  'pr',
  1,
  z.object({ cohortKey, markdown: z.string().min(1).max(100_000), by: principal }),
);

// ---- typed diagrams (SPEC §8.6): never mermaid text ------------------------------------------------
const nodeId = z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/, 'diagram ids must be identifiers (letters, digits, "_", ".", "-"; max 100)');
const label = z.string().max(500);
/** Flags each edge with whether the code graph confirmed it; clients never supply it. */
const verified = z.object({ verified: z.boolean() });

const participant = z.object({ id: nodeId, label: label.optional(), symbolId: symbolId.optional() }).strict();
const message = z.object({ from: nodeId, to: nodeId, label, symbolId: symbolId.optional() }).strict();
const entity = z.object({ id: nodeId, label: label.optional(), symbolId: symbolId.optional(), attributes: z.array(label).max(200).optional() }).strict();
const relation = z.object({ from: nodeId, to: nodeId, label: label.optional(), cardinality: z.enum(['1:1', '1:n', 'n:1', 'n:m']).optional() }).strict();
const state = z.object({ id: nodeId, label: label.optional() }).strict();
const transition = z.object({ from: nodeId, to: nodeId, event: label.optional(), symbolId: symbolId.optional() }).strict();

function diagramSchemas<E extends z.ZodRawShape>(edgeExtra: E) {
  return z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('sequence'), title: label.optional(), participants: z.array(participant).min(1).max(100), messages: z.array(message.extend(edgeExtra)).min(1).max(500) }).strict(),
    z.object({ kind: z.literal('entityRelation'), title: label.optional(), entities: z.array(entity).min(1).max(200), relations: z.array(relation.extend(edgeExtra)).max(500) }).strict(),
    z.object({ kind: z.literal('stateMachine'), title: label.optional(), states: z.array(state).min(1).max(200), initial: nodeId.optional(), transitions: z.array(transition.extend(edgeExtra)).min(1).max(500) }).strict(),
  ]);
}
/** What a client submits. */
export const diagramInputSchema = diagramSchemas({});
/** What is stored: every edge carries `verified`. */
export const verifiedDiagramSchema = diagramSchemas(verified.shape);
export type DiagramInput = z.infer<typeof diagramInputSchema>;
export type VerifiedDiagram = z.infer<typeof verifiedDiagramSchema>;

export const ReviewDiagramAdded = defineEvent(
  'ReviewDiagramAdded',
  'pr',
  1,
  z.object({
    cohortKey,
    diagram: verifiedDiagramSchema,
    /** The head whose code graph verified the edges. */
    headSha: sha.optional(),
    by: principal,
  }),
);

export const computeEvents = [ReviewComputed, CohortSummarySet, ReviewDiagramAdded];
