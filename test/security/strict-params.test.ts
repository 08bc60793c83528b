import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { z } from 'zod';
import { assertKnownFields, parseKnownFields, strictAtEveryDepth, strictParseIsExact } from '../../src/commands/payload-keys';
import { COMMANDS } from '../../src/commands/registry';
import { command, serverFixture } from '../rpc/support';
import { reviewFixture, WS } from '../review/support';

const BIN = path.resolve(__dirname, '../../bin/review-ledger.js');

/**
 * docs/security.md "unknown keys are refused": zod strips what a schema does not define, at every depth,
 * so a misspelt nested field (`node.anchor.sid`) or a field smuggled into a nested object was dropped
 * and the call ran without it. Refused by full path, over every transport; over MCP stdio, a reserved
 * key (`__proto__`, `constructor`) is answered with an error instead of vanishing in the SDK's parse.
 */
describe('unknown fields are refused at every depth', () => {
  const schema = z.object({
    target: z.object({ repoId: z.string(), prNumber: z.number() }),
    items: z.array(z.object({ id: z.string(), note: z.string().optional() })).max(5).optional(),
    choice: z.discriminatedUnion('kind', [z.object({ kind: z.literal('a'), a: z.number() }), z.object({ kind: z.literal('b'), b: z.string() })]).optional(),
    either: z.union([z.object({ x: z.number() }), z.object({ y: z.string() })]).optional(),
    byName: z.record(z.string(), z.object({ on: z.boolean() })).optional(),
    open: z.object({ anything: z.string() }).passthrough().optional(),
    shaped: z
      .object({ n: z.number().default(1) })
      .refine((v) => v.n < 10, { message: 'n must be < 10', path: ['n'] })
      .transform((v) => ({ doubled: v.n * 2 }))
      .optional(),
  });
  const refusal = (payload: unknown): string | null => {
    try {
      assertKnownFields(schema, payload);
      return null;
    } catch (err) {
      return `${(err as { code: string }).code} ${(err as Error).message}`;
    }
  };
  const base = { target: { repoId: 'r', prNumber: 1 } };

  it('names the full path of the first unknown field, in objects, arrays, unions and records', () => {
    expect(refusal({ ...base, target: { repoId: 'r', prNumber: 1, prNumbr: 2 } })).toMatch(/^unknown_field params\.target\.prNumbr: not a field here/);
    expect(refusal({ ...base, items: [{ id: 'a' }, { id: 'b', nte: 'x' }] })).toMatch(/^unknown_field params\.items\[1\]\.nte:/);
    expect(refusal({ ...base, choice: { kind: 'b', b: 's', a: 1 } })).toMatch(/^unknown_field params\.choice\.a:/);
    expect(refusal({ ...base, either: { y: 's', z: 1 } })).toMatch(/^unknown_field params\.either\.z:/);
    expect(refusal({ ...base, byName: { k: { on: true, of: false } } })).toMatch(/^unknown_field params\.byName\.k\.of:/);
    expect(refusal({ ...base, shaped: { n: 2, m: 3 } })).toMatch(/^unknown_field params\.shaped\.m:/);
    // Top level: the known fields are listed, as before.
    expect(refusal({ ...base, extra: 1 })).toMatch(/^unknown_field params\.extra: not a field of this method \(known: target, items/);
  });

  it('well-formed payloads pass, and what the schema does (defaults, checks, transforms, passthrough) is unchanged', () => {
    for (const p of [base, { ...base, items: [{ id: 'a', note: 'n' }], choice: { kind: 'a', a: 1 }, either: { x: 1 }, byName: { k: { on: true } }, open: { anything: 's', more: 1 }, shaped: {} }]) expect(refusal(p)).toBeNull();
    const strict = strictAtEveryDepth(schema);
    expect(strict.parse({ ...base, shaped: {} })).toEqual({ ...base, shaped: { doubled: 2 } });
    expect(strict.safeParse({ ...base, shaped: { n: 20 } }).error?.issues[0].message).toBe('n must be < 10');
    expect(strict.safeParse({ ...base, items: Array.from({ length: 6 }, () => ({ id: 'a' })) }).success).toBe(false);
    // Other mistakes are left to the schema's own, usual error.
    expect(refusal({ target: { repoId: 1, prNumber: 1 } })).toBeNull();
  });

  it('parseKnownFields (one strict pass) answers exactly as assertKnownFields then the schema’s parse', () => {
    // The kernel validates a command's payload in one zod pass where the strict copy's answer is the
    // schema's own; anywhere it might not be (a union or catch around objects), it parses twice as before.
    const twoPass = (s: z.ZodType, payload: unknown) => {
      try {
        assertKnownFields(s, payload);
      } catch (err) {
        return `throws ${(err as Error).message}`;
      }
      const r = s.safeParse(payload);
      return r.success ? { data: r.data } : { issues: r.error.issues };
    };
    const onePass = (s: z.ZodType, payload: unknown) => {
      try {
        const r = parseKnownFields(s, payload);
        return r.success ? { data: r.data } : { issues: r.error.issues };
      } catch (err) {
        return `throws ${(err as Error).message}`;
      }
    };
    // A union whose first branch accepts the payload only once zod strips a key: the strict copy picks the
    // second branch, so parseKnownFields must parse again to answer as the schema does.
    const firstWins = z.object({ pick: z.union([z.object({ a: z.number() }), z.object({ a: z.number(), b: z.number() })]) });
    const caught = z.object({ c: z.object({ v: z.number() }).catch({ v: -1 }) });
    expect(strictParseIsExact(schema)).toBe(false);
    expect(strictParseIsExact(firstWins)).toBe(false);
    expect(strictParseIsExact(caught)).toBe(false);
    expect(strictParseIsExact(z.object({ o: z.union([z.string(), z.number()]), t: z.string().transform((x) => x.length) }))).toBe(true);
    expect(onePass(firstWins, { pick: { a: 1, b: 2 } })).toEqual({ data: { pick: { a: 1 } } });
    expect(onePass(caught, { c: { v: 1, w: 2 } })).toEqual(twoPass(caught, { c: { v: 1, w: 2 } }));
    const payloads: unknown[] = [
      base,
      { ...base, items: [{ id: 'x' }, { id: 'y', note: 'n' }] },
      { ...base, items: [{ id: 'x', extra: 1 }] },
      { ...base, choice: { kind: 'a', a: 1 } },
      { ...base, choice: { kind: 'b', b: 1 } },
      { ...base, either: { y: 's' } },
      { ...base, byName: { k: { on: true } } },
      { ...base, open: { anything: 's', more: 1 } },
      { ...base, shaped: {} },
      { ...base, shaped: { n: 12 } },
      { target: { repoId: 3 } },
      { ...base, unknown: 1 },
      'not an object',
      null,
    ];
    for (const s of [schema, firstWins, caught, z.object({ n: z.number().default(1), s: z.string().transform((x) => x.toUpperCase()) })]) {
      for (const p of [...payloads, { pick: { a: 1 } }, { pick: { a: 1, b: 2, c: 3 } }, { c: { v: 'x' } }, { n: 2, s: 'abc' }, { s: 'q' }]) expect(onePass(s, p)).toEqual(twoPass(s, p));
    }
    // Every registered command's schema, on its own exactness verdict and on a payload it refuses.
    for (const c of COMMANDS) {
      expect(onePass(c.input, { __unknown: 1 })).toEqual(twoPass(c.input, { __unknown: 1 }));
      expect(onePass(c.input, {})).toEqual(twoPass(c.input, {}));
    }
  });

  describe('over JSON-RPC, for a real method', () => {
    let fx: Awaited<ReturnType<typeof serverFixture>>;
    beforeAll(async () => {
      fx = await serverFixture();
    });
    afterAll(() => fx.close());

    it('addReviewNode with a misspelt nested field (node.anchor.sid) is refused by path, not run without it', async () => {
      const node = { kind: 'finding', priority: 'P2', triage: 'must-fix', confidence: 0.5, title: 't', body: 'b', brief: {}, anchor: { path: 'a.ts', startLine: 1, endLine: 1, sid: 'x' } };
      const r = await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addReviewNode', { repoId: 'r', prNumber: 1, node });
      expect([r.error?.data?.code, r.error?.message]).toEqual(['unknown_field', expect.stringMatching(/^params\.node\.anchor\.sid: not a field here/)]);
    });
  });

  describe('MCP over stdio', () => {
    let f: Awaited<ReturnType<typeof reviewFixture>>;
    beforeAll(async () => {
      f = await reviewFixture();
    });
    afterAll(() => f.cleanup());

    /** Writes raw lines to `review-ledger mcp` (no SDK client: it would rebuild the message too) and reads the answers by id. */
    const exchange = (lines: string[], ids: number[]) =>
      new Promise<Map<number, any>>((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, '--data-dir', f.dataDir, 'mcp', '--workspace', WS, '--principal', 'agent:local'], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1', REVIEW_LEDGER_TOKEN: '' }, stdio: ['pipe', 'pipe', 'ignore'] });
        const answers = new Map<number, any>();
        let out = '';
        const timer = setTimeout(() => {
          child.kill();
          reject(new Error(`timed out; got ${out.slice(0, 2000)}`));
        }, 60_000);
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          for (const line of out.split('\n').slice(0, -1)) {
            const m = JSON.parse(line);
            if (typeof m.id === 'number') answers.set(m.id, m);
          }
          if (ids.every((id) => answers.has(id))) {
            clearTimeout(timer);
            child.stdin.end();
            child.kill();
            resolve(answers);
          }
        });
        child.once('error', reject);
        for (const l of lines) child.stdin.write(`${l}\n`);
      });

    it('a __proto__ or constructor key in tool arguments is answered invalid_payload by path; other messages are served', async () => {
      const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
      const call = (id: number, args: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"get_review","arguments":${args}}}`;
      const answers = await exchange([init, '{"jsonrpc":"2.0","method":"notifications/initialized"}', call(2, '{"repoId":"r","prNumber":1,"__proto__":{"workspace_id":"other"}}'), call(3, '{"repoId":"r","prNumber":1,"nested":{"constructor":{}}}'), call(4, '{"repoId":"r","prNumber":1}')], [1, 2, 3, 4]);
      expect(answers.get(1).result.serverInfo).toBeDefined();
      expect([answers.get(2).error?.data?.code, answers.get(2).error?.message]).toEqual(['invalid_payload', expect.stringContaining('params.arguments.__proto__')]);
      expect([answers.get(3).error?.data?.code, answers.get(3).error?.message]).toEqual(['invalid_payload', expect.stringContaining('params.arguments.nested.constructor')]);
      // The ordinary call reached the server (its answer is about the tool, not the transport).
      expect(answers.get(4).result).toBeDefined();
    }, 90_000);
  });
});
