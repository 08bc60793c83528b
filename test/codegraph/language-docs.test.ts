import * as fs from 'node:fs';
import { COHORTS_DOC, LANGUAGE_DOCS, README, pathGroupedNames, renderLanguageList, withLanguageList, withLanguageTable } from '../../src/codegraph/languages/language-docs';
import { LANGUAGES, UNSUPPORTED_LANGUAGE_NAMES, languageOf, unsupportedLanguageIds } from '../../src/codegraph/languages/languages';

describe('the documented language list is the registry', () => {
  it('every registered language is documented in exactly one row, and every documented one is registered', () => {
    const documented = LANGUAGE_DOCS.flatMap((r) => r.ids);
    expect([...documented].sort()).toEqual(Object.keys(LANGUAGES).sort());
    expect(new Set(documented).size).toBe(documented.length);
  });

  it('every path-grouped language has a display name, and none of them is also a semantic one', () => {
    for (const id of unsupportedLanguageIds()) expect(UNSUPPORTED_LANGUAGE_NAMES[id]).toBeDefined();
    expect(Object.keys(UNSUPPORTED_LANGUAGE_NAMES).sort()).toEqual(unsupportedLanguageIds().sort());
    const semantic = new Set(LANGUAGE_DOCS.flatMap((r) => r.label.split(', ')));
    for (const name of pathGroupedNames()) expect(semantic.has(name)).toBe(false);
    expect(languageOf('Main.scala')).toBeUndefined();
  });

  it('README.md and docs/cohorts.md hold the current rendering (regenerate: node -r ./tools/ts-register.js src/codegraph/languages/language-docs.ts)', () => {
    const readme = fs.readFileSync(README, 'utf8');
    const doc = fs.readFileSync(COHORTS_DOC, 'utf8');
    expect(withLanguageList(readme)).toBe(readme);
    expect(withLanguageTable(doc)).toBe(doc);
    expect(readme).toContain(renderLanguageList());
    for (const row of LANGUAGE_DOCS) expect(doc).toContain(`| ${row.label} |`);
  });

  it('a hand edit inside a generated block is caught, and a missing marker is an error', () => {
    const doc = fs.readFileSync(COHORTS_DOC, 'utf8');
    const stale = doc.replace('| Swift |', '| Swift (old) |');
    expect(withLanguageTable(stale)).not.toBe(stale);
    expect(() => withLanguageTable('no markers here')).toThrow(/markers/);
  });
});
