import type { Principal, RecordedEvent } from './envelope';
import type { Role } from './roles';
import type { CatalogueEvent } from './catalogue/event-types';

/**
 * The types a decider and a fold are written against. They live at the bottom layer so that domain
 * folds, projections and commands can all name them without importing the command executor.
 */

/**
 * A pure fold over one stream: `evolve` may update `state` in place and must return it. In place on
 * purpose: the accumulator belongs to the fold alone while it runs, and a copy per event would multiply a
 * rebuild's allocations; what leaves the fold (to deciders, through the fold cache) is `Frozen` below. `E` is the
 * stream's event union (catalogue/event-types.ts); the store hands a fold the events of its stream,
 * which the catalogue validated on append and upcasts on read, so `E` describes what really arrives.
 */
export interface StreamFold<S, E extends RecordedEvent = RecordedEvent> {
  initialState(): S;
  evolve(state: S, event: E): S;
  /**
   * evolve reads neither the events' ids nor their metadata: loads may read the stream lean
   * (ReadStreamOptions.lean). Still right if it does read them, only slower (the store fetches them).
   */
  readonly leanEvents?: boolean;
}

/**
 * What a decider sees of its state: every property read-only, at every depth, so a decider cannot assign
 * into the folded state it decides on (the fold cache shares that object with every later command on the
 * stream). Arrays, maps and sets keep their types (their elements are frozen), so read-only helpers shared
 * with the folds take it as it is; their mutating methods are the folds' alone, by convention.
 */
export type Frozen<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends Array<infer U>
    ? Array<Frozen<U>>
    : T extends Map<infer K, infer V>
      ? Map<K, Frozen<V>>
      : T extends Set<unknown>
        ? T
        : T extends object
          ? { readonly [K in keyof T]: Frozen<T[K]> }
          : T;

/** The folded state as a decider sees it (a type-level view: the same object, nothing copied). */
export const frozenView = <S>(state: S): Frozen<S> => state as Frozen<S>;

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
