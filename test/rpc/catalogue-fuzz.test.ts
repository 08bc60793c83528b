import { newUuidV7 } from '../../src/events/ids';
import { keyPaths, withValueAt } from '../support/fuzz';
import { mulberry32 } from '../support/prng';
import { BASE, HEAD_A } from './support';
import { command, postRpc, serverFixture } from './support';

/**
 * Every method of the catalogue (rpc.discover), called with its parameters one at a time missing or
 * replaced by a hostile value (wrong types, boundary numbers, NUL, lone surrogates, 70 KB strings,
 * traversal paths, prototype keys, nesting), as the owner, a viewer and a stranger: each answer is a
 * JSON-RPC reply whose error (if any) is a typed refusal — never `internal`, never a 5xx — and the server
 * still answers afterwards. "Bad input gets a clear error and changes nothing" across the whole surface,
 * not only the methods a test happened to name (test/rpc/robustness.test.ts fuzzes the framing).
 * Deterministic: the corpus replays from its seed.
 */

type Schema = { $ref?: string; type?: string | string[]; enum?: unknown[]; const?: unknown; pattern?: string; minLength?: number; maxLength?: number; minimum?: number; exclusiveMinimum?: number; minItems?: number; items?: Schema; properties?: Record<string, Schema>; required?: string[]; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[] };
type Method = { name: string; params: Array<{ name: string; required?: boolean; schema: Schema }> };

const SEED = 20261206;

