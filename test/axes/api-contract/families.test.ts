import * as fs from 'node:fs';
import * as path from 'node:path';
import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpec } from '../../../src/axes/api-contract/document';
import { RULES_BY_ID } from '../../../src/axes/api-contract/rules';
import { needsDecision, type ContractSeverity } from '../../../src/axes/types';
import { FAMILY_CASES } from './fixtures/families';

/**
 * The rule families of issue #17 (nullability by composition, warnings, parameter defaults, sunset and
 * deprecation, stability level, response grading, duplicate allOf branches, unused components, allOf
 * composition noise), each on hand-written pairs in YAML and JSON, request and response, OAS 3.0 and 3.1:
 * fixtures/families/<case>@<version>/ (written by fixtures/families.ts).
 */
const ROOT = path.join(__dirname, 'fixtures', 'families');
const AS_OF = '2026-06-01';

async function diffDir(dir: string, ext: 'yaml' | 'json') {
  const read = (name: string) => async (f: string) => (f === `openapi.${ext}` ? fs.readFileSync(path.join(dir, `${name}.${ext}`), 'utf8') : null);
  return diffSpecs(await loadSpec(`openapi.${ext}`, read('base')), await loadSpec(`openapi.${ext}`, read('head')), 'openapi.yaml', { asOf: AS_OF });
}

const dirs = fs.readdirSync(ROOT).sort();

describe('family fixtures on disk', () => {
  it('are the current rendering of fixtures/families.ts, one directory per case and version', () => {
    const expected = FAMILY_CASES.flatMap((c) => c.versions.map((v) => `${c.id}@${v}`)).sort();
    expect(dirs).toEqual(expected);
    for (const c of FAMILY_CASES) {
      for (const v of c.versions) {
        const { base, head } = c.build(v);
        expect(JSON.parse(fs.readFileSync(path.join(ROOT, `${c.id}@${v}`, 'base.json'), 'utf8'))).toEqual(base);
        expect(JSON.parse(fs.readFileSync(path.join(ROOT, `${c.id}@${v}`, 'head.json'), 'utf8'))).toEqual(head);
      }
    }
  });

  it('cover every family in both directions where the family has them, and both OAS versions', () => {
    const families = new Set(FAMILY_CASES.map((c) => c.family));
    expect(families.size).toBe(9);
    for (const f of ['nullability-by-composition', 'warning', 'duplicate-allof', 'composition-noise']) {
      const ds = new Set(FAMILY_CASES.filter((c) => c.family === f).map((c) => c.direction));
      expect([f, ds.has('request') && ds.has('response')]).toEqual([f, true]);
    }
    expect(dirs.some((d) => d.endsWith('@3.0'))).toBe(true);
    expect(dirs.some((d) => d.endsWith('@3.1'))).toBe(true);
  });
});

describe.each(dirs.map((d) => [d]))('family case %s', (name) => {
  const dir = path.join(ROOT, name);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')) as { family: string; expect: Record<string, ContractSeverity> };

  it.each(['yaml', 'json'] as const)('fires exactly the expected rules with the expected severities (%s)', async (ext) => {
    const { changes, unresolvedRefs } = await diffDir(dir, ext);
    expect(unresolvedRefs).toEqual([]);
    expect([...new Set(changes.map((c) => c.ruleId))].sort()).toEqual(Object.keys(meta.expect).sort());
    for (const c of changes) {
      expect([c.ruleId, c.severity]).toEqual([c.ruleId, meta.expect[c.ruleId]]);
      expect(RULES_BY_ID.has(c.ruleId)).toBe(true);
    }
    const verdict = changes.some((c) => needsDecision(c.severity));
    expect(verdict).toBe(Object.values(meta.expect).some(needsDecision));
  });

  it('gives the same changeIds in YAML and JSON', async () => {
    const y = await diffDir(dir, 'yaml');
    const j = await diffDir(dir, 'json');
    expect(y.changes.map((c) => c.changeId)).toEqual(j.changes.map((c) => c.changeId));
  });
});
