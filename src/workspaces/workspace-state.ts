import type { RecordedEvent } from '../events/envelope';
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
  tokens: Record<string, { tokenHash: string; principal: string; role: Role; label?: string; revoked: boolean; issuedAt: string }>;
  rulesVersion: string | null;
  rulesDocument: Record<string, unknown> | null;
  /** fingerprint → dismissals that recorded it. */
  suppressions: Record<string, Array<{ nodeId: string; repoId?: string; prNumber?: number; reason: string; at: number }>>;
}

export const workspaceFold: StreamFold<WorkspaceState> = {
  initialState: () => ({ created: false, level: 'balanced', members: {}, tokens: {}, rulesVersion: null, rulesDocument: null, suppressions: {} }),
  evolve(s, e: RecordedEvent) {
    const d = e.data as any;
    switch (e.type) {
      case 'WorkspaceCreated':
        s.created = true;
        s.workspaceId = d.workspaceId;
        s.name = d.name;
        s.level = d.defaultLevel;
        break;
      case 'MemberAdded':
        s.members[d.principal] = d.role;
        break;
      case 'MemberRoleChanged':
        s.members[d.principal] = d.to;
        break;
      case 'MemberRemoved':
        delete s.members[d.principal];
        break;
      case 'ApiTokenIssued':
        s.tokens[d.tokenId] = { tokenHash: d.tokenHash, principal: d.principal, role: d.role, label: d.label, revoked: false, issuedAt: e.metadata.occurredAt };
        break;
      case 'ApiTokenRevoked':
        if (s.tokens[d.tokenId]) s.tokens[d.tokenId].revoked = true;
        break;
      case 'ReviewLevelSet':
        s.level = d.level;
        break;
      case 'RulesVersionActivated':
        s.rulesVersion = d.rulesVersion;
        s.rulesDocument = d.document;
        break;
      case 'SuppressionFactRecorded':
        (s.suppressions[d.fingerprint] ??= []).push({ nodeId: d.nodeId, repoId: d.repoId, prNumber: d.prNumber, reason: d.reason, at: e.globalPosition });
        break;
    }
    return s;
  },
};

export async function loadWorkspaceState(ws: WorkspaceHandle): Promise<WorkspaceState> {
  return (await loadStream(workspaceFold, ws, streamIds.workspace())).state;
}
