import { z } from 'zod';
import { COMMANDS } from '../../src/commands/registry';
import { isDomainError } from '../../src/domain-error';
import { ERROR_CODES } from '../../src/errors/codes';
import { newUuidV7 } from '../../src/events/ids';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';

/**
 * For every command and every way this test can get it refused — an empty payload, an unknown field,
 * each field of the wrong type, a well-formed payload naming things that do not exist, too low a role —
 * the refusal is a registered error code and the log is exactly as it was (issue 38: commands validate
 * everything before their first append). Payloads come from each command's own zod schema.
 */
type Json = Record<string, any>;

/** A value the JSON Schema accepts where this generator can tell, shaped like real input otherwise. */
function sample(schema: Json, depth = 0): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) if (schema[k]?.length) return sample(schema[k].find((s: Json) => s.type !== 'null') ?? schema[k][0], depth);
  switch (schema.type) {
    case 'string': {
      if (schema.format === 'uuid') return newUuidV7();
      const p = String(schema.pattern ?? '');
      if (/\{40\}/.test(p) || /\{7,40\}/.test(p) || /\{4,40\}/.test(p)) return '0123456789abcdef0123456789abcdef01234567';
      if (/\^\[a-z0-9\]/.test(p)) return 'nosuch';
      return 'nosuch-' + 'x'.repeat(Math.max(0, (schema.minLength ?? 0) - 7));
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 7);
    case 'boolean':
      return false;
    case 'array':
      return depth > 4 ? [] : Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items ?? {}, depth + 1));
    case 'object': {
      const out: Json = {};
      for (const k of schema.required ?? []) out[k] = sample(schema.properties?.[k] ?? {}, depth + 1);
      return out;
    }
    default:
      return 'nosuch';
  }
}

function payloadsFor(input: z.ZodType): Array<[string, unknown]> {
  let js: Json;
  try {
    js = z.toJSONSchema(input, { unrepresentable: 'any', io: 'input' }) as Json;
  } catch {
    js = { type: 'object' };
  }
  const valid = sample(js) as Json;
  const cases: Array<[string, unknown]> = [
    ['an empty payload', {}],
    ['an unknown field', { ...valid, noSuchField: 1 }],
    ['well-formed, naming things that do not exist', valid],
  ];
  for (const k of Object.keys(js.properties ?? {})) cases.push([`${k} of the wrong type`, { ...valid, [k]: { wrong: [true] } }]);
  return cases;
}

const KNOWN = new Set(Object.keys(ERROR_CODES));

describe('a refused command writes nothing', () => {
  jest.setTimeout(120_000);
  for (const def of COMMANDS) {
    test(def.name, async () => {
      const f = await ledgerFixture({ workspaceId: 'acme' });
      try {
        const callers = [OWNER, { principal: 'user:guest-x', role: 'viewer' as const }];
        for (const caller of callers) {
          for (const [what, payload] of payloadsFor(def.input)) {
            const before = (await f.events()).map((e) => e.eventId);
            let err: unknown = null;
            try {
              await f.ledger.run(def.name, 'acme', { ...caller, idempotencyKey: newUuidV7() }, payload);
            } catch (e) {
              err = e;
            }
            if (err === null) continue; // accepted: the log may change
            const where = `${def.name} as ${caller.role}, ${what}`;
            expect({ where, domainError: isDomainError(err), message: String((err as Error).message).slice(0, 300) }).toEqual({ where, domainError: true, message: expect.any(String) });
            expect({ where, known: KNOWN.has((err as { code: string }).code) }).toEqual({ where, known: true });
            expect({ where, log: (await f.events()).map((e) => e.eventId) }).toEqual({ where, log: before });
          }
        }
      } finally {
        await f.cleanup();
      }
    });
  }
});
