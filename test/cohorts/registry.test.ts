import * as fs from 'node:fs';
import * as path from 'node:path';
import { ALL_SIGNALS, DEFAULT_SIGNALS, SIGNALS } from '../../src/cohorts';
import { COHORTS_DOC, readResults, renderResultsTable, renderSignalTable, withResultsTable, withSignalTable } from '../../src/cohorts/cohort-docs';

const ROOT = path.resolve(__dirname, '../..');

describe('the registry of formation signals', () => {
  it('lists each signal once, each in its own file under src/cohorts/signals/ that exports it', () => {
    expect(new Set(ALL_SIGNALS).size).toBe(SIGNALS.length);
    for (const s of SIGNALS) {
      const file = path.join(ROOT, 'src/cohorts/signals', `${s.id}.ts`);
      expect(fs.existsSync(file)).toBe(true);
      expect(fs.readFileSync(file, 'utf8')).toContain(`id: '${s.id}'`);
    }
    expect(fs.readdirSync(path.join(ROOT, 'src/cohorts/signals')).sort()).toEqual(SIGNALS.map((s) => `${s.id}.ts`).sort());
  });

  it("every entry names a test that exists and mentions the signal; its one-line fields are filled", () => {
    for (const s of SIGNALS) {
      const test = path.join(ROOT, s.test);
      expect(fs.existsSync(test)).toBe(true);
      expect(fs.readFileSync(test, 'utf8')).toContain(s.id);
      expect(s.joins.length).toBeGreaterThan(10);
      expect(s.evidence.length).toBeGreaterThan(10);
      expect(s.joins + s.evidence).not.toContain('\n');
    }
  });

  it('the default set is the measured one (docs/cohorts.md): changing it is a decision this test records', () => {
    expect([...DEFAULT_SIGNALS].sort()).toEqual(['changed-import', 'changed-reference', 'code-change', 'declared-member', 'edit-idiom', 'fixture-name', 'member-use', 'mirror', 'new-identifier', 'new-symbol-import', 'same-substitution', 'shared-identifiers', 'similar-edit', 'test-affinity', 'test-hub', 'test-names', 'test-subject', 'test-titles', 'tooling-config', 'type-bindings', 'type-test', 'wrapper']);
    expect(ALL_SIGNALS.filter((s) => !DEFAULT_SIGNALS.includes(s)).sort()).toEqual(['boilerplate-lines', 'co-change', 'directory', 'edit-rare-id', 'join-attach', 'type-edges']);
  });

  it('docs/cohorts.md holds the current signal table (regenerate: node -r ./tools/ts-register.js src/cohorts/cohort-docs.ts)', () => {
    const doc = fs.readFileSync(COHORTS_DOC, 'utf8');
    expect(withSignalTable(doc)).toBe(doc);
    for (const s of SIGNALS) expect(doc).toContain(`| [\`${s.id}\`](../src/cohorts/signals/${s.id}.ts) |`);
    expect(doc).toContain(renderSignalTable());
  });

  it('a hand edit inside the generated table is caught, and a missing marker is an error', () => {
    const doc = fs.readFileSync(COHORTS_DOC, 'utf8');
    const stale = doc.replace('| on | ', '| off | ');
    expect(withSignalTable(stale)).not.toBe(stale);
    expect(() => withSignalTable('no markers here')).toThrow(/markers/);
  });
});

describe('the latest results table', () => {
  it('docs/cohorts.md holds the rendering of docs/cohorts-results.jsonl: one row per repository, each with its role', () => {
    const doc = fs.readFileSync(COHORTS_DOC, 'utf8');
    const results = readResults();
    expect(withResultsTable(doc)).toBe(doc);
    expect(new Set(results.map((r) => r.repo)).size).toBe(results.length);
    for (const r of results) {
      expect(['evaluation', 'validation', 'fresh']).toContain(r.role);
      expect(r.cases).toBeGreaterThan(0);
      expect(doc).toContain(`| ${r.repo} | ${r.role} | ${r.engineVersion} | ${r.cases} | **${r.engine.median.toFixed(3)} / ${r.engine.mean.toFixed(3)}** |`);
    }
  });

  it('a changed figure changes the rendering (the doc is stale until regenerated)', () => {
    const doc = fs.readFileSync(COHORTS_DOC, 'utf8');
    const results = readResults();
    const changed = results.map((r, i) => (i === 0 ? { ...r, engine: { ...r.engine, mean: r.engine.mean + 0.001 } } : r));
    expect(renderResultsTable(changed)).not.toBe(renderResultsTable(results));
    expect(withResultsTable(doc, changed)).not.toBe(doc);
  });
});
