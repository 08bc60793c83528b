import { z } from 'zod';
import type { RecordedEvent } from '../envelope';

export type StreamCategory = 'workspace' | 'repo' | 'pr' | 'status';

/**
 * One event type of the catalogue: its current schema version and the zod schema of its data at that
 * version. Older versions are upcast on read (src/events/upcasters.ts), never rewritten in the store.
 * The type name and the stream category are literal types, so the catalogue itself yields the
 * TypeScript event unions (./event-types.ts).
 */
export interface EventDefinition<S extends z.ZodType = z.ZodType, T extends string = string, C extends StreamCategory = StreamCategory> {
  type: T;
  schemaVersion: number;
  stream: C;
  schema: S;
}

export function defineEvent<T extends string, C extends StreamCategory, S extends z.ZodType>(type: T, stream: C, schemaVersion: number, schema: S): EventDefinition<S, T, C> {
  return { type, stream, schemaVersion, schema };
}

export type EventData<D extends EventDefinition> = z.infer<D['schema']>;

/**
 * The recorded event of one definition (distributes over a union of definitions): `type` is the
 * literal, `data` what the current schema parses — stored data of an older version is upcast on read.
 */
export type EventOf<D> = D extends EventDefinition<infer S, infer T, StreamCategory> ? RecordedEvent<z.infer<S>> & { type: T } : never;
