import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The build compiles src/ to CommonJS with tsc, which refers to a module's own exported constants as
 * `exports.name`: a local variable called `exports` hides them (and one called `require`, the requires tsc emits) in the built
 * server while the tests, transpiled by swc, pass. It happened once (graph.ts: `const exports = …` made
 * every symbol lookup of the built server throw "(0, exports.symbolId) is not a function").
 */
describe('no local binding hides a CommonJS name of the built server', () => {
  it('src/ declares no variable, function or class named exports or require', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts')) {
          fs.readFileSync(p, 'utf8').split('\n').forEach((line, i) => {
            if (/\b(?:const|let|var|function|class)\s+(?:exports|require)\b/.test(line.replace(/\/\/.*$/, ''))) offenders.push(`${path.relative(process.cwd(), p)}:${i + 1}: ${line.trim()}`);
          });
        }
      }
    };
    walk(path.join(__dirname, '../../src'));
    expect(offenders).toEqual([]);
  });
});
