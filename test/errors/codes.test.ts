import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../../src/domain-error';
import { ERROR_CODES, ErrorCode, HTTP_STATUS_BY_STATUS, RPC_CODE_BY_STATUS } from '../../src/errors/codes';
import { RPC_DOC, withErrorTable } from '../../src/errors/generate-docs';
import { httpStatusOf, toRpcError } from '../../src/rpc/errors';

const ROOT = path.join(__dirname, '..', '..');
const CODES = Object.keys(ERROR_CODES) as ErrorCode[];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the error-code registry (src/errors/codes.ts)', () => {
  it('docs/rpc.md carries the table rendered from the registry (regenerate with src/errors/generate-docs.ts)', () => {
    const current = fs.readFileSync(RPC_DOC, 'utf8');
    expect(current).toBe(withErrorTable(current));
    for (const code of CODES) expect(current).toContain(`| \`${code}\` |`);
  });

  it('lists only codes the server sends: every code is written at a site outside the registry', () => {
    const text = sourceFiles(path.join(ROOT, 'src'))
      .filter((f) => !f.includes(`${path.sep}errors${path.sep}`))
      .map((f) => fs.readFileSync(f, 'utf8'))
      .join('\n');
    const unused = CODES.filter((c) => !text.includes(`'${c}'`));
    expect(unused).toEqual([]);
  });

  it('a code that is not in the registry fails tsc', () => {
    const dir = fs.mkdtempSync(path.join(ROOT, 'test', 'errors', '.tsc-'));
    try {
      fs.writeFileSync(path.join(dir, 'free.ts'), "import { DomainError } from '../../../src/domain-error';\nexport const e = new DomainError('review_not_computed', 'a synonym the registry collapsed');\n");
      fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ extends: '../../../tsconfig.json', compilerOptions: { noEmit: true }, include: ['free.ts'] }));
      let out = '';
      try {
        execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8', stdio: 'pipe' });
      } catch (err) {
        out = `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}${(err as Error).message}`;
      }
      expect(out).toMatch(/free\.ts.*error TS2345: Argument of type '"review_not_computed"' is not assignable/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('the kind of a code decides its JSON-RPC error.code and HTTP status', () => {
    expect(toRpcError(new DomainError('self_confirmation_refused', 'x'))).toEqual({ code: -32003, message: 'x', data: { code: 'self_confirmation_refused' } });
    expect(toRpcError(new DomainError('not_computed', 'x', { headSha: 'a' }))).toEqual({ code: -32009, message: 'x', data: { code: 'not_computed', details: { headSha: 'a' } } });
    for (const code of CODES.filter((c) => !('rpcCode' in ERROR_CODES[c]))) {
      const e = new DomainError(code, 'm');
      expect([code, toRpcError(e).code, httpStatusOf(e)]).toEqual([code, RPC_CODE_BY_STATUS[e.status], HTTP_STATUS_BY_STATUS[e.status]]);
    }
  });

  it('README and docs name codes as the server sends them (no near-miss such as self_confirmation for self_confirmation_refused)', () => {
    const docs = [path.join(ROOT, 'README.md'), ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(ROOT, 'docs', f))];
    const nearMisses: string[] = [];
    for (const file of docs) {
      const text = fs.readFileSync(file, 'utf8');
      for (const [, token] of text.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)) {
        if ((CODES as string[]).includes(token)) continue;
        // A token that is a whole-word prefix or suffix of a refusal code (…_refused, …_not_on_roster) is a misspelt code.
        const near = CODES.find((c) => c === `${token}_refused` || (c.endsWith(`_${token}`) && /^not_|^unknown_|_not_found$|_refused$/.test(token)));
        if (near) nearMisses.push(`${path.relative(ROOT, file)}: \`${token}\` (did you mean \`${near}\`?)`);
      }
    }
    expect(nearMisses).toEqual([]);
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const advertised = readme.match(/typed errors with `error\.data\.code`: ([^)]*)/)![1];
    const listed = [...advertised.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect(listed.length).toBeGreaterThan(3);
    expect(listed.filter((c) => !(CODES as string[]).includes(c))).toEqual([]);
  });
});
