import { z } from 'zod';

export type StreamCategory = 'workspace' | 'repo' | 'pr' | 'status';

/**
 * One event type of the catalogue: its current schema version and the zod schema of its data at that
 * version. Older versions are upcast on read (src/events/upcasters.ts), never rewritten in the store.
 */
export interface EventDefinition<S extends z.ZodType = z.ZodType> {
  type: string;
  schemaVersion: number;
  stream: StreamCategory;
  schema: S;
}

export function defineEvent<S extends z.ZodType>(type: string, stream: StreamCategory, schemaVersion: number, schema: S): EventDefinition<S> {
  return { type, stream, schemaVersion, schema };
}

export type EventData<D extends EventDefinition> = z.infer<D['schema']>;
