import * as fs from 'node:fs';
import * as path from 'node:path';
import { newUuidV7 } from '../events/ids';
import { LOCAL_OPERATOR, type Ledger } from '../ledger';
import { workspaceFold } from '../workspaces/workspace-state';

export const OWNER_TOKEN_FILE = 'owner-token';
export const DEFAULT_WORKSPACE = 'default';

export interface OwnerTokenResult {
  file: string;
  workspaceId: string;
  created: boolean;
}

/**
 * First start: with no owner token file under the data dir, make sure a workspace exists (creating
 * `default` when there is none), issue an owner token for the local operator in it and write the token
 * to `<dataDir>/owner-token` with mode 0600. Later starts find the file and do nothing.
 */
export async function ensureOwnerToken(ledger: Ledger): Promise<OwnerTokenResult> {
  const file = path.join(ledger.config.dataDir, OWNER_TOKEN_FILE);
  if (fs.existsSync(file)) {
    const workspaceId = /^rl_([a-z0-9-]+)_/.exec(fs.readFileSync(file, 'utf8').trim())?.[1] ?? DEFAULT_WORKSPACE;
    return { file, workspaceId, created: false };
  }
  const existing = ledger.workspaces.list();
  let workspaceId = existing[0]?.workspaceId;
  const operator = { ...LOCAL_OPERATOR, via: 'server' as const };
  if (!workspaceId) {
    workspaceId = DEFAULT_WORKSPACE;
    await ledger.createWorkspace({ ...operator, idempotencyKey: newUuidV7() }, { workspaceId, name: 'Default workspace' });
  }
  // Tokens are minted only for members: a workspace someone else created gets the operator as an owner first.
  const { state } = await ledger.executor.load(workspaceFold, await ledger.workspace(workspaceId), 'workspace');
  if (state.members[operator.principal] === undefined) await ledger.run('addMember', workspaceId, { ...operator, idempotencyKey: newUuidV7() }, { principal: operator.principal, role: 'owner' });
  const issued = await ledger.issueToken(workspaceId, { ...operator, idempotencyKey: newUuidV7() }, { principal: operator.principal, role: 'owner', label: 'first-start owner token' });
  // 'wx' + 0600: never clobber a file someone else wrote, never readable by other local users.
  fs.writeFileSync(file, `${issued.token}\n`, { mode: 0o600, flag: 'wx' });
  return { file, workspaceId, created: true };
}
