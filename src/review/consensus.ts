import type { Principal } from '../events/envelope';

/**
 * SPEC §5: a node becomes consensus-ready only when a DIFFERENT principal confirms it. This one
 * predicate is used by the PR fold (node status), the verdict finalizer and the publisher's re-check, so
 * a forged self-confirmation that bypassed the confirm command still counts for nothing.
 */
export function countsAsConsensus(node: { author: Principal }, confirmations: ReadonlyArray<{ by: Principal }>): boolean {
  for (const c of confirmations) if (c.by !== node.author) return true;
  return false;
}
