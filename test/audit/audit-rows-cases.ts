import type { NewEvent } from '../../src/events/envelope';
import { newUuidV7 } from '../../src/events/ids';
import { verifyStore } from '../../src/audit/checkpointer';
import { checkAuditRows } from '../../src/readmodels/queries/audit-check';
import { AuditRow, auditFold } from '../../src/readmodels/queries/audit';
import { catalogued } from '../../src/events/catalogue/event-types';
import { Backdoor } from './support';

const act = (ws: string, type: string, data: Record<string, unknown>, principal = 'agent:t'): NewEvent => ({
  eventId: newUuidV7(),
  type,
  schemaVersion: 1,
  data,
  metadata: { principal: principal as never, workspaceId: ws, correlationId: 'c', causationId: null, occurredAt: '2026-03-01T00:00:00.000Z' },
});

/**
 * The row check of `review-ledger audit` on each chained adapter: rows as the audit read model holds
 * them (here: what the audit fold makes of the log), checked against the chained events by position.
 */
export function auditRowsSuite(name: string, backdoor: () => Promise<Backdoor>): void {
  describe(`audit rows against the chain: ${name}`, () => {
    test('untouched rows verify with their event\'s chain hash (roles from earlier member events too); an edited row is a mismatch naming the field; past a break, unverified', async () => {
      const door = await backdoor();
      const ws = door.workspaceId;
      const store = await door.open();
      try {
        await store.append('workspace', 'any', [act(ws, 'MemberAdded', { principal: 'user:dana', role: 'owner' })]);
        await store.append('pr-web-app-7', 'any', [
          act(ws, 'ReviewNodeConfirmed', { nodeId: 'n1', by: 'user:dana', note: 'ok' }),
          act(ws, 'ReviewNodeDismissed', { nodeId: 'n2', by: 'user:carol', reason: 'intended', role: 'member' }),
        ]);
        await store.append('other', 'any', [act(ws, 'SuppressionFactRecorded', { fingerprint: 'x' })]);
        const state = auditFold.initialState();
        for await (const e of store.readAll()) auditFold.evolve(state, catalogued(e));
        const rows: AuditRow[] = state.rows;
        expect(rows.map((r) => [r.position, r.actor, r.role])).toEqual([[2, 'user:dana', 'owner'], [3, 'user:carol', 'member']]);
        const hashes = (await store.readChainPage(1, 2)).map((r) => r.hash);

        const clean = await checkAuditRows(store, rows, (await verifyStore(store)).firstBroken);
        expect(clean).toEqual([{ position: 2, check: 'verified', hash: hashes[0] }, { position: 3, check: 'verified', hash: hashes[1] }]);

        const edited = [{ ...rows[0], role: 'admin' }, { ...rows[1], actor: 'user:mallory', detail: 'fine' }];
        expect(await checkAuditRows(store, edited, null)).toEqual([
          { position: 2, check: 'mismatch', hash: hashes[0], problem: 'role: the row says "admin", the event says "owner"' },
          { position: 3, check: 'mismatch', hash: hashes[1], problem: 'actor: the row says "user:mallory", the event says "user:carol"; detail: the row says "fine", the event says "intended"' },
        ]);
        expect(await checkAuditRows(store, [{ ...rows[0], position: 4 }, { ...rows[0], position: 9 }], null)).toEqual([
          { position: 4, check: 'mismatch', hash: expect.stringMatching(/^[0-9a-f]{64}$/), problem: 'the event at position 4 (SuppressionFactRecorded) records no decision act' },
          { position: 9, check: 'mismatch', hash: null, problem: 'the log holds no event at position 9' },
        ]);

        await store.close();
        await door.setData(3, (await door.row(3)).data.replace('intended', 'INTENDED'));
        const reopened = await door.open();
        try {
          const broken = (await verifyStore(reopened)).firstBroken;
          expect(broken).toBe(3);
          expect((await checkAuditRows(reopened, rows, broken)).map((c) => c.check)).toEqual(['verified', 'unverified']);
        } finally {
          await reopened.close();
        }
      } finally {
        await store.close().catch(() => undefined);
        await door.close();
      }
    });
  });
}
