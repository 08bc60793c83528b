import * as YAML from 'yaml';

/** name → version spec, with the dependency group when the manifest has several. */
export type DependencyMap = Map<string, { version: string; group?: string }>;
export type Ecosystem = 'npm' | 'go' | 'cargo' | 'python' | 'dart';

export interface ManifestKind {
  ecosystem: Ecosystem;
  parse: (text: string) => DependencyMap;
}

function put(map: DependencyMap, name: string, version: string, group?: string): void {
  if (!name) return;
  if (!map.has(name) || group === undefined) map.set(name, group ? { version, group } : { version });
}

function packageJson(text: string): DependencyMap {
  const json = JSON.parse(text) as Record<string, unknown>;
  const map: DependencyMap = new Map();
  const groups: Array<[string, string | undefined]> = [['devDependencies', 'dev'], ['peerDependencies', 'peer'], ['optionalDependencies', 'optional'], ['dependencies', undefined]];
  for (const [field, group] of groups) {
    const deps = json[field];
    if (deps && typeof deps === 'object') for (const [name, v] of Object.entries(deps as Record<string, unknown>)) put(map, name, String(v), group);
  }
  return map;
}

function packageLock(text: string): DependencyMap {
  const json = JSON.parse(text) as { packages?: Record<string, { version?: string; dev?: boolean }>; dependencies?: Record<string, { version?: string; dev?: boolean }> };
  const map: DependencyMap = new Map();
  if (json.packages) {
    for (const [key, p] of Object.entries(json.packages)) {
      // Only top-level installs: nested copies are another package's business.
      const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key);
      if (m && p.version) put(map, m[1], p.version, p.dev ? 'dev' : undefined);
    }
  } else if (json.dependencies) {
    for (const [name, p] of Object.entries(json.dependencies)) if (p.version) put(map, name, p.version, p.dev ? 'dev' : undefined);
  }
  return map;
}

function goMod(text: string): DependencyMap {
  const map: DependencyMap = new Map();
  let inBlock = false;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/(?!\s*indirect).*$/, '').trim();
    if (/^require\s*\($/.test(line)) {
      inBlock = true;
      continue;
    }
    if (inBlock && line === ')') {
      inBlock = false;
      continue;
    }
    const m = inBlock ? /^(\S+)\s+(\S+)(\s*\/\/\s*indirect)?/.exec(line) : /^require\s+(\S+)\s+(\S+)(\s*\/\/\s*indirect)?/.exec(line);
    if (m) put(map, m[1], m[2], m[3] ? 'indirect' : undefined);
  }
  return map;
}

/** Just enough TOML for dependency tables: `[section]`, `name = "v"`, `name = { version = "v" }`, string arrays. */
function tomlSections(text: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').trimEnd();
    const header = /^\s*\[\[?([^\]]+)\]\]?\s*$/.exec(line);
    if (header) {
      current = header[1].trim();
      if (!sections.has(current)) sections.set(current, []);
      if (line.trim().startsWith('[[')) sections.get(current)!.push('\u0000new-entry');
      continue;
    }
    sections.set(current, [...(sections.get(current) ?? []), line]);
  }
  return sections;
}

function tomlValueVersion(value: string): string {
  const v = value.trim();
  const str = /^"([^"]*)"|^'([^']*)'/.exec(v);
  if (str) return str[1] ?? str[2];
  const inline = /version\s*=\s*"([^"]*)"/.exec(v);
  if (inline) return inline[1];
  const git = /(git|path)\s*=\s*"([^"]*)"/.exec(v);
  return git ? `${git[1]}:${git[2]}` : v;
}

function cargoToml(text: string): DependencyMap {
  const map: DependencyMap = new Map();
  for (const [name, lines] of tomlSections(text)) {
    const m = /^(?:target\.[^.]+\.)?(dependencies|dev-dependencies|build-dependencies)$/.exec(name);
    if (!m) continue;
    for (const line of lines) {
      const kv = /^\s*([A-Za-z0-9_.-]+)\s*=\s*(.+)$/.exec(line);
      if (kv) put(map, kv[1], tomlValueVersion(kv[2]), m[1] === 'dependencies' ? undefined : m[1].replace('-dependencies', ''));
    }
  }
  return map;
}

function cargoLock(text: string): DependencyMap {
  const map: DependencyMap = new Map();
  const lines = tomlSections(text).get('package') ?? [];
  let name = '';
  for (const line of lines) {
    if (line === '\u0000new-entry') name = '';
    const n = /^name\s*=\s*"([^"]+)"/.exec(line);
    if (n) name = n[1];
    const v = /^version\s*=\s*"([^"]+)"/.exec(line);
    if (v && name) put(map, name, v[1]);
  }
  return map;
}

