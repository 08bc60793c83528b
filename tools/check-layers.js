#!/usr/bin/env node
/**
 * The import graph of src/ held against the declared layer order.
 *
 * Every top-level unit of src/ (a folder, or a file standing directly in src/) belongs to exactly one
 * layer; a file may import from its own layer and from any layer below it. The check fails on
 *  - a unit that no layer names (a new folder must be placed on purpose),
 *  - a cycle between files, or between the folders of any one directory (src/*, src/axes/*, …),
 *  - an import that runs up the layer order and is not one of the few ALLOWED_UPWARD exceptions,
 *  - more than MAX_UPWARD exceptions, or an exception that no longer exists (so the list only shrinks).
 * Type-only imports count: a type that two layers need lives in the lower one.
 *
 * Run: `node tools/check-layers.js` (prints the report; exit code 1 on a failure). The Jest test
 * test/architecture/layers.test.ts runs the same analysis, so CI keeps it.
 */
const fs = require('node:fs');
const path = require('node:path');

/** Lowest first. Within a layer any import is allowed as long as it makes no cycle. */
const LAYERS = [
  { name: 'foundation', units: ['errors', 'domain-error.ts', 'operator-config.ts', 'slots.ts', 'lazy-abort.ts'] },
  { name: 'events', units: ['events'] },
  { name: 'infrastructure', units: ['stores', 'git', 'workspaces', 'config.ts', 'job-progress'] },
  {
    name: 'domain',
    units: ['rules', 'dependencies', 'codegraph', 'cohorts', 'axes', 'review', 'compute', 'context', 'review-progress', 'publish'],
  },
  { name: 'application', units: ['commands', 'readmodels', 'audit', 'local-operator.ts', 'ledger.ts'] },
  { name: 'services', units: ['security', 'cqrs', 'status-check'] },
  { name: 'transports', units: ['rpc', 'mcp', 'webhooks', 'web', 'demo'] },
  { name: 'entry', units: ['server', 'cli'] },
];

/**
 * One line per unit: what lives there. The README's map of units is rendered from LAYERS and these notes
 * (`node tools/check-layers.js --readme` rewrites it; test/architecture/layers.test.ts keeps it current).
 */
const UNIT_NOTES = {
  errors: 'the registry of error codes with their HTTP and JSON-RPC codes',
  'domain-error.ts': 'the one error type every layer throws',
  'operator-config.ts': 'the operator config file',
  'slots.ts': 'typed slots for the ledger services and workspace caches',
  'lazy-abort.ts': 'an AbortController made on first use (hot paths)',
  events: 'the event catalogue (zod), envelope, streams, ids, the hash chain, the store port',
  stores: 'the event store adapters: SQLite, PostgreSQL, KurrentDB',
  git: 'real git: commits, diffs and trees, confined to their folders',
  workspaces: 'the workspace catalogue, store handles within a file budget, the fold cache',
  'config.ts': 'the server configuration from flags and environment',
  'job-progress': 'progress of long jobs; never in the log',
  rules: 'the versioned rules document',
  dependencies: 'dependency manifests and their diffs',
  codegraph: 'languages, indexing, the import and type graph, blast radius',
  cohorts: 'cohort formation: the registry of formation signals, one file per signal, formCohorts',
  axes: 'the api-contract and visual axes',
  review: 'fingerprints, consensus, rounds, levels, the verdict',
  compute: 'computing a PR review from git',
  context: 'context packs and history clues',
  'review-progress': 'cohort review progress that survives rebases',
  publish: 'publishing a review to GitHub',
  commands: 'the command kernel; one file per command (input, access, decide)',
  readmodels: 'the read side: queries/ (pure folds, the query registry), stored/ (checkpointed tables)',
  audit: 'signed checkpoints, verify, export, witness',
  'local-operator.ts': 'the principal the local CLI acts as',
  'ledger.ts': 'the entry point every transport calls',
  security: 'tokens, sessions, sign-in, host checks',
  cqrs: '@nestjs/cqrs buses; the EventBus fed from the store',
  'status-check': 'the verdict as a GitHub status',
  rpc: 'JSON-RPC over HTTP and WebSocket, watch, SSE',
  mcp: 'the MCP tools for agents',
  webhooks: 'GitHub webhooks, auto-recompute',
  web: 'the Review page and sign-in',
  demo: 'the live demo review',
  server: 'the NestJS composition root',
  cli: 'the command line',
};

