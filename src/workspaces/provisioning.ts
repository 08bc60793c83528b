import { DomainError } from '../domain-error';
import { isAgent, isHuman, type Principal } from '../events/envelope';
import { type Role, roleAtLeast } from '../events/roles';

/**
 * Principals are provisioned, never asserted (SPEC §16). These are the pure rules every identity
 * command applies before it decides — and before an idempotent replay answers (see the kernel's
 * `authorize`): who may make whom a member, with which role, and who may mint a token for whom.
 *
 * "Manage" means: the issuer's role is at least the member's role. Tokens for an owner are minted only by
 * an owner (itself or a co-owner), agents never hold admin or owner, and agents never mint tokens for humans.
 */

/** Agents file, confirm and dismiss; they never manage the workspace (SPEC §16). */
export const AGENT_MAX_ROLE: Role = 'member';

export interface Actor {
  principal: Principal;
  role: Role;
}

/** Refuses a role an agent may not hold; refuses system principals, which are the server's own. */
export function assertMayHoldRole(principal: Principal, role: Role, field: string): void {
  if (!isHuman(principal) && !isAgent(principal)) {
    throw new DomainError('forbidden', `principal: ${principal} is a system principal; only user:… and agent:… principals can be members or hold tokens`);
  }
  if (isAgent(principal) && !roleAtLeast(AGENT_MAX_ROLE, role)) {
    throw new DomainError('forbidden', `${field}: an agent never holds ${role} (agents hold at most ${AGENT_MAX_ROLE}); ${principal} is an agent`);
  }
}

/** The issuer may grant `role` (never above its own) to `principal`. */
export function assertMayGrant(issuer: Actor, principal: Principal, role: Role, field: string): void {
  if (!roleAtLeast(issuer.role, role)) throw new DomainError('forbidden', `${field}: a ${issuer.role} cannot grant or change ${role}`);
  assertMayHoldRole(principal, role, field);
  if (isAgent(issuer.principal) && isHuman(principal)) {
    throw new DomainError('forbidden', `principal: an agent (${issuer.principal}) never provisions a human principal (${principal})`);
  }
}

/** The issuer manages the existing member `principal` (holding `memberRole`): never one above itself. */
export function assertManages(issuer: Actor, principal: Principal, memberRole: Role): void {
  if (!roleAtLeast(issuer.role, memberRole)) throw new DomainError('forbidden', `principal: a ${issuer.role} cannot manage ${principal}, who is ${memberRole}`);
}

/**
 * A token is minted only for an existing member, for a role neither above that membership nor above the
 * issuer's role; human tokens only by human owners/admins who manage that human; owner tokens only by
 * the owner for itself.
 */
export function assertMayIssueToken(issuer: Actor, members: Record<string, Role>, principal: Principal, role: Role): void {
  const memberRole = members[principal];
  if (memberRole === undefined) {
    throw new DomainError('not_a_member', `principal: ${principal} is not a member of this workspace; add it (addMember) before issuing it a token`);
  }
  if (isHuman(principal) && !isHuman(issuer.principal)) {
    throw new DomainError('forbidden', `principal: an agent (${issuer.principal}) never mints a token for a human (${principal})`);
  }
  // Owners are peers (an owner may add or remove owners), so an owner may mint for a co-owner — the
  // audit's issuer chain names who did; nobody below owner ever mints a token for an owner principal,
  // whatever role the token would carry.
  if (memberRole === 'owner' && issuer.principal !== principal && issuer.role !== 'owner') {
    throw new DomainError('forbidden', `principal: ${principal} is an owner; only an owner mints tokens for an owner`);
  }
  assertManages(issuer, principal, memberRole);
  if (!roleAtLeast(issuer.role, role)) throw new DomainError('forbidden', `role: a ${issuer.role} cannot issue a ${role} token`);
  if (!roleAtLeast(memberRole, role)) throw new DomainError('forbidden', `role: ${principal} is a ${memberRole}; a token cannot carry more than its member's role (${role} asked)`);
  assertMayHoldRole(principal, role, 'role');
}

/**
 * The role a token acts with: the token's role capped by the principal's current membership (the role
 * lives with the membership), and agents capped at member. Null when the principal is no longer a member.
 */
export function effectiveRole(principal: Principal, tokenRole: Role, memberRole: Role | undefined): Role | null {
  if (memberRole === undefined) return null;
  let role = roleAtLeast(memberRole, tokenRole) ? tokenRole : memberRole;
  if (isAgent(principal) && !roleAtLeast(AGENT_MAX_ROLE, role)) role = AGENT_MAX_ROLE;
  return role;
}
