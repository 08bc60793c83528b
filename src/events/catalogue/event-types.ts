import type { RecordedEvent } from '../envelope';
import type { EventOf, StreamCategory } from './define';
import type { computeEvents } from './compute';
import type { contractEvents } from './contract';
import type { progressEvents } from './progress';
import type { repoEvents } from './repo';
import type { reviewEvents } from './review';
import type { statusCheckEvents } from './status-check';
import type { visualEvents } from './visual';
import type { workspaceEvents } from './workspace';

/** Every definition of the catalogue (the same lists catalogue/index.ts registers). */
type CatalogueDefinition =
  | (typeof workspaceEvents)[number]
  | (typeof repoEvents)[number]
  | (typeof computeEvents)[number]
  | (typeof contractEvents)[number]
  | (typeof visualEvents)[number]
  | (typeof reviewEvents)[number]
  | (typeof progressEvents)[number]
  | (typeof statusCheckEvents)[number];

/** Any recorded event of the catalogue, discriminated by `type`. */
export type CatalogueEvent = EventOf<CatalogueDefinition>;
export type EventType = CatalogueEvent['type'];
/** The recorded event of one type: `EventOfType<'ReviewNodeFiled'>['data']` is its parsed data. */
export type EventOfType<T extends EventType> = Extract<CatalogueEvent, { type: T }>;

/** The events one stream category holds (Emmett's per-stream event union). */
export type StreamEvent<C extends StreamCategory> = EventOf<Extract<CatalogueDefinition, { stream: C }>>;
export type WorkspaceEvent = StreamEvent<'workspace'>;
export type RepoEvent = StreamEvent<'repo'>;
export type PrEvent = StreamEvent<'pr'>;
export type StatusEvent = StreamEvent<'status'>;

/** Narrows a recorded event to one catalogue type (`events.find(ofType('ReviewPublished'))?.data` is typed). */
export const ofType =
  <T extends EventType>(type: T) =>
  (e: RecordedEvent): e is EventOfType<T> =>
    e.type === type;

export const isEvent = <T extends EventType>(e: RecordedEvent, type: T): e is EventOfType<T> => e.type === type;

/**
 * A recorded event from a store, typed by the catalogue. Sound because every append validates the data
 * against its type's current schema (the command kernel's `toNewEvent`), every read upcasts an older
 * version to the current one, and a type the catalogue does not know is refused on append.
 */
export const catalogued = (e: RecordedEvent): CatalogueEvent => e as CatalogueEvent;
