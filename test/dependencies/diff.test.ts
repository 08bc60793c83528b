import { diffDependencies } from '../../src/dependencies/diff';

function reader(base: Record<string, string>, head: Record<string, string>) {
  return async (side: 'base' | 'head', p: string) => (side === 'base' ? base : head)[p] ?? null;
}
const changed = (...paths: string[]) => paths.map((p) => ({ path: p, status: 'modified' }));

describe('dependency diffs (SPEC §13)', () => {
  it('Go go.mod: upgrades, additions, removals; major bumps flagged', async () => {
    const base = 'module x\n\nrequire (\n\tgithub.com/a/b v1.2.0\n\tgithub.com/c/d v0.3.1 // indirect\n\tgithub.com/gone/x v1.0.0\n)\n';
    const head = 'module x\n\nrequire (\n\tgithub.com/a/b v2.0.0\n\tgithub.com/c/d v0.4.0 // indirect\n\tgithub.com/new/y v1.1.0\n)\n';
    const [d] = await diffDependencies(changed('go.mod'), reader({ 'go.mod': base }, { 'go.mod': head }));
    expect(d.ecosystem).toBe('go');
    expect(d.changes).toEqual([
      { name: 'github.com/a/b', change: 'upgraded', from: 'v1.2.0', to: 'v2.0.0', major: true },
      { name: 'github.com/c/d', change: 'upgraded', from: 'v0.3.1', to: 'v0.4.0', major: true, group: 'indirect' },
      { name: 'github.com/gone/x', change: 'removed', from: 'v1.0.0', major: false },
      { name: 'github.com/new/y', change: 'added', to: 'v1.1.0', major: false },
    ]);
  });

  it('Cargo.toml and Cargo.lock: inline tables, dev dependencies, downgrades', async () => {
    const base = '[package]\nname = "x"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1.0.100"\ntokio = { version = "1.20", features = ["full"] }\n\n[dev-dependencies]\ninsta = "1.30"\n';
    const head = '[package]\nname = "x"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1.0.90"\ntokio = { version = "1.21", features = ["full"] }\n\n[dev-dependencies]\ninsta = "1.30"\n';
    const lockBase = '[[package]]\nname = "serde"\nversion = "1.0.100"\n\n[[package]]\nname = "itoa"\nversion = "1.0.0"\n';
    const lockHead = '[[package]]\nname = "serde"\nversion = "1.0.90"\n';
    const diffs = await diffDependencies(changed('Cargo.toml', 'Cargo.lock'), reader({ 'Cargo.toml': base, 'Cargo.lock': lockBase }, { 'Cargo.toml': head, 'Cargo.lock': lockHead }));
    const toml = diffs.find((d) => d.path === 'Cargo.toml')!;
    expect(toml.changes).toEqual([
      { name: 'serde', change: 'downgraded', from: '1.0.100', to: '1.0.90', major: false },
      { name: 'tokio', change: 'upgraded', from: '1.20', to: '1.21', major: false },
    ]);
    expect(diffs.find((d) => d.path === 'Cargo.lock')!.changes.map((c) => `${c.name}:${c.change}`)).toEqual(['itoa:removed', 'serde:downgraded']);
  });

  it('Python requirements.txt and pyproject.toml (PEP 621 and poetry) normalize names', async () => {
    const req = await diffDependencies(changed('requirements-dev.txt'), reader({ 'requirements-dev.txt': 'Django==3.2\nrequests>=2.0  # http\n' }, { 'requirements-dev.txt': 'django==4.2\nrequests>=2.0\npytest\n' }));
    expect(req[0].changes).toEqual([
      { name: 'django', change: 'upgraded', from: '==3.2', to: '==4.2', major: true },
      { name: 'pytest', change: 'added', to: '*', major: false },
    ]);
    const pyBase = '[project]\nname = "x"\ndependencies = [\n  "httpx>=0.24",\n]\n\n[tool.poetry.dev-dependencies]\nblack = "^22.0"\n';
    const pyHead = '[project]\nname = "x"\ndependencies = [\n  "httpx>=0.25",\n  "pydantic>=2",\n]\n\n[tool.poetry.dev-dependencies]\nblack = "^23.0"\n';
    const [py] = await diffDependencies(changed('pyproject.toml'), reader({ 'pyproject.toml': pyBase }, { 'pyproject.toml': pyHead }));
    expect(py.changes).toEqual([
      { name: 'black', change: 'upgraded', from: '^22.0', to: '^23.0', major: true, group: 'dev' },
      { name: 'httpx', change: 'upgraded', from: '>=0.24', to: '>=0.25', major: true },
      { name: 'pydantic', change: 'added', to: '>=2', major: false },
    ]);
  });

  it('Dart pubspec.yaml and pubspec.lock', async () => {
    const base = 'name: app\nversion: 1.0.0\ndependencies:\n  http: ^0.13.0\n  flutter:\n    sdk: flutter\ndev_dependencies:\n  lints: ^2.0.0\n';
    const head = 'name: app\nversion: 1.0.0\ndependencies:\n  http: ^1.1.0\n  flutter:\n    sdk: flutter\ndev_dependencies:\n  lints: ^2.0.0\n';
    const lockBase = 'packages:\n  http:\n    dependency: "direct main"\n    version: "0.13.6"\n';
    const lockHead = 'packages:\n  http:\n    dependency: "direct main"\n    version: "1.1.0"\n';
    const diffs = await diffDependencies(changed('pubspec.yaml', 'pubspec.lock'), reader({ 'pubspec.yaml': base, 'pubspec.lock': lockBase }, { 'pubspec.yaml': head, 'pubspec.lock': lockHead }));
    expect(diffs.map((d) => [d.path, d.ecosystem, d.changes.map((c) => `${c.name} ${c.change} ${c.major}`)])).toEqual([
      ['pubspec.lock', 'dart', ['http upgraded true']],
      ['pubspec.yaml', 'dart', ['http upgraded true']],
    ]);
  });

  it('a manifest whose only change is its own version is a version-only bump; a parse failure is reported, not thrown', async () => {
    const [bump] = await diffDependencies(changed('Cargo.toml'), reader({ 'Cargo.toml': '[package]\nversion = "0.1.0"\n[dependencies]\nx = "1"\n' }, { 'Cargo.toml': '[package]\nversion = "0.2.0"\n[dependencies]\nx = "1"\n' }));
    expect(bump).toMatchObject({ changes: [], versionOnly: true });
    const [broken] = await diffDependencies(changed('package.json'), reader({ 'package.json': '{}' }, { 'package.json': '{ not json' }));
    expect(broken.error).toMatch(/could not parse package.json/);
  });
});
