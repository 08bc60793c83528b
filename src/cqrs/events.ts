import { EventsHandler, type EventIdProvider, type IEvent } from '@nestjs/cqrs';
import type { Type } from '@nestjs/common';
import { eventCatalogue } from '../events/catalogue';
import type { RecordedEvent } from '../events/envelope';

/**
 * What the EventBus carries: one event of a workspace's log, published only after it was read back
 * from the store (so it is durable), by the feed (`event-feed.ts`) — never by a command handler.
 *
 * `replayed` is true when the event was already in the log when this process started following the
 * workspace (catch-up after a start or a restart), false for events appended while it follows.
 * Handlers that act on the outside world must stay idempotent either way: a restart delivers again
 * whatever its consumers had not committed (`CheckpointedConsumer`), or the whole log when none is.
 */
export abstract class LedgerEvent<D = unknown> implements IEvent {
  /** The catalogue type this class stands for (e.g. "HeadObserved"). */
  static readonly eventType: string;

  constructor(
    readonly workspaceId: string,
    readonly event: RecordedEvent<D>,
    readonly replayed: boolean,
  ) {}

  get type(): string {
    return this.event.type;
  }

  get data(): D {
    return this.event.data;
  }
}

/** After the last event that was in a workspace's log when the feed started following it (also for an empty log). */
export class WorkspaceCaughtUp implements IEvent {
  constructor(
    readonly workspaceId: string,
    /** The head position the catch-up reached. */
    readonly position: number,
  ) {}
}

export type LedgerEventType = Type<LedgerEvent> & { readonly eventType: string };

function eventClass(type: string): LedgerEventType {
  const cls = { [type]: class extends LedgerEvent {} }[type] as unknown as LedgerEventType;
  Object.defineProperty(cls, 'eventType', { value: type });
  // Every class gets its own bus id now, so a handler of one type never inherits another's: the
  // EventBus resolves ids through the prototype chain, and a class nobody handled yet has none.
  EventsHandler(cls)(class {});
  return cls;
}

const byType = new Map<string, LedgerEventType>([...eventCatalogue.keys()].map((t) => [t, eventClass(t)]));
/** Events of a type the catalogue no longer knows (kept in old logs) still reach catch-all handlers. */
export class UncataloguedLedgerEvent extends LedgerEvent {}
EventsHandler(UncataloguedLedgerEvent)(class {});

/** One bus class per catalogue event type, named after it: `@EventsHandler(ledgerEventClass('HeadObserved'))`. */
export function ledgerEventClass(type: string): LedgerEventType {
  const cls = byType.get(type);
  if (!cls) throw new Error(`event type "${type}" is not in the event catalogue`);
  return cls;
}

/** Every ledger event class: `@EventsHandler(...ALL_LEDGER_EVENTS)` sees the whole log. */
export const ALL_LEDGER_EVENTS: LedgerEventType[] = [...byType.values(), UncataloguedLedgerEvent as unknown as LedgerEventType];

/**
 * `@EventsHandler(EveryBusEvent)`: one handler for everything published on the bus — every ledger event
 * and WorkspaceCaughtUp — in one binding. The EventBus binds a handler once per class it names and runs
 * every binding's filter on every published event: a whole-log handler named ~60 classes, and their
 * filters were 2.6 % of a server's CPU under HTTP load (bench:rpc profile). This marker's id is null
 * (CachedEventIdProvider), and a binding without an id has no filter (EventBus.filterEventWithId; the
 * test in test/cqrs/event-bus.test.ts holds @nestjs/cqrs to it). Never published itself.
 */
export class EveryBusEvent implements IEvent {
  private constructor() {}
}

/** The bus object for a recorded event. */
export function toLedgerEvent(workspaceId: string, e: RecordedEvent, replayed: boolean): LedgerEvent {
  const cls = (byType.get(e.type) ?? UncataloguedLedgerEvent) as unknown as new (w: string, e: RecordedEvent, r: boolean) => LedgerEvent;
  return new cls(workspaceId, e, replayed);
}

/** Where @nestjs/cqrs keeps an event class's bus id (its default provider reads the same key). */
const EVENT_METADATA = '__event__';

/**
 * The default event id provider, remembered per class: the EventBus asks for the id of every published
 * event once per handler binding, and a whole-log handler is bound once per event class.
 */
export class CachedEventIdProvider implements EventIdProvider {
  private readonly ids = new WeakMap<object, string>();

  getEventId(event: Type<IEvent>): string | null {
    if (event === (EveryBusEvent as unknown as Type<IEvent>)) return null;
    const hit = this.ids.get(event);
    if (hit) return hit;
    const id = (Reflect.getMetadata(EVENT_METADATA, event) as { id: string } | undefined)?.id ?? null;
    // Only a class's own id is final: an inherited one changes once the subclass gets a handler.
    if (id && Reflect.hasOwnMetadata(EVENT_METADATA, event)) this.ids.set(event, id);
    return id;
  }
}
