// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import { extractFacts } from '../../src/codegraph/extract';
import { loadGrammar } from '../../src/codegraph/languages/grammar-runtime';
import { extractFactsWithTypeScript } from '../../src/codegraph/typescript-parser';
import { computeHarness } from '../compute/support';

jest.setTimeout(60_000);

const { fixture, compute } = computeHarness('rl-labels-');

/**
 * The shape of an HTTP client's retry tests (AVA style, written for this test): every test passes an
 * options object whose `retry.delay` is an arrow function. tags.scm captures each `delay: n => …` pair as
 * a function named `delay`; before the fix they were merged as "overloads" into one `delay` spanning from
 * the first test to the last (the issue's `test/retry.ts#delay (L117-2274)`).
 */
function retryTests(delayOfThird: string): string {
  const tests: string[] = [];
  for (let i = 1; i <= 12; i++) {
    const delay = i === 3 ? delayOfThird : `attempt => attempt * ${i * 10}`;
    tests.push(`test('retries ${i} times with a backoff', async t => {
	let requestCount = 0;

	const server = await createHttpTestServer();
	server.get('/', (_request, response) => {
		requestCount++;
		if (requestCount === ${i}) {
			response.end(fixture);
		} else {
			response.sendStatus(500);
		}
	});

	const text = await client(server.url, {
		retry: {
			limit: ${i},
			delay: ${delay},
		},
	}).text();

	t.is(text, fixture);
	t.is(requestCount, ${i});
	await server.close();
});
`);
  }
  return `import test from 'ava';
import client from '../source/index.js';
import {createHttpTestServer} from './helpers/create-http-test-server.js';

const fixture = 'fixture';
const defaultRetryCount = 2;

function withTimeout(ms: number): Promise<void>;
function withTimeout(ms: number, value: string): Promise<string>;
function withTimeout(ms: number, value?: string): Promise<string | void> {
	return new Promise(resolve => setTimeout(() => resolve(value), ms));
}

${tests.join('\n')}`;
}

const defsOf = (facts: ReturnType<typeof extractFacts>) => facts.defs.map((d) => `${d.qname} ${d.start}-${d.end}`);

describe('fragment labels: same-named definitions in separate anonymous scopes', () => {
  it('each `delay: …` of a test callback is its own small symbol (delay, delay~2, …) on both parsers; overloads in one scope still merge', async () => {
    const source = retryTests('attempt => attempt * 30');
    const lines = source.split('\n').length;
    const viaTreeSitter = extractFacts(await loadGrammar('typescript'), source);
    expect(viaTreeSitter.hasErrors).toBeUndefined();
    const delays = viaTreeSitter.defs.filter((d) => d.name === 'delay');
    expect(delays.map((d) => d.qname)).toEqual(['delay', ...Array.from({ length: 11 }, (_, i) => `delay~${i + 2}`)]);
    for (const d of delays) expect(d.end - d.start).toBe(0); // one line each, not the file
    expect(Math.max(...viaTreeSitter.defs.map((d) => d.end - d.start))).toBeLessThan(lines / 10);
    // The overloads of withTimeout (one scope) stay one symbol spanning its three declarations.
    expect(defsOf(viaTreeSitter)).toContain('withTimeout 8-12');
    expect(defsOf(extractFactsWithTypeScript(source, 'typescript'))).toEqual(defsOf(viaTreeSitter));
  });

  it('a change inside the third test is labelled `delay~3` with its own lines, not a file-long `delay`', async () => {
    const f = fixture();
    f.write('source/index.ts', 'export default function client(url: string, options?: object) {\n  return { text: async () => String(url) + String(options) };\n}\n');
    f.write('test/retry.ts', retryTests('attempt => attempt * 30'));
    const base = f.commit('base');
    const changed = retryTests('attempt => 2 ** attempt * 30');
    f.write('test/retry.ts', changed);
    const line = changed.split('\n').findIndex((l) => l.includes('2 ** attempt')) + 1;
    expect(line).toBe(80);
    const head = f.commit('exponential backoff in the third test');
    const r = await compute(f, base, head);
    const fragments = r.data.cohorts.flatMap((c) => c.fragments).filter((fr) => fr.path === 'test/retry.ts');
    expect(fragments.map((fr) => `${fr.id} (L${fr.startLine}-${fr.endLine})`)).toEqual([`test/retry.ts#delay~3 (L${line}-${line})`]);
    const steps = r.data.cohorts.flatMap((c) => c.readingOrder.steps).filter((s) => s.path === 'test/retry.ts');
    expect(steps.map((s) => `${s.symbolId} (L${s.startLine}-${s.endLine})`)).toEqual([`test/retry.ts#delay~3 (L${line}-${line})`]);
  });
});
