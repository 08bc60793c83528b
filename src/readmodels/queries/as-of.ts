import { DomainError } from '../../domain-error';
import type { WorkspaceHandle } from '../../workspaces/registry';

/**
 * Resolves an "as of" bound (SPEC §7.4) to a global position: a position is taken as is (capped at the
 * head); an ISO-8601 time is the last event stored at or before it (0 when none was).
 */
export async function resolveAsOf(ws: WorkspaceHandle, value: string): Promise<number> {
  const head = await ws.store.headPosition();
  if (/^\d+$/.test(value)) return Math.min(Number(value), head);
  const t = Date.parse(value);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}/.test(value)) throw new DomainError('invalid_as_of', `as-of: "${value.slice(0, 60)}" is neither a global position nor an ISO-8601 time`);
  const bound = new Date(t).toISOString();
  let position = 0;
  // occurredAt is stamped at append time, so it follows the log order; scanning all keeps this honest
  // even across a clock step backwards.
  for await (const e of ws.store.readAll()) if (e.metadata.occurredAt <= bound && e.globalPosition > position) position = e.globalPosition;
  return position;
}
