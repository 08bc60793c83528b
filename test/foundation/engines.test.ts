import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

// semver is installed (hoisted from jest's tree); it has no bundled types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const semver = require('semver') as {
  validRange(r: string): string | null;
  subset(sub: string, dom: string): boolean;
  satisfies(v: string, r: string): boolean;
  minVersion(r: string): { version: string } | null;
};

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; dev?: boolean }>;
};
const declared = pkg.engines.node;

// `npm ci` warns EBADENGINE when an installed package's engines.node excludes the running Node. The
// supported range is package.json's engines.node; every package the lockfile installs must accept all
// of it, so no Node version we claim to support gets that warning (or a package that refuses to load).
describe('engines: the declared Node range is true for every installed package', () => {
  test('package.json declares a valid range, the lockfile root repeats it, and this Node is inside it', () => {
    expect(semver.validRange(declared)).not.toBeNull();
    expect(lock.packages[''].engines).toEqual({ node: declared });
    expect(semver.satisfies(process.version, declared)).toBe(true);
  });

  test('the README states the same range', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain(`\`engines.node\`: \`${declared}\``);
  });

  test('no package in package-lock.json excludes any part of the declared range', () => {
    const offenders: string[] = [];
    let checked = 0;
    for (const [path, meta] of Object.entries(lock.packages)) {
      if (path === '' || !meta.engines || Array.isArray(meta.engines) || !meta.engines.node) continue;
      checked++;
      const wants = meta.engines.node;
      // A range npm cannot parse is one it would warn about too.
      if (semver.validRange(wants) === null || !semver.subset(declared, wants)) {
        offenders.push(`${path.replace(/^.*node_modules\//, '')}@${meta.version} wants node ${wants}${meta.dev ? ' (dev)' : ''}`);
      }
    }
    expect(checked).toBeGreaterThan(50); // the lockfile really carries engines fields (npm 7+ format)
    expect(offenders).toEqual([]);
  });

  test('the check itself rejects a package that wants a newer Node (the three that once warned)', () => {
    expect(semver.subset(declared, '>=22.12.0')).toBe(false); // commander 15
    expect(semver.subset(declared, '>=22')).toBe(false); // file-type 22, content-type 3
    expect(semver.subset(declared, '>=20')).toBe(true);
  });
});

// The pinned older versions still do what their dependants need, on the real Node runtime (not jest's
// transform): @octokit/request parses Content-Type with content-type 2, and @nestjs/common's
// FileTypeValidator sniffs magic numbers with file-type 21.
test('pinned content-type and file-type still work under @octokit/request and @nestjs/common', async () => {
  const script = `
    const http = require('node:http');
    (async () => {
      const server = http.createServer((req, res) => {
        if (req.url === '/json') { res.setHeader('content-type', 'application/json; charset=utf-8'); res.end('{"a":1}'); }
        else if (req.url === '/text') { res.setHeader('content-type', 'text/plain'); res.end('hi'); }
        else { res.setHeader('content-type', 'application/octet-stream; charset=utf-8'); res.end(Buffer.from([1, 2, 3])); }
      });
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      const { Octokit } = await import('@octokit/rest');
      const o = new Octokit({ baseUrl: 'http://127.0.0.1:' + server.address().port });
      const json = (await o.request('GET /json')).data;
      const text = (await o.request('GET /text')).data;
      const bin = (await o.request('GET /bin')).data;
      server.close();
      const { FileTypeValidator } = await import('@nestjs/common');
      const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
      const v = new FileTypeValidator({ fileType: 'image/png' });
      const pngOk = await v.isValid({ buffer: png, mimetype: 'image/png' });
      const fakeOk = await v.isValid({ buffer: Buffer.from('%PDF-1.4 not a png at all........'), mimetype: 'image/png' });
      process.stdout.write(JSON.stringify({ json, text, bin: bin instanceof ArrayBuffer ? [...new Uint8Array(bin)] : String(bin), pngOk, fakeOk }));
    })().catch((e) => { console.error(e); process.exit(1); });
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' });
  expect(JSON.parse(stdout)).toEqual({ json: { a: 1 }, text: 'hi', bin: [1, 2, 3], pngOk: true, fakeOk: false });
});
