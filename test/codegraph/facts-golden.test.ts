import * as fs from 'node:fs';
import * as path from 'node:path';
import { extractFacts } from '../../src/codegraph/extract';
import { ExtractPool } from '../../src/codegraph/extract-pool';
import type { FileFacts } from '../../src/codegraph/facts';
import { loadGrammar } from '../../src/codegraph/languages/grammar-runtime';

jest.setTimeout(60_000);

/**
 * Facts of fixed sources, byte for byte, against facts-golden.json: written by the extractor as it was
 * before the index-speed work (main at 0513aac: tags query with doc-comment patterns, imports read from
 * `root.namedChildren`, facts posted from workers as objects). Any restructuring of the extraction must
 * leave these bytes alone (or bump CODEGRAPH_ENGINE_VERSION and regenerate on purpose).
 * Covers every ECMAScript import/export form, doc comments before definitions (JavaScript, Go, Ruby
 * tags.scm prefix those), repeated names in anonymous scopes, overloads, the TypeScript-parser fallback.
 */
const golden = JSON.parse(fs.readFileSync(path.join(__dirname, 'facts-golden.json'), 'utf8')) as Array<{ language: string; name: string; source: string; facts: FileFacts }>;

describe('extracted facts are unchanged (golden)', () => {
  it.each(golden.map((g) => [g.name, g] as const))('%s on this thread', async (_name, g) => {
    expect(JSON.stringify(extractFacts(await loadGrammar(g.language), g.source))).toBe(JSON.stringify(g.facts));
  });

  it('the same bytes through a worker, as the JSON text the facts cache stores', async () => {
    const pool = new ExtractPool(2);
    try {
      const results = await Promise.all(golden.map((g) => pool.run(g.language, g.source)));
      results.forEach((r, i) => {
        expect(r.json).toBe(JSON.stringify(golden[i].facts));
        expect(r.facts).toEqual(golden[i].facts);
      });
    } finally {
      await pool.close();
    }
  });
});
