import { z } from 'zod';
import { methodTable, type MethodSpec } from './methods';

const envelopeParams = {
  workspace_id: { name: 'workspace_id', required: true, description: 'The workspace (tenant) the call acts in; refused before any store opens when missing or unregistered.', schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 63 } },
  idempotencyKey: { name: 'idempotencyKey', required: true, description: 'Client-generated UUIDv7; the same key with the same payload returns the original response and writes nothing.', schema: { type: 'string', format: 'uuid' } },
  correlationId: { name: 'correlationId', required: false, schema: { type: 'string', maxLength: 200 } },
  asOf: { name: 'asOf', required: false, description: 'Answer as of this global position.', schema: { type: 'integer', minimum: 0 } },
  since: { name: 'since', required: false, description: 'Resume after this global position: the changes after it follow, no snapshot.', schema: { type: 'integer', minimum: 0 } },
};

function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  try {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    return rest;
  } catch {
    return {};
  }
}

function paramsOf(spec: MethodSpec): unknown[] {
  const schema = jsonSchemaOf(spec.params);
  const props = (schema.properties ?? {}) as Record<string, unknown>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const envelope =
    spec.kind === 'command'
      ? [envelopeParams.workspace_id, envelopeParams.idempotencyKey, envelopeParams.correlationId]
      : spec.kind === 'watch'
        ? [envelopeParams.workspace_id, envelopeParams.since]
        : spec.kind === 'progress'
          ? [envelopeParams.workspace_id]
          : [envelopeParams.workspace_id, envelopeParams.asOf];
  return [...envelope, ...Object.entries(props).map(([name, s]) => ({ name, required: required.has(name), schema: s }))];
}

const resultOf = (spec: MethodSpec): unknown =>
  spec.kind === 'command'
    ? { name: 'outcome', schema: { type: 'object', properties: { streamId: { type: 'string' }, eventIds: { type: 'array', items: { type: 'string' } }, firstPosition: { type: ['integer', 'null'] }, lastPosition: { type: ['integer', 'null'] }, streamRevision: { type: 'integer' }, result: {} } } }
    : spec.kind === 'query' || spec.kind === 'read'
      ? { name: 'answer', schema: { type: 'object', properties: { position: { type: 'integer' }, value: {} } } }
      : spec.kind === 'progress'
        ? { name: 'subscription', schema: { type: 'object', properties: { subscription: { type: 'string' }, jobs: { type: 'array', items: PROGRESS_UPDATE_SCHEMA } } } }
        : { name: 'subscription', schema: { type: 'object', properties: { subscription: { type: 'string' }, position: { type: 'integer' }, snapshot: {}, resumed: { type: 'boolean' } } } };

/** One `watchProgress` update (src/job-progress/hub.ts `ProgressUpdate`). */
const PROGRESS_UPDATE_SCHEMA = {
  type: 'object',
  required: ['job', 'kind', 'status', 'repoId', 'done', 'total', 'fraction', 'seq'],
  properties: {
    job: { type: 'string' },
    kind: { enum: ['indexCode', 'computeReview'] },
    status: { enum: ['running', 'done', 'failed'] },
    repoId: { type: 'string' },
    prNumber: { type: 'integer' },
    commit: { type: 'string' },
    phase: { type: 'string' },
    done: { type: 'integer' },
    total: { type: 'integer' },
    fraction: { type: 'number', minimum: 0, maximum: 1 },
    error: { type: 'string' },
    seq: { type: 'integer' },
  },
};

let cached: unknown = null;

/** The method catalogue in OpenRPC 1.3 form, generated from the command and query zod schemas. */
export function openRpcDocument(): unknown {
  cached ??= {
    openrpc: '1.3.2',
    info: { title: 'review-ledger', version: '0.1.0', description: 'JSON-RPC 2.0 over POST /rpc and WebSocket /rpc. Bearer token in the Authorization header (WebSocket: header or ?access_token=). Subscription updates arrive as `watch.update` notifications.' },
    methods: [...methodTable().values()].map((spec) => ({
      name: spec.name,
      description: spec.description,
      paramStructure: 'by-name',
      params: paramsOf(spec),
      result: resultOf(spec),
      'x-kind': spec.kind,
      'x-access': { minRole: spec.access.minRole, humanOnly: spec.access.humanOnly ?? false },
    })),
  };
  return cached;
}

let cachedJson: string | null = null;
let cachedBytes: Buffer | null = null;

/** The catalogue's UTF-8 bytes, shared by every answer that sends it whole (see DispatchResult.parts). */
export function openRpcBytes(): Buffer {
  cachedBytes ??= Buffer.from(openRpcJson());
  return cachedBytes;
}

/** The catalogue as JSON text, serialized once (it is ~140 KB: re-encoding it per call cost the event loop). */
export function openRpcJson(): string {
  cachedJson ??= JSON.stringify(openRpcDocument());
  return cachedJson;
}
