import { Inject, Injectable, Module } from '@nestjs/common';
import { Command, CommandBus, CommandHandler, EventsHandler, Query, QueryBus, QueryHandler, type ICommandHandler, type IEventHandler, type IQueryHandler } from '@nestjs/cqrs';
import { z } from 'zod';
import type { CommandDefinition, CommandOutcome } from '../../src/commands/kernel';
import { ledgerCommand } from '../../src/cqrs/commands';
import { ledgerEventClass, type LedgerEvent } from '../../src/cqrs/events';
import { ledgerQuery } from '../../src/cqrs/queries';
import { DomainError } from '../../src/domain-error';
import { streamIds } from '../../src/events/envelope';
import { newUuidV7 } from '../../src/events/ids';
import { Ledger } from '../../src/ledger';
import { workspaceFold, type WorkspaceState } from '../../src/workspaces/workspace-state';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';
import { BASE, HEAD_A, nodePayload } from '../rpc/support';
import { cqrsContext, until } from './support';

const WS = 'ext';
const target = { repoId: 'shop', prNumber: 2 };

/** A command that exists only in this test: "go thorough", a decider of its own on the workspace stream. */
class GoThorough extends Command<CommandOutcome> {
  constructor(
    readonly workspaceId: string,
    readonly idempotencyKey: string,
  ) {
    super();
  }
}

const goThorough: CommandDefinition<Record<string, never>, WorkspaceState> = {
  name: 'goThorough',
  description: 'test only',
  input: z.object({}).strict() as unknown as z.ZodType<Record<string, never>>,
  access: { minRole: 'admin' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  decide(state) {
    if (state.level === 'thorough') throw new DomainError('illegal_ladder_transition', 'level: already thorough');
    return [{ type: 'ReviewLevelSet', data: { level: 'thorough' } }];
  },
};

@CommandHandler(GoThorough)
@Injectable()
class GoThoroughHandler implements ICommandHandler<GoThorough, CommandOutcome> {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}
  async execute(c: GoThorough): Promise<CommandOutcome> {
    return this.ledger.executor.execute(goThorough, await this.ledger.workspace(c.workspaceId), { ...OWNER, idempotencyKey: c.idempotencyKey, via: 'server' }, {});
  }
}

/** A query of its own, built on a registry query through the QueryBus. */
class OpenFindingCount extends Query<number> {
  constructor(readonly workspaceId: string) {
    super();
  }
}

@QueryHandler(OpenFindingCount)
@Injectable()
class OpenFindingCountHandler implements IQueryHandler<OpenFindingCount, number> {
  constructor(private readonly queries: QueryBus) {}
  async execute(q: OpenFindingCount): Promise<number> {
    const answer = await this.queries.execute(ledgerQuery('nodeStatus', q.workspaceId, target));
    return (answer.value as { nodes: Array<{ status: string }> }).nodes.filter((n) => n.status === 'open').length;
  }
}

@EventsHandler(ledgerEventClass('ReviewLevelSet'))
@Injectable()
class LevelWatcher implements IEventHandler<LedgerEvent> {
  readonly levels: string[] = [];
  handle(e: LedgerEvent<{ level: string }>): void {
    if (!e.replayed) this.levels.push(e.data.level);
  }
}

/** What a feature module of the application would look like. */
@Module({ providers: [GoThoroughHandler, OpenFindingCountHandler, LevelWatcher] })
class GoThoroughModule {}

describe('extending the ledger the Nest way', () => {
  it('a test-only @CommandHandler, @QueryHandler and @EventsHandler added by a module are reachable', async () => {
    const fx = await ledgerFixture({ workspaceId: WS });
    const app = await cqrsContext(fx.ledger, { imports: [GoThoroughModule] });
    try {
      const commands = app.get(CommandBus);
      const key = newUuidV7();
      const out = await commands.execute(new GoThorough(WS, key));
      expect(out.response.eventIds).toEqual([key]);
      const recorded = (await fx.events()).find((e) => e.eventId === key)!;
      expect(recorded).toMatchObject({ type: 'ReviewLevelSet', data: { level: 'thorough' }, metadata: { command: 'goThorough', via: 'server' } });
      // Through the kernel, so idempotent like every command…
      expect((await commands.execute(new GoThorough(WS, key))).replayed).toBe(true);
      // …and its decider's refusals are typed.
      await expect(commands.execute(new GoThorough(WS, newUuidV7()))).rejects.toMatchObject({ code: 'illegal_ladder_transition', message: 'level: already thorough' });
      await until(() => app.get(LevelWatcher).levels.length === 1, 10_000, 'ReviewLevelSet on the bus');
      expect(app.get(LevelWatcher).levels).toEqual(['thorough']);

      await commands.execute(ledgerCommand('requestReview', WS, { ...OWNER, idempotencyKey: newUuidV7() }, { ...target, baseSha: BASE, headSha: HEAD_A }));
      await commands.execute(ledgerCommand('addReviewNode', WS, { principal: 'user:owner', role: 'owner', idempotencyKey: newUuidV7() }, { ...target, node: nodePayload('one') }));
      expect(await app.get(QueryBus).execute(new OpenFindingCount(WS))).toBe(1);
    } finally {
      await app.close();
      await fx.cleanup();
    }
  });
});
