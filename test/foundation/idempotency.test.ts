import { CommandExecutor } from '../../src/commands/kernel';
import { newUuidV7 } from '../../src/events/ids';
import { loadConfig } from '../../src/config';
import { Ledger } from '../../src/ledger';
import { workspaceFold } from '../../src/workspaces/workspace-state';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';
import { setLevel } from '../support/test-commands';
import { SlotMap } from '../../src/slots';


describe('idempotency (SPEC §3)', () => {
  test('same key + same payload → byte-identical response, nothing written', async () => {
    const f = await ledgerFixture({ workspaceId: 'acme' });
    const ws = await f.ledger.workspace('acme');
    const key = newUuidV7();
    const first = await f.ledger.executor.execute(setLevel, ws, { ...OWNER, idempotencyKey: key }, { level: 'light' });
    const count = (await f.events()).length;
    const again = await f.ledger.executor.execute(setLevel, ws, { ...OWNER, idempotencyKey: key }, { level: 'light' });
    expect(again.json).toBe(first.json);
    expect(again.replayed).toBe(true);
    expect((await f.events()).length).toBe(count);
    await f.cleanup();
  });

  test('same key + different payload → idempotency_key_reused, nothing written', async () => {
    const f = await ledgerFixture({ workspaceId: 'acme' });
    const ws = await f.ledger.workspace('acme');
    const key = newUuidV7();
    await f.ledger.executor.execute(setLevel, ws, { ...OWNER, idempotencyKey: key }, { level: 'light' });
    const count = (await f.events()).length;
    await expect(f.ledger.executor.execute(setLevel, ws, { ...OWNER, idempotencyKey: key }, { level: 'thorough' })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    expect((await f.events()).length).toBe(count);
    await f.cleanup();
  });

  test('10 concurrent requests with one key → exactly one event and 10 identical responses', async () => {
    const f = await ledgerFixture({ workspaceId: 'acme' });
    const ws = await f.ledger.workspace('acme');
    const key = newUuidV7();
    const before = (await f.events()).length;
    const outs = await Promise.all(Array.from({ length: 10 }, () => f.ledger.executor.execute(setLevel, ws, { ...OWNER, idempotencyKey: key }, { level: 'light' })));
    expect(new Set(outs.map((o) => o.json)).size).toBe(1);
    const after = await f.events();
    expect(after.length).toBe(before + 1);
    expect(after.filter((e) => e.type === 'ReviewLevelSet')).toHaveLength(1);
    await f.cleanup();
  });

  test('10 concurrent requests with one key through 10 separate executors (no shared cache) → one event', async () => {
    const f = await ledgerFixture({ workspaceId: 'acme' });
    const ws = await f.ledger.workspace('acme');
    const key = newUuidV7();
    const outs = await Promise.all(
      Array.from({ length: 10 }, () => new CommandExecutor().execute(setLevel, { ...ws, cache: new SlotMap() }, { ...OWNER, idempotencyKey: key }, { level: 'thorough' })),
    );
    expect(new Set(outs.map((o) => o.json)).size).toBe(1);
    expect((await f.events()).filter((e) => e.type === 'ReviewLevelSet')).toHaveLength(1);
    await f.cleanup();
  });

  test('holds across a restart: the replay after reopening returns the same bytes', async () => {
    const f = await ledgerFixture({ workspaceId: 'acme' });
    const key = newUuidV7();
    const first = await f.ledger.executor.execute(setLevel, await f.ledger.workspace('acme'), { ...OWNER, idempotencyKey: key }, { level: 'light' });
    const reopened = await f.reopen();
    const ws = await reopened.workspace('acme');
    const again = await reopened.executor.execute(setLevel, ws, { ...OWNER, idempotencyKey: key }, { level: 'light' });
    expect(again.json).toBe(first.json);
    await expect(reopened.executor.execute(setLevel, ws, { ...OWNER, idempotencyKey: key }, { level: 'balanced' })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    await f.cleanup(reopened);
  });

  test('a command emitting several events derives their ids from the key (createWorkspace: 2 events)', async () => {
    const f = await ledgerFixture();
    const key = newUuidV7();
    const out = await f.ledger.createWorkspace({ ...OWNER, idempotencyKey: key }, { workspaceId: 'acme' });
    expect(out.response.eventIds[0]).toBe(key);
    expect(out.response.eventIds).toHaveLength(2);
    expect(out.response.eventIds[1]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const again = await f.ledger.createWorkspace({ ...OWNER, idempotencyKey: key }, { workspaceId: 'acme' });
    expect(again.json).toBe(out.json);
    await f.cleanup();
  });

  test('concurrent writers with different keys on one stream never lose a write (conflicts re-decide)', async () => {
    const f = await ledgerFixture({ workspaceId: 'acme' });
    // Five "processes": each its own executor and caches, all on one store.
    const ws = await f.ledger.workspace('acme');
    const processes = Array.from({ length: 5 }, () => ({ executor: new CommandExecutor(), handle: { ...ws, cache: new SlotMap() } }));
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => processes[i % 5].executor.execute(setLevel, processes[i % 5].handle, { ...OWNER, idempotencyKey: newUuidV7() }, { level: 'light' })),
    );
    expect((await f.events()).filter((e) => e.type === 'ReviewLevelSet')).toHaveLength(40);
    await f.cleanup();
  });
});

describe('bad input is refused with a clear error and changes nothing', () => {
  const cases: Array<[string, (key: string) => [unknown, unknown], RegExp, string]> = [
    ['unknown field type', (k) => [{ ...OWNER, idempotencyKey: k }, { level: 'extreme' }], /^level: /, 'invalid_payload'],
    ['wrong field type', (k) => [{ ...OWNER, idempotencyKey: k }, { level: 42 }], /^level: /, 'invalid_payload'],
    ['missing key', () => [{ ...OWNER }, { level: 'light' }], /^idempotencyKey: required/, 'invalid_idempotency_key'],
    ['UUIDv4 key', () => [{ ...OWNER, idempotencyKey: '1b4e28ba-2fa1-41d2-883f-0016d3cca427' }, { level: 'light' }], /version nibble 7/, 'invalid_idempotency_key'],
    ['not a UUID', () => [{ ...OWNER, idempotencyKey: 'hello' }, { level: 'light' }], /is not a UUID/, 'invalid_idempotency_key'],
    ['key from the far future', () => [{ ...OWNER, idempotencyKey: 'ffffffff-ffff-7fff-bfff-ffffffffffff' }, { level: 'light' }], /in the future/, 'invalid_idempotency_key'],
    ['viewer role', (k) => [{ principal: 'user:v', role: 'viewer', idempotencyKey: k }, { level: 'light' }], /needs role admin/, 'forbidden'],
  ];
  test.each(cases)('%s', async (_name, make, message, code) => {
    const f = await ledgerFixture({ workspaceId: 'acme' });
    const ws = await f.ledger.workspace('acme');
    const before = (await f.events()).length;
    const [env, payload] = make(newUuidV7());
    const err = await f.ledger.executor.execute(setLevel, ws, env as never, payload).catch((e) => e);
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
    expect((await f.events()).length).toBe(before);
    await f.cleanup();
  });

  test('an unknown event type is refused by the catalogue', async () => {
    const f = await ledgerFixture({ workspaceId: 'acme' });
    // Past the compiler on purpose (`as never`): the kernel must refuse at run time what the types would not allow.
    const bogus = { ...setLevel, decide: () => [{ type: 'NoSuchEvent', data: {} } as never] };
    const before = (await f.events()).length;
    await expect(f.ledger.executor.execute(bogus, await f.ledger.workspace('acme'), { ...OWNER, idempotencyKey: newUuidV7() }, { level: 'light' })).rejects.toMatchObject({
      code: 'unknown_event_type',
    });
    expect((await f.events()).length).toBe(before);
    await f.cleanup();
  });

  test('an event over 1 MiB is refused', async () => {
    const f = await ledgerFixture({ workspaceId: 'acme' });
    const huge = { ...setLevel, decide: () => [{ type: 'SuppressionFactRecorded', data: { fingerprint: 'f', nodeId: 'n', reason: 'x'.repeat(1_100_000), confidence: 'low' } } as never] };
    const before = (await f.events()).length;
    const err = await f.ledger.executor.execute(huge, await f.ledger.workspace('acme'), { ...OWNER, idempotencyKey: newUuidV7() }, { level: 'light' }).catch((e) => e);
    expect(['payload_too_large', 'invalid_payload']).toContain(err.code);
    expect((await f.events()).length).toBe(before);
    await f.cleanup();
  });

  test('an unknown, missing or malformed workspace id is refused before any store is opened', async () => {
    const f = await ledgerFixture();
    const fs = await import('node:fs');
    await expect(f.ledger.workspace('nope')).rejects.toMatchObject({ code: 'unknown_workspace' });
    await expect(f.ledger.workspace(undefined)).rejects.toMatchObject({ code: 'missing_workspace' });
    await expect(f.ledger.workspace('../etc')).rejects.toMatchObject({ code: 'invalid_workspace_id' });
    await expect(f.ledger.workspace('A/B')).rejects.toMatchObject({ code: 'invalid_workspace_id' });
    expect(fs.readdirSync(f.dataDir).sort()).toEqual(['catalog.db', 'catalog.db-shm', 'catalog.db-wal'].filter((n) => fs.existsSync(`${f.dataDir}/${n}`)));
    await expect(f.ledger.createWorkspace({ ...OWNER, idempotencyKey: newUuidV7() }, { workspaceId: '../../x' })).rejects.toBeTruthy();
    expect(f.ledger.workspaces.list()).toEqual([]);
    await f.cleanup();
  });
});

describe('upcasting on read', () => {
  test('a WorkspaceCreated v1 event stored by an old build reads as v2', async () => {
    const f = await ledgerFixture();
    f.ledger.workspaces.register('old', 'old', '2026-01-01T00:00:00Z');
    const ws = await f.ledger.workspace('old');
    await ws.store.append('workspace', 'no_stream', [
      { eventId: newUuidV7(), type: 'WorkspaceCreated', schemaVersion: 1, data: { id: 'old', title: 'Old Workspace' }, metadata: { principal: 'user:x', workspaceId: 'old', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00Z' } },
    ]);
    const [e] = await f.events('old');
    expect(e.schemaVersion).toBe(2);
    expect(e.data).toEqual({ workspaceId: 'old', name: 'Old Workspace', defaultLevel: 'balanced' });
    const { state } = await f.ledger.executor.load(workspaceFold, ws, 'workspace');
    expect(state.name).toBe('Old Workspace');
    await f.cleanup();
  });
});

test('Ledger refuses unknown commands by name', async () => {
  const l = new Ledger(loadConfig({ dataDir: '/tmp/rl-none-' + process.pid }, {}));
  await expect(l.run('dropEverything', 'acme', { ...OWNER, idempotencyKey: newUuidV7() }, {})).rejects.toMatchObject({ code: 'unknown_command' });
  await l.close();
});
