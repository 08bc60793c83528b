import { z } from 'zod';

/** `user:<id>` for humans, `agent:<id>` for reviewer agents, `system:<id>` for the server itself. */
export const principalSchema = z
  .string()
  .max(200)
  .regex(/^(user|agent|system):[A-Za-z0-9._@+\-]{1,190}$/, 'must be "user:<id>", "agent:<id>" or "system:<id>"');
export type Principal = z.infer<typeof principalSchema>;
export const isHuman = (p: Principal): boolean => p.startsWith('user:');
export const isAgent = (p: Principal): boolean => p.startsWith('agent:');

export const eventMetadataSchema = z.object({
  principal: principalSchema,
  workspaceId: z.string(),
  correlationId: z.string().max(200),
  causationId: z.string().max(200).nullable(),
  /** Server time, ISO-8601 UTC. Stamped at the edge, never read inside a fold's decisions. */
  occurredAt: z.string(),
  /** The client's UUIDv7 idempotency key for the logical action that produced this event. */
  idempotencyKey: z.string().optional(),
  /** sha256 of the canonical command payload: the same key with another payload is refused. */
  commandDigest: z.string().optional(),
  /** Name of the command that produced the event and how many events it produced. */
  command: z.string().optional(),
  batchSize: z.number().int().positive().optional(),
  /** The role the act was authorized with (the caller's token role capped by its membership). */
  role: z.string().max(20).optional(),
  /** The bearer token that acted (absent for the local operator's CLI and the server itself). */
  tokenId: z.string().max(100).optional(),
  /** The edge the act came through: rpc, mcp, sse, cli, webhook, server. */
  via: z.string().max(20).optional(),
});
export type EventMetadata = z.infer<typeof eventMetadataSchema>;

/** An event to append. */
export interface NewEvent<D = unknown> {
  eventId: string;
  type: string;
  schemaVersion: number;
  data: D;
  metadata: EventMetadata;
}

/**
 * The JSON text of a new event's data and metadata, when its maker already wrote it (the kernel does, to
 * check the size): the store stores these exact strings instead of serializing the objects again. Kept
 * beside the event, not on it, so the event's shape stays what adapters and tests compare.
 */
const encodedJson = new WeakMap<NewEvent, { data: string; metadata: string }>();

export function withEncodedJson<E extends NewEvent>(event: E, json: { data: string; metadata: string }): E {
  encodedJson.set(event, json);
  return event;
}

/** The event's data and metadata as JSON text: what its maker wrote, or serialized now. */
export function encodedJsonOf(event: NewEvent): { data: string; metadata: string } {
  return encodedJson.get(event) ?? { data: JSON.stringify(event.data), metadata: JSON.stringify(event.metadata) };
}

/**
 * A stored event. `globalPosition` is monotonic in the workspace's whole log: consecutive integers
 * on SQLite/PostgreSQL, the commit position on KurrentDB. Clients must treat it as opaque.
 */
export interface RecordedEvent<D = unknown> extends NewEvent<D> {
  streamId: string;
  streamRevision: number;
  globalPosition: number;
}

/** Streams of a workspace: "workspace", "repo-<repoId>", "pr-<repoId>-<number>", "status-<repoId>-<number>". */
export const streamIds = {
  workspace: (): string => 'workspace',
  repo: (repoId: string): string => `repo-${repoId}`,
  pr: (repoId: string, prNumber: number): string => `pr-${repoId}-${prNumber}`,
  /** What the ledger posted to GitHub as the PR's verdict status (src/status-check). */
  status: (repoId: string, prNumber: number): string => `status-${repoId}-${prNumber}`,
};
