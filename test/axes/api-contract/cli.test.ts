import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';

const ROOT = path.join(__dirname, '..', '..', '..');
const FIXTURES = path.join(__dirname, 'fixtures', 'rules');

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'review-ledger.js'), 'contract-diff', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('review-ledger contract-diff BASE HEAD', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-contract-cli-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('exits 1 and names the rule when a change is breaking', () => {
    const r = cli(path.join(FIXTURES, 'response-property-removed', 'base.yaml'), path.join(FIXTURES, 'response-property-removed', 'head.yaml'));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('response-property-removed');
    expect(r.stdout).toContain('1 breaking, 0 warning, 0 non-breaking, 0 info');
  });

  it('exits 0 when nothing breaks, and --json prints the classified changes', () => {
    const r = cli(path.join(FIXTURES, 'response-property-added', 'base.json'), path.join(FIXTURES, 'response-property-added', 'head.yaml'), '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.summary).toEqual({ breaking: 0, warning: 0, nonBreaking: 1, info: 0 });
    expect(out.changes[0]).toMatchObject({ ruleId: 'response-property-added', severity: 'non-breaking', direction: 'response' });
  });

  it('exits 1 on a warning alone: it needs a decision like a breaking change', () => {
    const r = cli(path.join(FIXTURES, 'request-property-removed', 'base.yaml'), path.join(FIXTURES, 'request-property-removed', 'head.json'));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^warning +request-property-removed$/m);
    expect(r.stdout).toContain('0 breaking, 1 warning, 0 non-breaking, 0 info');
  });

  it('--format oasdiff-text prints oasdiff rule ids and levels in its text layout, and our id marked ~ where oasdiff has none', () => {
    const r = cli(path.join(FIXTURES, 'request-parameter-default-changed', 'base.yaml'), path.join(FIXTURES, 'request-parameter-default-changed', 'head.yaml'), '--format', 'oasdiff-text');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^error\t\[request-parameter-default-value-(changed|added|removed)\] at /m);
    expect(r.stdout).toContain('\tin API GET /items\n');
    expect(r.stdout).toContain('1 changes: 1 error, 0 warning, 0 info');
    const own = cli(path.join(FIXTURES, 'api-removed-unstable', 'base.yaml'), path.join(FIXTURES, 'api-removed-unstable', 'head.yaml'), '--format', 'oasdiff-text');
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('info\t[~api-removed-unstable]');
    const bad = cli(path.join(FIXTURES, 'api-added', 'base.yaml'), path.join(FIXTURES, 'api-added', 'head.yaml'), '--format', 'xml');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--format must be one of text, json, oasdiff, oasdiff-yaml, oasdiff-text/);
  });

  it('--format oasdiff prints oasdiff\'s changelog JSON (id, text, level, operation, path with parameter names, source); --format oasdiff-yaml the same as YAML', () => {
    const v1 = path.join(dir, 'oas-v1.yaml');
    const v2 = path.join(dir, 'oas-v2.yaml');
    const doc = (headers: Record<string, unknown>) =>
      stringify({
        openapi: '3.0.3',
        info: { title: 't', version: '1' },
        paths: { '/users/{userId}': { get: { parameters: [{ name: 'userId', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'ok', headers } } } } },
      });
    fs.writeFileSync(v1, doc({ 'X-Trace': { schema: { type: 'string' } } }));
    fs.writeFileSync(v2, doc({}));
    const r = cli(v1, v2, '--format', 'oasdiff');
    expect(r.code).toBe(1); // review-ledger grades a removed header breaking
    expect(JSON.parse(r.stdout)).toEqual([{ id: 'optional-response-header-removed', text: expect.stringContaining('X-Trace removed'), level: 3, operation: 'GET', path: '/users/{userId}', section: 'paths', source: v2 }]);
    const o = cli(v1, v2, '--format', 'oasdiff', '--profile', 'oasdiff');
    expect(o.code).toBe(1); // WARN still needs a decision
    expect(JSON.parse(o.stdout)[0]).toMatchObject({ id: 'optional-response-header-removed', level: 2 });
    const y = cli(v1, v2, '--format', 'oasdiff-yaml', '--profile', 'oasdiff');
    expect(parse(y.stdout)).toEqual(JSON.parse(o.stdout));
  });

  it('--profile oasdiff grades by oasdiff\'s level of the exact id (exit code included); a bad --profile is refused naming the option', () => {
    const r = cli(path.join(FIXTURES, 'response-enum-value-added', 'base.yaml'), path.join(FIXTURES, 'response-enum-value-added', 'head.yaml'), '--json', '--profile', 'oasdiff');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).changes[0]).toMatchObject({ ruleId: 'response-enum-value-added', severity: 'warning' });
    const ours = cli(path.join(FIXTURES, 'response-enum-value-added', 'base.yaml'), path.join(FIXTURES, 'response-enum-value-added', 'head.yaml'), '--json');
    expect(JSON.parse(ours.stdout).changes[0]).toMatchObject({ ruleId: 'response-enum-value-added', severity: 'breaking' });
    const info = cli(path.join(FIXTURES, 'api-security-added', 'base.yaml'), path.join(FIXTURES, 'api-security-added', 'head.yaml'), '--profile', 'oasdiff');
    expect(info.code).toBe(0); // oasdiff grades security added INFO; we grade it breaking
    const bad = cli(path.join(FIXTURES, 'api-added', 'base.yaml'), path.join(FIXTURES, 'api-added', 'head.yaml'), '--profile', 'strict');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--profile must be one of review-ledger, oasdiff (got "strict")');
    expect(bad.stdout).toBe('');
  });

  it('--profile oasdiff also detects as oasdiff does where we deliberately differ: an allOf branch listed twice', () => {
    const spec = (allOf: unknown[]) => ({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/loans': { post: { requestBody: { content: { 'application/json': { schema: { allOf } } } }, responses: { '204': { description: 'ok' } } } } },
      components: { schemas: { Amount: { type: 'object', properties: { amount: { type: 'integer' } } } } },
    });
    const ref = { $ref: '#/components/schemas/Amount' };
    const base = path.join(dir, 'dup-base.yaml');
    const head = path.join(dir, 'dup-head.yaml');
    fs.writeFileSync(base, stringify(spec([ref, { type: 'object', properties: { term: { type: 'integer' } } }])));
    fs.writeFileSync(head, stringify(spec([ref, { type: 'object', properties: { term: { type: 'integer' } } }, ref])));
    const ours = cli(base, head, '--format', 'oasdiff');
    expect(ours.code).toBe(0);
    expect(JSON.parse(ours.stdout)).toEqual([]);
    const theirs = cli(base, head, '--format', 'oasdiff', '--profile', 'oasdiff');
    expect(theirs.code).toBe(1);
    expect(JSON.parse(theirs.stdout).map((e: { id: string; level: number }) => `${e.id} ${e.level}`)).toEqual(['request-body-all-of-added 3']);
  });

  it('resolves $refs into sibling files on disk', () => {
    fs.mkdirSync(path.join(dir, 'v1', 'schemas'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'v2', 'schemas'), { recursive: true });
    const spec = stringify({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/u': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: 'schemas/user.yaml' } } } } } } } },
    });
    fs.writeFileSync(path.join(dir, 'v1', 'openapi.yaml'), spec);
    fs.writeFileSync(path.join(dir, 'v2', 'openapi.yaml'), spec);
    fs.writeFileSync(path.join(dir, 'v1', 'schemas', 'user.yaml'), stringify({ type: 'object', properties: { id: { type: 'integer' } } }));
    fs.writeFileSync(path.join(dir, 'v2', 'schemas', 'user.yaml'), stringify({ type: 'object', properties: { id: { type: 'string' } } }));
    const r = cli(path.join(dir, 'v1', 'openapi.yaml'), path.join(dir, 'v2', 'openapi.yaml'), '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).changes.map((c: { ruleId: string }) => c.ruleId)).toEqual(['response-type-changed']);
  });

  it('exits 2 with the parser message on an unparsable file', () => {
    fs.writeFileSync(path.join(dir, 'broken.yaml'), 'openapi: 3.0.0\npaths: [\n');
    const r = cli(path.join(FIXTURES, 'api-added', 'base.yaml'), path.join(dir, 'broken.yaml'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/spec_unparsable.*broken\.yaml: invalid YAML/);
  });

  it('names a missing file by the absolute path the user gave, leading / included', () => {
    const missing = path.join(dir, 'nowhere', 'missing.yaml');
    const r = cli(path.join(FIXTURES, 'api-added', 'base.yaml'), missing);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`error [spec_unparsable]: ${missing}: file not found`);
  });

  it('names a missing $ref target by its path on disk', () => {
    fs.mkdirSync(path.join(dir, 'refs'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'refs', 'openapi.yaml'), 'openapi: 3.0.0\ninfo: {title: t, version: "1"}\npaths:\n  /a:\n    $ref: ./gone.yaml\n');
    const r = cli(path.join(FIXTURES, 'api-added', 'base.yaml'), path.join(dir, 'refs', 'openapi.yaml'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`referenced file ${path.join(dir, 'refs', 'gone.yaml')} not found`);
  });
});
