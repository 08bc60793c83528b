import { z } from 'zod';
import { DomainError, validationError } from '../../domain-error';
import type { EventMetadata } from '../envelope';
import { upcast } from '../upcasters';
import type { EventDefinition } from './define';
import { workspaceEvents } from './workspace';
// Feature catalogues: each feature owns its file; this index is the one registry of event types.
import { CATALOGUE_PARTS } from './parts';

const definitions = new Map<string, EventDefinition>();
for (const def of [...workspaceEvents, ...CATALOGUE_PARTS.flat()]) {
  if (definitions.has(def.type)) throw new Error(`event type ${def.type} defined twice`);
  definitions.set(def.type, def);
}

export const eventCatalogue: ReadonlyMap<string, EventDefinition> = definitions;

/**
 * The catalogue's own (literal, so internalized) copy of an event type; the stores hand it out instead of
 * the fresh string each row decodes to. A fold's `switch (event.type)` then compares pointers instead of
 * characters case after case (measured: a third of a 1M-event rebuild before the PR fold interned).
 */
export const internedType = (type: string): string => definitions.get(type)?.type ?? type;

export function eventDefinition(type: string): EventDefinition {
  const def = definitions.get(type);
  if (!def) throw new DomainError('unknown_event_type', `type: "${type.slice(0, 100)}" is not in the event catalogue`);
  return def;
}

/** Validates event data against the current schema of its type; returns the parsed data. */
export function validateEventData(type: string, data: unknown): unknown {
  const def = eventDefinition(type);
  const parsed = def.schema.safeParse(data);
  if (!parsed.success) throw validationError(parsed.error.issues, `${type}.data`);
  return parsed.data;
}

/** Brings stored data of any older schema version up to the current one (no-op when current). */
export function upcastEvent(type: string, schemaVersion: number, data: unknown, metadata: EventMetadata): { schemaVersion: number; data: unknown } {
  const def = definitions.get(type);
  if (!def || schemaVersion >= def.schemaVersion) return { schemaVersion, data };
  return { schemaVersion: def.schemaVersion, data: upcast(type, schemaVersion, def.schemaVersion, data, metadata) };
}

export type { EventDefinition } from './define';
export { z };