/** The README's map: one row per layer, lowest last (as a reader meets them from the entry points down). */
function renderUnitMap() {
  const rows = ['| layer | unit | what lives there |', '|---|---|---|'];
  for (const layer of [...LAYERS].reverse()) {
    layer.units.forEach((u, i) => rows.push(`| ${i === 0 ? layer.name : ''} | \`${u.endsWith('.ts') ? `src/${u}` : `src/${u}/`}\` | ${UNIT_NOTES[u] ?? ''} |`));
  }
  return rows.join('\n');
}

const MAP_BEGIN = '<!-- units:begin (generated from tools/check-layers.js: node tools/check-layers.js --readme; do not edit) -->';
const MAP_END = '<!-- units:end -->';

/** `text` with the block between the markers replaced by the current map; throws when a marker is missing. */
function withUnitMap(text) {
  const a = text.indexOf(MAP_BEGIN), b = text.indexOf(MAP_END);
  if (a < 0 || b < a) throw new Error('README has no units:begin / units:end markers');
  return text.slice(0, a + MAP_BEGIN.length) + '\n' + renderUnitMap() + '\n' + text.slice(b);
}

/**
 * IO stays in the folders that own it: a database driver, a child process or a network socket is imported
 * only under its owners (paths relative to src/). IO_EXCEPTIONS lists the files that still do it elsewhere,
 * each with its reason; like ALLOWED_UPWARD the list only shrinks (a stale entry is a failure).
 */
const IO_KINDS = [
  { kind: 'database', modules: ['better-sqlite3', 'pg', '@eventstore/db-client'], owners: ['stores/'] },
  { kind: 'child process', modules: ['child_process', 'node:child_process'], owners: ['git/', 'axes/visual/harness/'] },
  {
    kind: 'network',
    modules: ['net', 'node:net', 'http', 'node:http', 'https', 'node:https', 'tls', 'node:tls', 'dgram', 'node:dgram', 'ws', 'undici'],
    owners: ['server/', 'rpc/', 'mcp/', 'web/', 'webhooks/', 'security/', 'demo/'],
  },
];

const IO_EXCEPTIONS = [];

/**
 * Whether `text` imports a value from `spec`, not only types: `import type …`, `export type …` and
 * `import('spec').Type` name a driver's types without loading it, which is not IO.
 */
function importsValue(text, spec) {
  const q = spec.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const forms = [
    new RegExp(`^\\s*import\\s+(?!type\\b)[^;]*?from\\s*['"]${q}['"]`, 'm'),
    new RegExp(`^\\s*import\\s*['"]${q}['"]`, 'm'),
    new RegExp(`^\\s*export\\s+(?!type\\b)[^;]*?from\\s*['"]${q}['"]`, 'm'),
    new RegExp(`require\\(\\s*['"]${q}['"]\\s*\\)`),
    new RegExp(`import\\(\\s*['"]${q}['"]\\s*\\)(?!\\.[A-Z])`),
  ];
  return forms.some((re) => re.test(text));
}

