import * as fs from 'node:fs';
import * as path from 'node:path';
import { mutantsOf, runCheck } from './mutants';

const TUTORIAL = path.resolve(__dirname, '..', '..', 'docs', 'tutorial.md');
const definition = fs
  .readFileSync(TUTORIAL, 'utf8')
  .split('\n')
  .find((l) => l.startsWith('check() {'))!;
const survivors = (expr: string, output: string, args: string[] = []) => mutantsOf(expr, args).filter((m) => runCheck(definition, m.expr, m.args, output)).map((m) => m.label);

describe('the mutants of a tutorial check', () => {
  it('change each expected value and comparison once: strings, numbers, booleans, --arg values, operators', () => {
    expect(mutantsOf('.a | [.b, .c[0]] == ["x", 2] and .d != true and (.e | length) > 50 and .f == $head', ['--arg', 'head', 'abc']).map((m) => m.label)).toEqual([
      '0 → 1',
      '== → !=',
      '"x" → "x~"',
      '2 → 3',
      '!= → ==',
      'true → false',
      '> → <=',
      '== → !=',
      '$head = abc~',
    ]);
  });

  it('all die on an exact check of the right output', () => {
    const output = '{"a":{"b":"x","c":[2]},"d":false,"e":[' + Array(51).fill(0).join(',') + '],"f":"abc"}\n';
    const expr = '.a | [.b, .c[0]] == ["x", 2]';
    expect(runCheck(definition, expr, [], output)).toBe(true);
    expect(survivors(expr, output)).toEqual([]);
    expect(runCheck(definition, '.f == $head', ['--arg', 'head', 'abc'], output)).toBe(true);
    expect(survivors('.f == $head', output, ['--arg', 'head', 'abc'])).toEqual([]);
  });

  it('some survive a vacuous check: what the tutorial test reports (issue 38: a check that passes whatever the output is)', () => {
    // `.isError != true` also holds when isError is missing; a lower bound holds for any longer list; index 0 is as good as 1 when both match.
    expect(survivors('.result.isError != true', '{"result":{}}\n')).toEqual(['true → false']);
    expect(survivors('.items[0].kind == "semantic"', '{"items":[{"kind":"semantic"},{"kind":"semantic"}]}\n')).toEqual(['0 → 1']);
  });
});