describe('the whole RPC catalogue under hostile parameters', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  let methods: Method[];
  let defs: Record<string, Schema>;
  let viewer: string;

  beforeAll(async () => {
    fx = await serverFixture();
    const discover = await postRpc(fx.server.url, fx.ownerToken, { jsonrpc: '2.0', id: 1, method: 'rpc.discover' });
    methods = discover.body.result.methods;
    defs = discover.body.result.components?.schemas ?? {};
    // State the valid-looking calls can reach: a review of r#1 with one finding, and a viewer's token.
    expect((await command(fx.server.url, fx.ownerToken, 'default', 'requestReview', { repoId: 'r', prNumber: 1, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
    expect((await command(fx.server.url, fx.ownerToken, 'default', 'addMember', { principal: 'user:viewer', role: 'viewer' })).error).toBeUndefined();
    const issued = await command(fx.server.url, fx.ownerToken, 'default', 'issueToken', { principal: 'user:viewer', role: 'viewer', label: 'fuzz' });
    viewer = issued.result.result.token;
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  }, 60_000);

  test('answers every call with a typed reply, never internal, and keeps answering', async () => {
    const rand = mulberry32(SEED);
    const resolve = (s: Schema): Schema => {
      for (let i = 0; s?.$ref && i < 20; i++) s = defs[s.$ref.split('/').pop()!];
      return s ?? {};
    };
    const candidates = () => ['r', 'default', HEAD_A, BASE, 'n1', newUuidV7(), 'agent:fuzz', 'user:viewer', 'src/a.ts', 'P1', 'member', '2026-01-01T00:00:00.000Z', '1', 'abc', 'engineer', 'bug', 'x'];
    // A value its schema accepts where a simple one does (the first enum value, a candidate matching the pattern).
    const valid = (raw: Schema, depth = 0): unknown => {
      const s = resolve(raw);
      if (s.const !== undefined) return s.const;
      if (s.enum) return s.enum[0];
      if (s.anyOf || s.oneOf) return valid((s.anyOf ?? s.oneOf)![0], depth + 1);
      if (s.allOf) return Object.assign({}, ...s.allOf.map((x) => valid(x, depth + 1)));
      const t = Array.isArray(s.type) ? s.type[0] : s.type;
      if (t === 'string') {
        const re = s.pattern ? new RegExp(s.pattern, 'u') : null;
        return candidates().find((c) => (!re || re.test(c)) && c.length <= (s.maxLength ?? Infinity) && c.length >= (s.minLength ?? 0)) ?? 'x';
      }
      if (t === 'integer' || t === 'number') return Math.max(s.minimum ?? 1, s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
      if (t === 'boolean') return true;
      if (t === 'array') return depth > 4 || !s.minItems ? [] : [valid(s.items ?? {}, depth + 1)];
      if (t === 'object' || s.properties) return Object.fromEntries((s.required ?? []).map((k) => [k, valid(s.properties?.[k] ?? {}, depth + 1)]));
      return null;
    };
    const hostile: unknown[] = [null, true, -1, 0, 2 ** 53, -(2 ** 63), 1.5, 1e308, '', ' ', 'x'.repeat(70_000), '\u0000', '\ud800', '../../../etc/passwd', '%2e%2e/%00', [], [[[[[]]]]], {}, { constructor: { prototype: {} } }, { toString: 1 }, 'NaN', '-0', '9'.repeat(400), '🙂'.repeat(200), { a: { b: { c: { d: {} } } } }];

    const failures: string[] = [];
    let calls = 0;
    const codes = new Map<string, number>();
    const send = async (token: string | undefined, method: string, params: Record<string, unknown>) => {
      calls++;
      let reply: Awaited<ReturnType<typeof postRpc>>;
      try {
        reply = await postRpc(fx.server.url, token, { jsonrpc: '2.0', id: calls, method, params });
      } catch (err) {
        failures.push(`${method}: no JSON reply (${(err as Error).message})`);
        return;
      }
      const { status, body } = reply;
      const code: string = body?.error ? (body.error.data?.code ?? `jsonrpc ${body.error.code}`) : body && 'result' in body ? 'ok' : 'malformed';
      codes.set(code, (codes.get(code) ?? 0) + 1);
      if (status >= 500 || code === 'internal' || code === 'malformed') failures.push(`${method} ${JSON.stringify(params).slice(0, 200)} → ${status} ${JSON.stringify(body?.error ?? body).slice(0, 200)}`);
    };

    const fuzzed = methods.filter((m) => !/^rpc\.|watch/i.test(m.name));
    expect(fuzzed.length).toBeGreaterThan(50);
    for (const m of fuzzed) {
      const base: Record<string, unknown> = {};
      for (const p of m.params) if (p.required || rand() < 0.5) base[p.name] = valid(p.schema);
      base.workspace_id = 'default';
      const variants: Array<Record<string, unknown>> = [base, { ...base, notAParameter: 1 }];
      for (const p of keyPaths(base)) {
        if (p[0] === 'workspace_id') continue;
        variants.push(withValueAt(base, p, undefined));
        for (let k = 0; k < 2; k++) variants.push(withValueAt(base, p, hostile[Math.floor(rand() * hostile.length)]));
      }
      const keyed = m.params.some((p) => p.name === 'idempotencyKey');
      for (const v of variants) {
        // A fresh key unless the variant put a hostile one there: each call is its own command.
        if (keyed && (v.idempotencyKey === undefined || typeof v.idempotencyKey === 'string')) v.idempotencyKey = newUuidV7();
        await send(fx.ownerToken, m.name, v);
      }
      // The valid-looking call as a viewer and as nobody: refusals, never internal.
      await send(viewer, m.name, { ...base, ...(keyed ? { idempotencyKey: newUuidV7() } : {}) });
      await send(undefined, m.name, { ...base, ...(keyed ? { idempotencyKey: newUuidV7() } : {}) });
    }

    expect(failures).toEqual([]);
    // The corpus reached past validation: commands ran, refusals on the state came back typed.
    expect(calls).toBeGreaterThan(1000);
    expect(codes.get('ok') ?? 0).toBeGreaterThan(50);
    expect(codes.get('invalid_payload') ?? 0).toBeGreaterThan(300);
    expect(codes.get('forbidden') ?? 0).toBeGreaterThan(10);
    // Still answering, and the review it started with is intact.
    const after = await postRpc(fx.server.url, fx.ownerToken, { jsonrpc: '2.0', id: 'sentinel', method: 'review_studio.verdict', params: { workspace_id: 'default', repoId: 'r', prNumber: 1 } });
    expect(after.body.result.value.exists).toBe(true);
  }, 300_000);
});

describe('the MCP tools under hostile arguments', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  beforeAll(async () => {
    fx = await serverFixture();
    expect((await command(fx.server.url, fx.ownerToken, 'default', 'requestReview', { repoId: 'r', prNumber: 1, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
  }, 60_000);
  afterAll(async () => {
    await fx?.close();
  }, 60_000);

  const mcp = async (id: number, method: string, params: unknown) => {
    const res = await fetch(`${fx.server.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.ownerToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    return { status: res.status, body: JSON.parse(await res.text()) };
  };

  // Before: `arguments` that is not an object, or a `name` that is not a string, was answered -32603
  // "Internal error" (the SDK's schema parse failing inside the protocol layer) instead of -32602.
  test('every tool answers a typed tool error or Invalid params, never an internal error', async () => {
    const rand = mulberry32(SEED);
    const tools: Array<{ name: string; inputSchema?: { properties?: Record<string, unknown> } }> = (await mcp(1, 'tools/list', {})).body.result.tools;
    expect(tools.length).toBeGreaterThan(5);
    const hostile: unknown[] = [null, true, -1, 0, 2 ** 53, 1.5, '', '\u0000', '\ud800', 'x'.repeat(70_000), '../../etc/passwd', [], {}, { a: { b: {} } }, '🙂'.repeat(50)];
    const failures: string[] = [];
    let id = 1;
    const check = async (params: unknown) => {
      const { status, body } = await mcp(++id, 'tools/call', params);
      const toolCode = body.result?.structuredContent?.error?.data?.code;
      // Invalid params, or (params that are not an object at all) the transport's invalid-message answers.
      const fine = status < 500 && (body.error ? [-32602, -32600, -32700].includes(body.error.code) : body.result !== undefined && toolCode !== 'internal');
      if (!fine) failures.push(`${JSON.stringify(params).slice(0, 160)} → ${status} ${JSON.stringify(body.error ?? body.result).slice(0, 200)}`);
    };
    for (const t of tools) {
      for (const args of ['not an object', null, [1, 2], 7]) await check({ name: t.name, arguments: args });
      for (const p of Object.keys(t.inputSchema?.properties ?? {})) {
        for (let k = 0; k < 3; k++) await check({ name: t.name, arguments: { workspace_id: 'default', repoId: 'r', prNumber: 1, [p]: hostile[Math.floor(rand() * hostile.length)] } });
      }
    }
    for (const params of [{}, { name: 5 }, { name: 'no_such_tool', arguments: {} }, 'params', null]) await check(params);
    expect(failures).toEqual([]);
  }, 120_000);
});
