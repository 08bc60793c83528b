import type { CommandDefinition } from './kernel';
import { createWorkspace } from './create-workspace';
import { requestReview } from './request-review';
import { setReviewLevel } from './set-review-level';
import { observeHead } from './observe-head';
import { addReviewNode } from './add-review-node';
import { confirmNode } from './confirm-node';
import { dismissNode } from './dismiss-node';
import { resolveNode } from './resolve-node';
import { recordAxis } from './record-axis';
import { recordCiSignal } from './record-ci-signal';
import { finalizeReview } from './finalize-review';
import { activateRules } from './activate-rules';
import { issueToken } from './issue-token';
import { revokeToken } from './revoke-token';
import { addMember, changeMemberRole, removeMember } from './manage-members';
import { registerRepo } from './register-repo';
import { indexCode } from './index-code';
import { computeReviewCommand } from './compute-review';
import { setCohortSummary } from './set-cohort-summary';
import { addReviewDiagram } from './add-review-diagram';
import { publish, requestPublish, approvePublish } from './publish-review';
import { markCohortReviewed } from './mark-cohort-reviewed';
import { setContractDecision } from './set-contract-decision';
import { approveVisual } from './approve-visual';
import { setVerdictStatusCheck } from './status-check';

/**
 * Every command of the ledger, by name. The RPC method catalogue, the MCP tools and the CLI are
 * generated from this list and the commands' zod schemas. One line per command.
 */
export const COMMANDS: CommandDefinition[] = [
  createWorkspace,
  requestReview,
  setReviewLevel,
  observeHead,
  addReviewNode,
  confirmNode,
  dismissNode,
  resolveNode,
  recordAxis,
  recordCiSignal,
  finalizeReview,
  activateRules,
  issueToken, revokeToken, addMember, changeMemberRole, removeMember,
  registerRepo, indexCode, computeReviewCommand, setCohortSummary, addReviewDiagram,
  publish, requestPublish, approvePublish,
  markCohortReviewed,
  setContractDecision, approveVisual,
  setVerdictStatusCheck,
];

export const commandByName = new Map(COMMANDS.map((c) => [c.name, c]));
