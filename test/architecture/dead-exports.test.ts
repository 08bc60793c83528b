import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function files(dir: string, ext: RegExp): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p, ext) : ext.test(e.name) ? [p] : [];
  });
}

const EXPORT = /^export\s+(?:declare\s+)?(?:async\s+)?(?:const|let|function\*?|class|interface|type|enum|abstract class)\s+([A-Za-z_$][\w$]*)/gm;

/**
 * An export that nothing names — not another file of src/, test/, bench/ or tools/, not even its own file —
 * is dead code a reader has to understand for nothing (issue #42). An export used only inside its own file
 * is fine (a type in an exported signature, a Nest controller registered by its module).
 */
export function deadExports(root: string): string[] {
  const all = ['src', 'test', 'bench', 'tools'].flatMap((d) => (fs.existsSync(path.join(root, d)) ? files(path.join(root, d), /\.(ts|js)$/) : []));
  const text = new Map(all.map((f) => [f, fs.readFileSync(f, 'utf8')]));
  const words = new Map<string, number>();
  for (const t of text.values()) for (const w of t.match(/[A-Za-z_$][\w$]*/g) ?? []) words.set(w, (words.get(w) ?? 0) + 1);
  const dead: string[] = [];
  for (const [f, t] of text) {
    if (!path.relative(root, f).startsWith('src' + path.sep)) continue;
    for (const m of t.matchAll(EXPORT)) if (words.get(m[1]) === 1) dead.push(`${path.relative(root, f)}: ${m[1]}`);
  }
  return dead.sort();
}

describe('no export that nothing uses', () => {
  it('every export of src/ is named somewhere besides its declaration', () => {
    expect(deadExports(ROOT)).toEqual([]);
  });

  it('the detector finds an export nothing names, and not one that is used', () => {
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'rl-dead-'));
    try {
      fs.mkdirSync(path.join(dir, 'src'));
      fs.writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const unusedThing = 1;\nexport function usedThing(): number {\n  return 2;\n}\n');
      fs.writeFileSync(path.join(dir, 'src', 'b.ts'), "import { usedThing } from './a';\nexport const total = usedThing();\nconsole.log(total);\n");
      expect(deadExports(dir)).toEqual([`src${path.sep}a.ts: unusedThing`]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
