import type { Principal, RecordedEvent } from './envelope';
import type { Role } from './roles';
import type { CatalogueEvent } from './catalogue/event-types';

/**
 * The types a decider and a fold are written against. They live at the bottom layer so that domain
 * folds, projections and commands can all name them without importing the command executor.
 */

/**
 * A pure fold over one stream: `evolve` may update `state` in place and must return it. `E` is the
 * stream's event union (catalogue/event-types.ts); the store hands a fold the events of its stream,
 * which the catalogue validated on append and upcasts on read, so `E` describes what really arrives.
 */
export interface StreamFold<S, E extends RecordedEvent = RecordedEvent> {
  initialState(): S;
  evolve(state: S, event: E): S;
}

type Pending<E> = E extends CatalogueEvent ? { type: E['type']; data: E['data'] } : never;

/**
 * What a decider returns: an event of the catalogue's union, its type and its data (ids, versions and
 * metadata are the kernel's). Typed, so a decider cannot return an event type the catalogue lacks or
 * data of another type's shape; the store still validates every event against its schema on append.
 */
export type PendingEvent = Pending<CatalogueEvent>;

/** Everything a decider may know besides state and input. Values, not services: deciders stay pure. */
export interface DecideContext {
  principal: Principal;
  role: Role;
  /** The server time stamped on the events (injected clock), for rules that compare dates. */
  now: string;
  workspaceId: string;
}