/** Every import of an IO module outside its owners, as { file, kind, module }. */
function ioImports(root) {
  const srcDir = path.join(root, 'src');
  const found = [];
  for (const abs of listSources(srcDir).sort()) {
    const rel = path.relative(srcDir, abs).split(path.sep).join('/');
    const text = fs.readFileSync(abs, 'utf8');
    for (const spec of new Set(moduleSpecifiers(text))) {
      const io = IO_KINDS.find((k) => k.modules.includes(spec));
      if (io && !io.owners.some((o) => rel.startsWith(o)) && importsValue(text, spec)) found.push({ file: `src/${rel}`, kind: io.kind, module: spec });
    }
  }
  return found;
}

/** Upward imports that are kept on purpose, each with its reason (file -> file). */
const ALLOWED_UPWARD = [];
const MAX_UPWARD = 5;

function listSources(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...listSources(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function resolveImport(fromAbs, spec) {
  if (!spec.startsWith('.')) return null;
  const base = path.resolve(path.dirname(fromAbs), spec).replace(/\.js$/, '');
  for (const c of [base + '.ts', path.join(base, 'index.ts'), base]) {
    if (c.endsWith('.ts') && fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  }
  return null;
}

/**
 * The module specifiers a file names: `import … from 'x'`, `import 'x'`, `export … from 'x'`,
 * `import('x')` (also in type positions) and `require('x')`. A small lexer skips comments, template
 * literals and regular expressions, so an import-shaped line inside a string is not taken for one.
 */
function moduleSpecifiers(text) {
  const tokens = []; // { t: 'id' | 'str' | 'punct', v }
  let i = 0;
  const n = text.length;
  const prevAllowsRegex = () => {
    const p = tokens[tokens.length - 1];
    if (!p) return true;
    if (p.t === 'id') return ['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await'].includes(p.v);
    if (p.t === 'str') return false;
    return !(p.v === ')' || p.v === ']' || p.v === '}');
  };
  const skipTemplate = () => {
    // at the opening backtick; returns after the closing one, skipping nested ${ … } expressions roughly
    i++;
    while (i < n && text[i] !== '`') {
      if (text[i] === '\\') { i += 2; continue; }
      if (text[i] === '$' && text[i + 1] === '{') {
        let depth = 1;
        i += 2;
        while (i < n && depth > 0) {
          const c = text[i];
          if (c === '`') { skipTemplate(); continue; }
          if (c === "'" || c === '"') { readString(c); continue; }
          if (c === '{') depth++;
          else if (c === '}') depth--;
          i++;
        }
        continue;
      }
      i++;
    }
    i++;
  };
  const readString = (q) => {
    let v = '';
    i++;
    while (i < n && text[i] !== q && text[i] !== '\n') {
      if (text[i] === '\\') { v += text[i + 1]; i += 2; continue; }
      v += text[i++];
    }
    i++;
    return v;
  };
  while (i < n) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') { while (i < n && text[i] !== '\n') i++; continue; }
    if (c === '/' && text[i + 1] === '*') { const e = text.indexOf('*/', i + 2); i = e < 0 ? n : e + 2; continue; }
    if (c === "'" || c === '"') { tokens.push({ t: 'str', v: readString(c) }); continue; }
    if (c === '`') { skipTemplate(); tokens.push({ t: 'str', v: null }); continue; }
    if (c === '/' && prevAllowsRegex()) {
      i++;
      let inClass = false;
      while (i < n && text[i] !== '\n') {
        if (text[i] === '\\') { i += 2; continue; }
        if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        else if (text[i] === '/' && !inClass) break;
        i++;
      }
      i++;
      while (i < n && /[a-z]/i.test(text[i])) i++;
      tokens.push({ t: 'str', v: null });
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < n && /[\w$]/.test(text[j])) j++;
      tokens.push({ t: 'id', v: text.slice(i, j) });
      i = j;
      continue;
    }
    if (/\s/.test(c)) { i++; continue; }
    tokens.push({ t: 'punct', v: c });
    i++;
  }
  const specs = [];
  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k];
    const prev = tokens[k - 1];
    if (tok.t !== 'id' || (prev && prev.t === 'punct' && prev.v === '.')) continue;
    const next = tokens[k + 1];
    if ((tok.v === 'import' || tok.v === 'require') && next && next.v === '(' && tokens[k + 2] && tokens[k + 2].t === 'str') {
      if (tokens[k + 2].v) specs.push(tokens[k + 2].v);
      continue;
    }
    if (tok.v === 'import' && next && next.t === 'str' && next.v) { specs.push(next.v); continue; }
    if (tok.v === 'import' || tok.v === 'export') {
      // `import|export [type] [X,] [{ … } | * as y] from 'x'`: anything else ends the look-ahead
      for (let m = k + 1; m < tokens.length; m++) {
        const t = tokens[m];
        if (t.t === 'id' && t.v === 'from') {
          if (tokens[m + 1] && tokens[m + 1].t === 'str' && tokens[m + 1].v) specs.push(tokens[m + 1].v);
          break;
        }
        if (t.t === 'punct' && t.v === '{') {
          while (m < tokens.length && tokens[m].v !== '}') m++;
          continue;
        }
        if (t.t === 'punct' && (t.v === '*' || t.v === ',')) continue;
        if (t.t === 'id' && !['function', 'class', 'const', 'let', 'var', 'interface', 'enum', 'abstract', 'declare', 'namespace', 'default', 'async'].includes(t.v)) continue;
        break;
      }
    }
  }
  return specs;
}

