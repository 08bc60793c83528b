import * as jsYaml from 'js-yaml';

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

/*
 * A manifest is a file of the PR: its author chooses every byte, up to the 64 MiB the blob reader
 * allows, and it is parsed on the server's thread. So every scan below is linear in the text: comments
 * are found with indexOf, not with a regex that starts over at every position (`/\s+#.*$/` retried a
 * run of spaces from each of its characters — a line of 80,000 spaces took 5.4 s, 1 MiB hours), and a
 * section's lines are pushed, not copied per line (a real 48,000-line Cargo.lock took 16 s).
 */

/** Whether `s[i]` is what a regex's `\s` matches (ASCII answered without the regex). */
function spaceAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return c === c && /\s/.test(s[i]); // (NaN past the end)
}

/** Whether `s[i]` is a bare TOML key character as the manifests use them. */
function keyCharAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;
}

/** `line` without its ` # comment` (whitespace, then `#` to the end of the line): TOML, requirements.txt. */
function stripHashComment(line: string): string {
  for (let i = line.indexOf('#'); i > 0; i = line.indexOf('#', i + 1)) {
    if (!spaceAt(line, i - 1)) continue;
    let start = i - 1;
    while (start > 0 && spaceAt(line, start - 1)) start--;
    return line.slice(0, start);
  }
  return line;
}

/** go.mod `line` without its `// comment`, keeping a `// indirect` marker. */
function stripGoComment(line: string): string {
  for (let i = line.indexOf('//'); i >= 0; i = line.indexOf('//', i + 2)) {
    let j = i + 2;
    while (spaceAt(line, j)) j++;
    if (!line.startsWith('indirect', j)) return line.slice(0, i);
  }
  return line;
}

function goMod(text: string): DependencyMap {
  const map: DependencyMap = new Map();
  let inBlock = false;
  for (const raw of text.split('\n')) {
    const line = stripGoComment(raw).trim();
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
    const line = stripHashComment(raw).trimEnd();
    const header = /^\s*\[\[?([^\]]+)\]\]?\s*$/.exec(line);
    if (header) {
      current = header[1].trim();
      if (!sections.has(current)) sections.set(current, []);
      if (line.trim().startsWith('[[')) sections.get(current)!.push('\u0000new-entry');
      continue;
    }
    let lines = sections.get(current);
    if (!lines) sections.set(current, (lines = []));
    lines.push(line);
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
    const line = raw.startsWith('#') ? '' : stripHashComment(raw).trim();
    if (!line || line.startsWith('-')) continue;
    pep508(line, map);
  }
  return map;
}

/**
 * The `key = [ … ]` arrays of a TOML section's text, in order: each key, and the text up to the first
 * `]` (an array may span lines). One pass: a key's `= [` is looked for once, and a missing `]` ends the
 * search (a lazy `[\s\S]*?\]` per key scanned to the end of the text again for every key).
 */
function tomlArrays(text: string): Array<{ key: string; items: string; lineStart: boolean }> {
  const out: Array<{ key: string; items: string; lineStart: boolean }> = [];
  let i = 0;
  while (i < text.length) {
    if (!keyCharAt(text, i)) {
      i++;
      continue;
    }
    const start = i;
    while (keyCharAt(text, i)) i++;
    let j = i;
    while (spaceAt(text, j)) j++;
    if (text[j] !== '=') continue;
    j++;
    while (spaceAt(text, j)) j++;
    if (text[j] !== '[') continue;
    const close = text.indexOf(']', j + 1);
    if (close < 0) break;
    // Whether only whitespace, with a line break, separates the key from the line before (or the start).
    let b = start;
    while (b > 0 && spaceAt(text, b - 1) && text[b - 1] !== '\n') b--;
    out.push({ key: text.slice(start, i), items: text.slice(j + 1, close), lineStart: b === 0 || text[b - 1] === '\n' });
    i = close + 1;
  }
  return out;
}

const quotedStrings = (items: string): string[] => [...items.matchAll(/"([^"]+)"|'([^']+)'/g)].map((s) => s[1] ?? s[2]);

function pyprojectToml(text: string): DependencyMap {
  const map: DependencyMap = new Map();
  const sections = tomlSections(text);
  // PEP 621: `dependencies = [ … ]` at the start of a line of [project].
  const deps = tomlArrays((sections.get('project') ?? []).join('\n')).find((a) => a.key === 'dependencies' && a.lineStart);
  if (deps) for (const s of quotedStrings(deps.items)) pep508(s, map);
  for (const [name, lines] of sections) {
    if (name === 'project.optional-dependencies' || name === 'dependency-groups') {
      for (const g of tomlArrays(lines.join('\n'))) for (const s of quotedStrings(g.items)) pep508(s, map, g.key);
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

/**
 * pubspec files through js-yaml (core schema: YAML 1.2 scalars, as `yaml` reads them), which stops at
 * the first error: `yaml` records one per token and words each, so 64 KiB of `"` took it 2.4 s and
 * 256 KiB over 20 s. Aliases are shared objects, and only the top-level entries are read.
 */
const loadYaml = (text: string): unknown => jsYaml.load(text, { schema: jsYaml.CORE_SCHEMA });

function pubspecYaml(text: string): DependencyMap {
  const doc = (loadYaml(text) ?? {}) as Record<string, unknown>;
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
  const doc = (loadYaml(text) ?? {}) as { packages?: Record<string, { version?: string; dependency?: string }> };
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
