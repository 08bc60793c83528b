import type { WorkspaceEvent } from '../events/catalogue/event-types';
import type { ReviewLevel } from '../events/catalogue/workspace';
import type { Role } from '../events/roles';
import type { StreamFold } from '../events/kernel-types';
import { streamIds } from '../events/envelope';
import type { WorkspaceHandle } from './registry';
import { loadStream } from './load-stream';

/** The workspace stream folded: members, tokens, review level, active rules, suppression facts. */
export interface WorkspaceState {
  created: boolean;
  workspaceId?: string;
  name?: string;
  level: ReviewLevel;
  members: Record<string, Role>;
  tokens: Record<string, { tokenHash: string; principal: string; role: Role; label?: string; revoked: boolean; issuedAt: string; signIn?: { issuer: string; subject: string; expiresAt: string; method: 'code' | 'device' } }>;
  /** principal → the identity-provider identity its first sign-in bound it to (fixed from then on). */
  identities: Record<string, { issuer: string; subject: string }>;
  rulesVersion: string | null;
  rulesDocument: Record<string, unknown> | null;
  /** fingerprint → dismissals that recorded it. */
  suppressions: Record<string, Array<{ nodeId: string; repoId?: string; prNumber?: number; reason: string; at: number }>>;
}

export const workspaceFold: StreamFold<WorkspaceState, WorkspaceEvent> = {
  initialState: () => ({ created: false, level: 'balanced', members: {}, tokens: {}, identities: {}, rulesVersion: null, rulesDocument: null, suppressions: {} }),
  evolve(s, e) {
    switch (e.type) {
      case 'WorkspaceCreated':
        s.created = true;
        s.workspaceId = e.data.workspaceId;
        s.name = e.data.name;
        s.level = e.data.defaultLevel;
        break;
      case 'MemberAdded':
        s.members[e.data.principal] = e.data.role;
        break;
      case 'MemberRoleChanged':
        s.members[e.data.principal] = e.data.to;
        break;
      case 'MemberRemoved':
        delete s.members[e.data.principal];
        break;
      case 'ApiTokenIssued':
        s.tokens[e.data.tokenId] = { tokenHash: e.data.tokenHash, principal: e.data.principal, role: e.data.role, label: e.data.label, revoked: false, issuedAt: e.metadata.occurredAt };
        if (e.data.signIn) {
          s.tokens[e.data.tokenId].signIn = e.data.signIn;
          s.identities[e.data.principal] ??= { issuer: e.data.signIn.issuer, subject: e.data.signIn.subject };
        }
        break;
      case 'ApiTokenRevoked':
        if (s.tokens[e.data.tokenId]) s.tokens[e.data.tokenId].revoked = true;
        break;
      case 'ReviewLevelSet':
        s.level = e.data.level;
        break;
      case 'RulesVersionActivated':
        s.rulesVersion = e.data.rulesVersion;
        s.rulesDocument = e.data.document;
        break;
      case 'SuppressionFactRecorded':
        (s.suppressions[e.data.fingerprint] ??= []).push({ nodeId: e.data.nodeId, repoId: e.data.repoId, prNumber: e.data.prNumber, reason: e.data.reason, at: e.globalPosition });
        break;
    }
    return s;
  },
};

export async function loadWorkspaceState(ws: WorkspaceHandle): Promise<WorkspaceState> {
  return (await loadStream(workspaceFold, ws, streamIds.workspace())).state;
}