/** file -> files it imports. */
function readGraph(root) {
  const srcDir = path.join(root, 'src');
  const files = listSources(srcDir).sort();
  const graph = new Map();
  for (const abs of files) {
    const targets = new Set();
    for (const spec of moduleSpecifiers(fs.readFileSync(abs, 'utf8'))) {
      const target = resolveImport(abs, spec);
      if (target && target !== abs) targets.add(path.relative(root, target).split(path.sep).join('/'));
    }
    graph.set(path.relative(root, abs).split(path.sep).join('/'), [...targets].sort());
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one member (or a self-loop). */
function cycles(nodes, edgesOf) {
  let index = 0;
  const idx = new Map(), low = new Map(), onStack = new Set(), stack = [], out = [];
  const visit = (v) => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); onStack.add(v);
    for (const w of edgesOf(v)) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of nodes) if (!idx.has(v)) visit(v);
  return out;
}

/** Cycles between the children of every directory: src/*, src/axes/*, src/axes/visual/*, … */
function folderCycles(graph) {
  const dirs = new Set();
  for (const f of graph.keys()) {
    const parts = f.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  const out = [];
  for (const dir of [...dirs].sort()) {
    const childOf = (f) => (f.startsWith(dir + '/') ? dir + '/' + f.slice(dir.length + 1).split('/')[0] : null);
    const edges = new Map();
    for (const [from, tos] of graph) {
      const a = childOf(from);
      if (!a) continue;
      for (const to of tos) {
        const b = childOf(to);
        if (!b || a === b) continue;
        if (!edges.has(a)) edges.set(a, new Set());
        edges.get(a).add(b);
      }
    }
    const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((s) => [...s])]);
    // A folder cycle needs at least one folder in it; a cycle of plain files shows as a file cycle.
    for (const c of cycles([...nodes].sort(), (v) => [...(edges.get(v) ?? [])].sort())) {
      if (c.some((u) => !u.endsWith('.ts'))) out.push({ dir, members: c });
    }
  }
  return out;
}

function unitOf(file) {
  return file.split('/')[1];
}

