import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { LOCAL_OPERATOR } from '../../src/ledger';
import { defaultOperatorConfig, loadOperatorConfig } from '../../src/operator-config';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { call, tokenFor } from '../rpc/support';

/**
 * Issue 36: one owner could stop the server — 300 `createWorkspace` calls held 4,270 open files, and with
 * `nofile=1024` the server no longer booted. An owner may now create `maxWorkspacesPerOwner` workspaces
 * over RPC, counting those created from a workspace it created (a chain of new owners shares the quota);
 * the local operator is not counted.
 */
describe('workspaces per owner are bounded', () => {
  let server: RunningServer;
  let dataDir: string;
  let ownerToken: string;
  let owner: string;
  /** The owner token each successful creation answered with. */
  const tokens = new Map<string, string>();
  const LIMIT = 3;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-ws-quota-'));
    server = await startServer({ dataDir, port: 0, operator: { ...defaultOperatorConfig(dataDir), maxWorkspacesPerOwner: LIMIT } });
    ownerToken = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    const me = await fetch(`${server.url}/workspaces/default/review-page/me`, { headers: { authorization: `Bearer ${ownerToken}` } });
    owner = ((await me.json()) as { principal: string }).principal;
  });
  afterAll(async () => {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const create = async (token: string, home: string, workspaceId: string, idempotencyKey = newUuidV7()) => {
    const r = await call(server.url, token, 'createWorkspace', { workspace_id: home, idempotencyKey, workspaceId });
    if (r.result) tokens.set(workspaceId, r.result.result.token);
    return r;
  };

  it('the owner creates its limit; one more is workspace_quota_exceeded and creates nothing; a replay is still answered', async () => {
    const firstKey = newUuidV7();
    expect((await create(ownerToken, 'default', 'quota-1', firstKey)).error).toBeUndefined();
    for (const id of ['quota-2', 'quota-3']) expect((await create(ownerToken, 'default', id)).error).toBeUndefined();
    const over = await create(ownerToken, 'default', 'quota-4');
    expect([over.error?.data?.code, over.error?.message]).toEqual([
      'workspace_quota_exceeded',
      `workspaceId: the workspaces created from default/${owner} number 3, the operator's limit (maxWorkspacesPerOwner 3); "quota-4" was not created`,
    ]);
    expect(server.ledger.workspaces.get('quota-4')).toBeUndefined();
    expect(fs.existsSync(path.join(dataDir, 'quota-4'))).toBe(false);
    const first = tokens.get('quota-1');
    const replay = await create(ownerToken, 'default', 'quota-1', firstKey);
    expect(replay.error).toBeUndefined();
    expect(replay.result.result.token).toBe(first);
  });

  it('the owner of a workspace it created shares its quota: no chain of owners multiplies it', async () => {
    const r = await create(tokens.get('quota-2')!, 'quota-2', 'quota-from-child');
    expect([r.error?.data?.code, r.error?.message]).toEqual([
      'workspace_quota_exceeded',
      `workspaceId: the workspaces created from default/${owner} number 3, the operator's limit (maxWorkspacesPerOwner 3); "quota-from-child" was not created`,
    ]);
  });

  it('another owner of the first workspace has a quota of its own; the local operator is not counted', async () => {
    const bob = await tokenFor(server.url, ownerToken, 'default', 'user:bob-owner', 'owner');
    expect((await create(bob, 'default', 'bob-1')).error).toBeUndefined();
    await server.ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: 'operator-1' });
    expect(server.ledger.workspaces.get('operator-1')).toBeDefined();
  });

  it('maxWorkspacesPerOwner is operator configuration, validated at start (default 20)', () => {
    const file = path.join(dataDir, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ maxWorkspacesPerOwner: 5 }));
    expect(loadOperatorConfig(dataDir, { configFile: file }, {}).maxWorkspacesPerOwner).toBe(5);
    fs.writeFileSync(file, JSON.stringify({ maxWorkspacesPerOwner: -1 }));
    expect(() => loadOperatorConfig(dataDir, { configFile: file }, {})).toThrow(/maxWorkspacesPerOwner/);
    expect(defaultOperatorConfig(dataDir).maxWorkspacesPerOwner).toBe(20);
  });
});