const normalizePython = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

function pep508(spec: string, map: DependencyMap, group?: string): void {
  const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$/.exec(spec);
  if (!m) return;
  put(map, normalizePython(m[1]), m[3].split(';')[0].trim() || '*', group);
}

function requirementsTxt(text: string): DependencyMap {
  const map: DependencyMap = new Map();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$|^#.*$/, '').trim();
    if (!line || line.startsWith('-')) continue;
    pep508(line, map);
  }
  return map;
}

function pyprojectToml(text: string): DependencyMap {
  const map: DependencyMap = new Map();
  const sections = tomlSections(text);
  const project = (sections.get('project') ?? []).join('\n');
  const arr = /(?:^|\n)\s*dependencies\s*=\s*\[([\s\S]*?)\]/.exec(project);
  if (arr) for (const s of arr[1].matchAll(/"([^"]+)"|'([^']+)'/g)) pep508(s[1] ?? s[2], map);
  for (const [name, lines] of sections) {
    if (name === 'project.optional-dependencies' || name === 'dependency-groups') {
      const text2 = lines.join('\n');
      for (const g of text2.matchAll(/([A-Za-z0-9_-]+)\s*=\s*\[([\s\S]*?)\]/g)) for (const s of g[2].matchAll(/"([^"]+)"|'([^']+)'/g)) pep508(s[1] ?? s[2], map, g[1]);
    }
    const poetry = /^tool\.poetry\.(dependencies|dev-dependencies|group\.([^.]+)\.dependencies)$/.exec(name);
    if (!poetry) continue;
    for (const line of lines) {
      const kv = /^\s*([A-Za-z0-9_.-]+)\s*=\s*(.+)$/.exec(line);
      if (kv && kv[1].toLowerCase() !== 'python') put(map, normalizePython(kv[1]), tomlValueVersion(kv[2]), poetry[1] === 'dependencies' ? undefined : poetry[2] ?? 'dev');
    }
  }
  return map;
}

function pubspecYaml(text: string): DependencyMap {
  const doc = (YAML.parse(text) ?? {}) as Record<string, unknown>;
  const map: DependencyMap = new Map();
  for (const [field, group] of [['dev_dependencies', 'dev'], ['dependencies', undefined]] as const) {
    const deps = doc[field];
    if (!deps || typeof deps !== 'object') continue;
    for (const [name, v] of Object.entries(deps as Record<string, unknown>)) {
      const version = typeof v === 'string' ? v : v && typeof v === 'object' && 'version' in v ? String((v as { version: unknown }).version) : v && typeof v === 'object' ? Object.keys(v as object)[0] ?? 'any' : 'any';
      put(map, name, version, group);
    }
  }
  return map;
}

function pubspecLock(text: string): DependencyMap {
  const doc = (YAML.parse(text) ?? {}) as { packages?: Record<string, { version?: string; dependency?: string }> };
  const map: DependencyMap = new Map();
  for (const [name, p] of Object.entries(doc.packages ?? {})) if (p?.version) put(map, name, String(p.version), p.dependency?.includes('dev') ? 'dev' : undefined);
  return map;
}

/** The manifest / lock kinds dependency diffs understand (SPEC §13), by file name. */
export function manifestKindOf(filePath: string): ManifestKind | undefined {
  const base = filePath.slice(filePath.lastIndexOf('/') + 1).toLowerCase();
  if (base === 'package.json') return { ecosystem: 'npm', parse: packageJson };
  if (base === 'package-lock.json' || base === 'npm-shrinkwrap.json') return { ecosystem: 'npm', parse: packageLock };
  if (base === 'go.mod') return { ecosystem: 'go', parse: goMod };
  if (base === 'cargo.toml') return { ecosystem: 'cargo', parse: cargoToml };
  if (base === 'cargo.lock') return { ecosystem: 'cargo', parse: cargoLock };
  if (/^requirements[\w.-]*\.(txt|in)$/.test(base)) return { ecosystem: 'python', parse: requirementsTxt };
  if (base === 'pyproject.toml') return { ecosystem: 'python', parse: pyprojectToml };
  if (base === 'pubspec.yaml') return { ecosystem: 'dart', parse: pubspecYaml };
  if (base === 'pubspec.lock') return { ecosystem: 'dart', parse: pubspecLock };
  return undefined;
}
