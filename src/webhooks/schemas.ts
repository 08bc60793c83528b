import { DomainError } from '../domain-error';

type Validator = (data: unknown) => { valid: boolean; errorMessage?: string };

const validators = new Map<string, Validator>();
let schema: Record<string, any> | null = null;

/**
 * Validates a payload against `@octokit/webhooks-schemas` (`<event>$<action>`, else `<event>_event`).
 * Compiled lazily per definition (the whole schema set costs ~250 ms to compile once).
 */
export function validateWebhookPayload(event: string, action: string, payload: unknown): void {
  const v = validatorFor(event, action);
  if (!v) return;
  const r = v(payload);
  if (!r.valid) throw new DomainError('invalid_webhook_payload', `${event}.${action}: payload does not match the GitHub webhook schema: ${(r.errorMessage ?? '').slice(0, 500)}`);
}

function validatorFor(event: string, action: string): Validator | null {
  schema ??= require('@octokit/webhooks-schemas/schema.json') as Record<string, any>;
  const name = [`${event}$${action}`, `${event}_event`].find((n) => schema!.definitions[n]);
  if (!name) return null;
  let v = validators.get(name);
  if (!v) {
    // The MCP SDK's AJV provider (ajv is its dependency): one JSON-Schema engine in the tree.
    const { AjvJsonSchemaValidator } = require('@modelcontextprotocol/sdk/validation/ajv') as typeof import('@modelcontextprotocol/sdk/validation/ajv');
    const { oneOf: _all, ...rest } = schema;
    v = new AjvJsonSchemaValidator().getValidator({ ...rest, $ref: `#/definitions/${name}` } as never) as unknown as Validator;
    validators.set(name, v);
  }
  return v;
}
