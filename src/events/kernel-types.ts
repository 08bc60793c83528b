import type { Principal, RecordedEvent } from './envelope';
import type { Role } from './roles';

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

/** What a decider returns: the event type and its data; ids, versions and metadata are the kernel's. */
export interface PendingEvent {
  type: string;
  data: unknown;
}

/** Everything a decider may know besides state and input. Values, not services: deciders stay pure. */
export interface DecideContext {
  principal: Principal;
  role: Role;
  /** The server time stamped on the events (injected clock), for rules that compare dates. */
  now: string;
  workspaceId: string;
}
