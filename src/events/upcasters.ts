import type { EventMetadata } from './envelope';

/**
 * Upcasters turn the data of an old schema version into the next version, on read. Stored events are
 * never rewritten: an audit must see exactly what was appended, and old events stay readable forever.
 */
export type Upcaster = (data: any, metadata: EventMetadata) => unknown;

const upcasters = new Map<string, Upcaster>();
const key = (type: string, fromVersion: number) => `${type}@${fromVersion}`;

export function registerUpcaster(type: string, fromVersion: number, fn: Upcaster): void {
  upcasters.set(key(type, fromVersion), fn);
}

/** Whether any stored version of `type` is upcast on read (a statement reading its raw data would see the old shape). */
export function hasUpcasters(type: string): boolean {
  for (const k of upcasters.keys()) if (k.slice(0, k.lastIndexOf('@')) === type) return true;
  return false;
}

/** Applies upcasters from `version` up to `target`; returns data unchanged when none apply. */
export function upcast(type: string, version: number, target: number, data: unknown, metadata: EventMetadata): unknown {
  let d = data;
  for (let v = version; v < target; v++) {
    const fn = upcasters.get(key(type, v));
    if (!fn) throw new Error(`no upcaster for ${type} v${v} → v${v + 1}`);
    d = fn(d, metadata);
  }
  return d;
}

// WorkspaceCreated v1 → v2: early builds stored `{ id, title }` and had no review levels; v2 names the
// fields after the catalogue and makes the default level explicit (balanced, SPEC §9).
registerUpcaster('WorkspaceCreated', 1, (d: { id: string; title?: string }) => ({
  workspaceId: d.id,
  name: d.title && d.title.length > 0 ? d.title : d.id,
  defaultLevel: 'balanced',
}));