function analyse(root = path.resolve(__dirname, '..')) {
  const graph = readGraph(root);
  const layerOf = new Map();
  LAYERS.forEach((l, i) => l.units.forEach((u) => layerOf.set(u, i)));
  const units = [...new Set([...graph.keys()].map(unitOf))].sort();
  const unplaced = units.filter((u) => !layerOf.has(u));
  const declaredButMissing = [...layerOf.keys()].filter((u) => !units.includes(u));

  const fileCycles = cycles([...graph.keys()], (v) => graph.get(v) ?? []);
  const upward = [];
  for (const [from, tos] of graph) {
    for (const to of tos) {
      const a = layerOf.get(unitOf(from)), b = layerOf.get(unitOf(to));
      if (a !== undefined && b !== undefined && b > a) {
        upward.push({ from, to, fromLayer: LAYERS[a].name, toLayer: LAYERS[b].name });
      }
    }
  }
  const allowedKey = new Set(ALLOWED_UPWARD.map((u) => `${u.from} -> ${u.to}`));
  const unexpectedUpward = upward.filter((u) => !allowedKey.has(`${u.from} -> ${u.to}`));
  const staleAllowed = ALLOWED_UPWARD.filter((u) => !upward.some((x) => x.from === u.from && x.to === u.to));
  const failures = [];
  if (unplaced.length) failures.push(`units in no layer: ${unplaced.join(', ')}`);
  if (declaredButMissing.length) failures.push(`layers name units that do not exist: ${declaredButMissing.join(', ')}`);
  for (const c of fileCycles) failures.push(`file cycle: ${c.join(' -> ')}`);
  const dirCycles = folderCycles(graph);
  for (const c of dirCycles) failures.push(`folder cycle in ${c.dir}/: ${c.members.map((m) => m.slice(c.dir.length + 1)).join(', ')}`);
  for (const u of unexpectedUpward) failures.push(`upward import (${u.fromLayer} -> ${u.toLayer}): ${u.from} -> ${u.to}`);
  if (ALLOWED_UPWARD.length > MAX_UPWARD) failures.push(`${ALLOWED_UPWARD.length} allowed upward imports; at most ${MAX_UPWARD}`);
  for (const u of staleAllowed) failures.push(`allowed upward import no longer exists (remove it): ${u.from} -> ${u.to}`);
  const io = ioImports(root);
  const excused = new Set(IO_EXCEPTIONS.map((e) => `${e.file} ${e.kind}`));
  for (const x of io) if (!excused.has(`${x.file} ${x.kind}`)) failures.push(`${x.kind} import outside its owners (${IO_KINDS.find((k) => k.kind === x.kind).owners.join(', ')}): ${x.file} imports ${x.module}`);
  // (A listed file that does not exist is another tree's, e.g. a test's synthetic one: the repository test checks that every listed file exists.)
  for (const e of IO_EXCEPTIONS) if (fs.existsSync(path.join(root, e.file)) && !io.some((x) => x.file === e.file && x.kind === e.kind)) failures.push(`IO exception no longer needed (remove it): ${e.file} (${e.kind})`);
  const edgeCount = [...graph.values()].reduce((n, t) => n + t.length, 0);
  return { files: graph.size, edges: edgeCount, graph, fileCycles, folderCycles: dirCycles, upward, io, failures };
}

module.exports = { LAYERS, UNIT_NOTES, IO_KINDS, IO_EXCEPTIONS, ioImports, ALLOWED_UPWARD, MAX_UPWARD, analyse, cycles, moduleSpecifiers, renderUnitMap, withUnitMap };

if (require.main === module && process.argv.includes('--readme')) {
  const readme = path.resolve(__dirname, '..', 'README.md');
  fs.writeFileSync(readme, withUnitMap(fs.readFileSync(readme, 'utf8')));
  console.log('README.md: map of units rewritten');
} else if (require.main === module) {
  const r = analyse();
  console.log(`${r.files} files, ${r.edges} imports; ${r.fileCycles.length} file cycles, ${r.folderCycles.length} folder cycles, ${r.upward.length} upward imports (at most ${MAX_UPWARD} allowed); ${r.io.length} IO imports outside their owners (${IO_EXCEPTIONS.length} listed exceptions)`);
  for (const f of r.failures) console.log(`  ${f}`);
  process.exitCode = r.failures.length ? 1 : 0;
}
