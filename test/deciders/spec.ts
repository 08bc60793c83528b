import type { CommandDefinition } from '../../src/commands/kernel';
import { DomainError } from '../../src/domain-error';
import { validateEventData } from '../../src/events/catalogue';
import type { RecordedEvent } from '../../src/events/envelope';
import { frozenView, type DecideContext, type PendingEvent } from '../../src/events/kernel-types';

/**
 * An event as a spec writes it: a type name and its data, checked against the catalogue's schema at run
 * time (validateEventData) rather than by the compiler, so specs can be written as plain object literals.
 */
type SpecEvent = { type: string; data: unknown };

/**
 * Emmett's decider specification, for our command definitions: given past events (folded with the
 * command's own fold), when a command (parsed with its own input schema), then the new events — or a
 * refusal, or nothing. No store, no executor, no clock: the decider is three plain functions.
 * Every event, given or decided, must pass the catalogue's schema, so a spec cannot describe an event
 * the kernel would refuse to append.
 */
export const ctxOf = (principal: string, role: DecideContext['role'] = 'member'): DecideContext => ({ principal, role, now: '2026-01-01T00:00:00.000Z', workspaceId: 'w1' });

export function deciderSpec<I, S>(def: CommandDefinition<I, S, I>) {
  return {
    given(past: SpecEvent[]) {
      const stream = 'spec-stream';
      let state = def.fold.initialState();
      past.forEach((p, i) => {
        const e: RecordedEvent = {
          eventId: `e${i}`,
          type: p.type,
          schemaVersion: 1,
          data: validateEventData(p.type, p.data),
          metadata: { principal: 'system:spec', workspaceId: 'w1', correlationId: `c${i}`, causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' },
          streamId: stream,
          streamRevision: i,
          globalPosition: i + 1,
        };
        state = def.fold.evolve(state, e);
      });
      return {
        when(payload: unknown, ctx: DecideContext) {
          const decide = (): PendingEvent[] => {
            const input = def.input.parse(payload);
            def.authorize?.(frozenView(state), input, ctx);
            const out = def.decide(frozenView(state), input, ctx);
            for (const e of out) validateEventData(e.type, e.data);
            return out;
          };
          return {
            then(expected: SpecEvent[]) {
              expect(decide()).toEqual(expected);
            },
            thenNothing() {
              expect(decide()).toEqual([]);
            },
            thenRefused(code: string) {
              let err: unknown;
              try {
                decide();
              } catch (e) {
                err = e;
              }
              expect(err).toBeInstanceOf(DomainError);
              expect((err as DomainError).code).toBe(code);
            },
          };
        },
      };
    },
  };
}
