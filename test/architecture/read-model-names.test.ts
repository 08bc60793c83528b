import * as fs from 'node:fs';
import * as path from 'node:path';
import { queryCatalogue } from '../../src/cli/commands/review.actions';
import { NOT_AGENT_TOOLS, QUERY_TOOLS, REVIEW_PARTS, resolveTools } from '../../src/mcp/tools';
import { QUERIES, queryByName } from '../../src/readmodels/queries/queries';
import type { QueryDefinition } from '../../src/readmodels/queries/query';
import { methodTable, REVIEW_STUDIO, watchName } from '../../src/rpc/methods';

const ROOT = path.resolve(__dirname, '../..');
const NAMES = QUERIES.map((q) => q.name);
const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const isQueryDefinition = (v: unknown): v is QueryDefinition =>
  !!v && typeof v === 'object' && typeof (v as QueryDefinition).name === 'string' && typeof (v as QueryDefinition).fold === 'function' && typeof (v as QueryDefinition).view === 'function';

/**
 * A read model has one name (issue #22): the registry's `name` is its RPC method, its `review show` view,
 * its MCP part, the web page's subscription key, and its file and export under src/readmodels/queries.
 */
describe('one name per read model, from the query registry', () => {
  it('each query lives in src/readmodels/queries/<kebab-name>.ts as `<name>Query`, and every query defined there is registered', () => {
    for (const q of QUERIES) {
      const file = path.join(ROOT, 'src/readmodels/queries', `${kebab(q.name)}.ts`);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mod = fs.existsSync(file) ? (require(file) as Record<string, unknown>) : {};
      expect([q.name, mod[`${q.name}Query`] === q]).toEqual([q.name, true]);
    }
    const defined: string[] = [];
    for (const f of fs.readdirSync(path.join(ROOT, 'src/readmodels/queries')).filter((x) => x.endsWith('.ts'))) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      for (const v of Object.values(require(path.join(ROOT, 'src/readmodels/queries', f)) as Record<string, unknown>)) if (isQueryDefinition(v)) defined.push(v.name);
    }
    expect([...new Set(defined)].sort()).toEqual([...NAMES].sort());
  });

  it('RPC: each query is review_studio.<name> and watch<Name>, and no other method answers or watches a read model', () => {
    const t = methodTable();
    for (const q of QUERIES) {
      expect([q.name, t.get(REVIEW_STUDIO + q.name)?.query]).toEqual([q.name, q]);
      expect([q.name, t.get(watchName(q.name))?.query]).toEqual([q.name, q]);
    }
    const readModelMethods = [...t.values()].filter((s) => s.query).map((s) => s.name).sort();
    expect(readModelMethods).toEqual(NAMES.flatMap((n) => [REVIEW_STUDIO + n, watchName(n)]).sort());
  });

  it('CLI: `review show` lists exactly the registry names and resolves no other name', () => {
    const listed = [...queryCatalogue().matchAll(/^ {2}(\S+) \{/gm)].map((m) => m[1]);
    expect(listed).toEqual(NAMES);
    // The view names retired for their registry names are not read models any more.
    for (const old of ['nodes', 'delta', 'status', 'groups', 'ci', 'metrics']) expect([old, queryByName(old)]).toEqual([old, undefined]);
    const source = fs.readFileSync(path.join(ROOT, 'src/cli/commands/review.actions.ts'), 'utf8');
    expect(source).toMatch(/const q = queryByName\(name\);/);
  });

  it('MCP: bindings, get_review parts and the not-for-agents list name registry queries, and get_review answers under those names', () => {
    for (const n of [...QUERY_TOOLS.map((b) => b.query), ...REVIEW_PARTS]) expect([n, NAMES.includes(n)]).toEqual([n, true]);
    const review = resolveTools().find((t) => t.name === 'get_review')!;
    expect(review.queries!.map((q) => q.name)).toEqual(REVIEW_PARTS);
    const listed = Object.keys(NOT_AGENT_TOOLS).filter((n) => queryByName(n));
    expect([...listed, ...REVIEW_PARTS, ...QUERY_TOOLS.map((b) => b.query)].sort()).toEqual([...NAMES].sort());
  });

  it('web client: every subscription key and rendered view is a query name (or the ephemeral job `progress`)', () => {
    const source = fs.readFileSync(path.join(ROOT, 'src/web/client/review.ts'), 'utf8');
    const watched = [
      ...[...source.matchAll(/watchQuery\('([A-Za-z]+)'/g)].map((m) => m[1]),
      ...JSON.parse((source.match(/for \(const name of (\[[^\]]+\])\) watchQuery/)?.[1] ?? '[]').replace(/'/g, '"')),
    ];
    const read = [...source.matchAll(/\bv\('([A-Za-z]+)'\)/g)].map((m) => m[1]);
    const rendered = [...(source.match(/const RENDERERS[^\n]*\{\n([\s\S]*?)\n\};/)?.[1] ?? '').matchAll(/^ {2}([A-Za-z]+):/gm)].map((m) => m[1]);
    expect(watched.length).toBeGreaterThan(5);
    expect(rendered.length).toBeGreaterThan(5);
    const known = new Set([...NAMES, 'progress']);
    expect([...watched, ...read, ...rendered].filter((k) => !known.has(k))).toEqual([]);
    expect([...source.matchAll(/live\??\.watch\('([A-Za-z]+)'/g)].map((m) => m[1])).toEqual(['progress']);
  });

  it('docs and README name only methods that exist (review_studio.<name>, watch<Name>; one-letter placeholders aside)', () => {
    const t = methodTable();
    const docs = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const unknown: string[] = [];
    for (const d of docs) {
      const text = fs.readFileSync(path.join(ROOT, d), 'utf8');
      for (const m of text.matchAll(/\b(review_studio\.[A-Za-z]{2,}|watch[A-Z][A-Za-z]+)\b/g)) if (!t.has(m[1])) unknown.push(`${d}: ${m[1]}`);
    }
    expect([...new Set(unknown)]).toEqual([]);
  });
});
