import * as fs from 'node:fs';
import * as path from 'node:path';
import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpec } from '../../../src/axes/api-contract/document';
import { CONTRACT_RULES, RULES_BY_ID } from '../../../src/axes/api-contract/rules';
import { OASDIFF_EQUIVALENTS } from '../../../src/axes/api-contract/rules/oasdiff';
import { needsDecision } from '../../../src/axes/types';

const FIXTURES = path.join(__dirname, 'fixtures', 'rules');
const AS_OF = '2026-06-01';

async function diffFixture(dir: string, ext: 'yaml' | 'json') {
  const read = (name: string) => async (f: string) => (f === `openapi.${ext}` ? fs.readFileSync(path.join(dir, `${name}.${ext}`), 'utf8') : null);
  const base = await loadSpec(`openapi.${ext}`, read('base'));
  const head = await loadSpec(`openapi.${ext}`, read('head'));
  return diffSpecs(base, head, 'openapi.yaml', { asOf: AS_OF });
}

describe('contract rule registry', () => {
  it('has unique rule ids', () => {
    expect(RULES_BY_ID.size).toBe(CONTRACT_RULES.length);
  });

  it('documents every rule with a description, a direction, a severity and an example', () => {
    for (const r of CONTRACT_RULES) {
      expect(r.description.length).toBeGreaterThan(10);
      expect(['request', 'response', 'none']).toContain(r.direction);
      expect(['breaking', 'warning', 'non-breaking', 'info']).toContain(r.severity);
      expect(r.example.length).toBeGreaterThan(3);
    }
  });

  it('names oasdiff rules that exist in its registry shape, and says why wherever our grade class differs from its level', () => {
    for (const [id, o] of Object.entries(OASDIFF_EQUIVALENTS)) {
      expect(RULES_BY_ID.has(id)).toBe(true);
      expect(o.id).toMatch(/^[a-z][a-z-]+[a-z]$/);
      expect(['ERR', 'WARN', 'INFO']).toContain(o.level);
      const ours = needsDecision(RULES_BY_ID.get(id)!.severity);
      const theirs = o.level !== 'INFO';
      if (ours !== theirs) expect({ id, differs: o.differs }).toEqual({ id, differs: expect.stringMatching(/.{20,}/) });
    }
    expect(CONTRACT_RULES.filter((r) => r.oasdiff).length).toBe(Object.keys(OASDIFF_EQUIVALENTS).length);
  });

  it('has a fixture pair on disk for every rule', () => {
    const dirs = new Set(fs.readdirSync(FIXTURES));
    expect(CONTRACT_RULES.filter((r) => !dirs.has(r.id)).map((r) => r.id)).toEqual([]);
  });

  it('classifies by direction: tightening a request and loosening a response break clients', () => {
    const rule = (id: string) => RULES_BY_ID.get(id)!.severity;
    expect(rule('request-type-widened')).toBe('non-breaking'); // integer → number is harmless in a request
    expect(rule('response-type-widened')).toBe('breaking'); // … and breaking in a response
    expect(rule('request-property-became-required')).toBe('breaking');
    expect(rule('response-property-became-required')).toBe('non-breaking');
    expect(rule('request-max-length-decreased')).toBe('breaking');
    expect(rule('response-max-length-increased')).toBe('breaking');
    expect(rule('response-enum-value-added')).toBe('breaking');
    expect(rule('request-enum-value-added')).toBe('non-breaking');
  });
});

describe.each(CONTRACT_RULES.map((r) => [r.id]))('rule %s', (id) => {
  const dir = path.join(FIXTURES, id);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')) as { expect: string[] };

  it.each(['yaml', 'json'] as const)('fires on its %s fixture pair, with its registered severity and direction, and nothing unexpected', async (ext) => {
    const { changes, unresolvedRefs } = await diffFixture(dir, ext);
    expect(unresolvedRefs).toEqual([]);
    expect([...new Set(changes.map((c) => c.ruleId))].sort()).toEqual([...new Set(meta.expect)].sort());
    const rule = RULES_BY_ID.get(id)!;
    for (const c of changes.filter((c) => c.ruleId === id)) {
      expect(c.severity).toBe(rule.severity);
      expect(c.direction).toBe(rule.direction);
      expect(c.message.length).toBeGreaterThan(0);
      expect(c.basePointer ?? c.headPointer).toMatch(/#/);
    }
  });

  it('gives the same change the same changeId whether the spec is written in YAML or JSON', async () => {
    const y = await diffFixture(dir, 'yaml');
    const j = await diffFixture(dir, 'json');
    expect(y.changes.map((c) => c.changeId)).toEqual(j.changes.map((c) => c.changeId));
  });

  it('reports nothing when base and head are the same document', async () => {
    const read = async () => fs.readFileSync(path.join(dir, 'head.yaml'), 'utf8');
    const head = await loadSpec('openapi.yaml', read);
    const again = await loadSpec('openapi.yaml', read);
    expect(diffSpecs(head, again, 'openapi.yaml', { asOf: AS_OF }).changes).toEqual([]);
  });
});
