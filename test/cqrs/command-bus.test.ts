import { CommandBus } from '@nestjs/cqrs';
import { COMMANDS } from '../../src/commands/registry';
import type { CommandEnvelope, CommandOutcome } from '../../src/commands/kernel';
import { ledgerCommand, ledgerCommandClass, LEDGER_COMMAND_CLASSES } from '../../src/cqrs/commands';
import { DomainError } from '../../src/domain-error';
import { newUuidV7 } from '../../src/events/ids';
import type { Ledger } from '../../src/ledger';
import { ledgerFixture } from '../support/ledger-fixture';
import { BASE, HEAD_A, nodePayload } from '../rpc/support';
import { cqrsContext } from './support';

const WS = 'bus';
const OWNER = { principal: 'user:owner' as const, role: 'owner' as const };
const AGENT = { principal: 'agent:rev' as const, role: 'member' as const };
const PEER = { principal: 'agent:peer' as const, role: 'member' as const };
const target = { repoId: 'shop', prNumber: 7 };
// One fixed instant for both ledgers (the keys, minted after it, are never in its future by 5 minutes).
const at = new Date();

/** The same acts, with the same keys, in the same order: the workspace, members, a review, a finding, a confirmation. */
function script(): Array<{ command: string; workspaceId: string; envelope: CommandEnvelope; payload: Record<string, unknown> }> {
  const k = () => newUuidV7();
  return [
    { command: 'createWorkspace', workspaceId: WS, envelope: { ...OWNER, idempotencyKey: k() }, payload: { workspaceId: WS } },
    { command: 'addMember', workspaceId: WS, envelope: { ...OWNER, idempotencyKey: k() }, payload: { principal: AGENT.principal, role: 'member' } },
    { command: 'addMember', workspaceId: WS, envelope: { ...OWNER, idempotencyKey: k() }, payload: { principal: PEER.principal, role: 'member' } },
    { command: 'requestReview', workspaceId: WS, envelope: { ...AGENT, idempotencyKey: k() }, payload: { ...target, baseSha: BASE, headSha: HEAD_A } },
    { command: 'addReviewNode', workspaceId: WS, envelope: { ...AGENT, idempotencyKey: k(), correlationId: 'c-1' }, payload: { ...target, node: nodePayload('a rounding bug') } },
  ];
}

const stored = async (ledger: Ledger) => {
  const out: unknown[] = [];
  for await (const e of (await ledger.workspace(WS)).store.readAll()) out.push({ eventId: e.eventId, streamId: e.streamId, streamRevision: e.streamRevision, globalPosition: e.globalPosition, type: e.type, data: e.data, metadata: e.metadata });
  return out;
};

describe('the command registry on the Nest CommandBus', () => {
  it('a command executed through the CommandBus appends exactly the events the executor appends, and replays on the same key', async () => {
    const steps = script();
    const direct = await ledgerFixture({ options: { clock: () => at } });
    const viaBus = await ledgerFixture({ options: { clock: () => at } });
    const app = await cqrsContext(viaBus.ledger);
    try {
      const bus = app.get(CommandBus);
      const directOut: CommandOutcome[] = [];
      const busOut: CommandOutcome[] = [];
      for (const s of steps) directOut.push(await direct.ledger.run(s.command, s.workspaceId, s.envelope, s.payload));
      for (const s of steps) busOut.push(await bus.execute(ledgerCommand(s.command, s.workspaceId, s.envelope, s.payload)));
      expect(busOut.map((o) => o.json)).toEqual(directOut.map((o) => o.json));
      const events = await stored(viaBus.ledger);
      expect(events.length).toBeGreaterThanOrEqual(steps.length);
      expect(events).toEqual(await stored(direct.ledger));

      // The finding once more with its key: the original bytes, nothing written.
      const filed = steps[4];
      const again = await bus.execute(ledgerCommand(filed.command, WS, filed.envelope, filed.payload));
      expect(again.replayed).toBe(true);
      expect(again.json).toBe(busOut[4].json);
      expect(await stored(viaBus.ledger)).toEqual(events);
      // The same key with another payload is refused, as at every edge.
      await expect(bus.execute(ledgerCommand(filed.command, WS, filed.envelope, { ...target, node: nodePayload('another finding') }))).rejects.toMatchObject({ code: 'idempotency_key_reused' });
      // A peer confirms through the bus: the decider's rules hold there too (no self-confirmation).
      const nodeId = (busOut[4].response.result as { nodeId: string }).nodeId;
      await expect(bus.execute(ledgerCommand('confirmNode', WS, { ...AGENT, idempotencyKey: newUuidV7() }, { ...target, nodeId }))).rejects.toBeInstanceOf(DomainError);
      const confirmed = await bus.execute(ledgerCommand('confirmNode', WS, { ...PEER, idempotencyKey: newUuidV7() }, { ...target, nodeId }));
      expect(confirmed.response.eventIds).toHaveLength(1);
    } finally {
      await app.close();
      await viaBus.cleanup();
      await direct.cleanup();
    }
  });

  it('issueToken through the bus mints the token as RPC does (the secret once, the hash in the log)', async () => {
    const fx = await ledgerFixture({ workspaceId: WS });
    const app = await cqrsContext(fx.ledger);
    try {
      const bus = app.get(CommandBus);
      await bus.execute(ledgerCommand('addMember', WS, { ...OWNER, idempotencyKey: newUuidV7() }, { principal: AGENT.principal, role: 'member' }));
      const issued = (await bus.execute(ledgerCommand('issueToken', WS, { ...OWNER, idempotencyKey: newUuidV7() }, { principal: AGENT.principal, role: 'member' }))) as CommandOutcome & { token: string };
      expect(typeof issued.token).toBe('string');
      expect(issued.token.length).toBeGreaterThan(20);
      expect(JSON.stringify(await fx.events())).not.toContain(issued.token);
    } finally {
      await app.close();
      await fx.cleanup();
    }
  });

  it('every registry command has its command class and a bound handler (refusals come from the ledger, never "no handler")', async () => {
    const fx = await ledgerFixture({ workspaceId: WS });
    const app = await cqrsContext(fx.ledger);
    try {
      const bus = app.get(CommandBus);
      const before = (await fx.events()).length;
      expect(LEDGER_COMMAND_CLASSES.map((c) => c.definition.name)).toEqual(COMMANDS.map((c) => c.name));
      for (const def of COMMANDS) {
        expect(ledgerCommandClass(def.name).name).toBe(`${def.name[0].toUpperCase()}${def.name.slice(1)}Command`);
        // A viewer with an empty payload: refused by access or validation, i.e. it reached the ledger.
        const err = await bus.execute(ledgerCommand(def.name, WS, { principal: 'user:viewer', role: 'viewer', idempotencyKey: newUuidV7() }, {})).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).not.toBeNull();
        expect((err as Error).constructor.name).not.toBe('CommandHandlerNotFoundException');
        expect(['DomainError', 'ZodError']).toContain((err as Error).name);
      }
      expect(await fx.events()).toHaveLength(before);
    } finally {
      await app.close();
      await fx.cleanup();
    }
  });
});
