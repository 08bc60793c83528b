#!/usr/bin/env node
'use strict';
// Builds the grammar wasm files the code graph loads for languages whose npm package ships C sources but
// no wasm that loads in web-tree-sitter 0.27 (SPEC §8.1): Dart, Kotlin, Swift. Reproducible: each grammar
// is pinned by package version and tarball integrity; the tarball comes from the registry through `npm pack`,
// its src/parser.c (+ scanner.c) is compiled by emscripten's emcc as a tree-sitter side module, and the
// output's SHA-256 must equal the pinned hash. The outputs are committed under src/codegraph/languages/grammars/ with
// each grammar's licence, so `npm ci` needs no compiler.
//
//   node tools/build-grammars.js           build, check the hashes, write src/codegraph/languages/grammars/
//   node tools/build-grammars.js --check   build in a temp dir and compare with the committed files only
//   … --only dart                          one grammar (Swift's parser.c takes minutes to compile)
//
// Needs emcc on PATH (Debian: `apt-get install emscripten`, which is emcc 3.1.6 — the pinned hashes are of
// that compiler's output; another emcc version gives other bytes: the script then says so and writes nothing).
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const outDir = path.join(root, 'src', 'codegraph', 'languages', 'grammars');
const EMCC_VERSION = '3.1.6';

/**
 * name → pinned source package, its tarball integrity and the expected wasm hash, in
 * src/codegraph/languages/grammars/pins.json (also read by src/codegraph/languages/language-docs.ts for the language table).
 * Dart is @sengac/tree-sitter-dart, the maintained fork of tree-sitter-dart (whose last registry release,
 * 1.0.0 of 2024-12, predates Dart 3's records, patterns, class modifiers and extension types): on
 * widgetbook/widgetbook 6 of 362 files keep parse errors with it, against 22 with 1.0.0, and lang-dart.ts
 * repairs those 6 (`library;`, empty statements).
 */
const GRAMMARS = JSON.parse(fs.readFileSync(path.join(outDir, 'pins.json'), 'utf8'));

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

function emccVersion() {
  try {
    const out = execFileSync('emcc', ['--version'], { encoding: 'utf8' });
    return /(\d+\.\d+\.\d+)/.exec(out)?.[1];
  } catch (e) {
    throw new Error(`emcc not found on PATH (${e.code ?? e.message}): install emscripten ${EMCC_VERSION} (Debian: apt-get install emscripten)`);
  }
}

function fetchSource(g, work) {
  const packed = JSON.parse(execFileSync('npm', ['pack', `${g.pkg}@${g.version}`, '--json', '--pack-destination', work], { encoding: 'utf8', cwd: work }));
  const info = packed[0];
  if (g.integrity && info.integrity !== g.integrity) throw new Error(`${g.pkg}@${g.version}: tarball integrity ${info.integrity} is not the pinned ${g.integrity}`);
  const dir = path.join(work, g.language);
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['xzf', path.join(work, info.filename), '-C', dir, '--strip-components=1']);
  return { dir, integrity: info.integrity };
}

function compile(g, srcDir, outFile) {
  const sources = ['parser.c', 'scanner.c'].map((f) => path.join(srcDir, 'src', f)).filter((f) => fs.existsSync(f));
  if (!sources.length) throw new Error(`${g.pkg}@${g.version}: no src/parser.c in the package`);
  // The flags `tree-sitter build --wasm` passes to emcc for a side module.
  execFileSync('emcc', [
    '-o', outFile, '-Os', '-fno-exceptions', '-fvisibility=hidden', '-s', 'WASM=1', '-s', 'SIDE_MODULE=2',
    '-s', `EXPORTED_FUNCTIONS=["_${g.symbol}"]`, '-I', path.join(srcDir, 'src'), ...sources,
  ], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, SOURCE_DATE_EPOCH: '0' } });
}

function main() {
  const check = process.argv.includes('--check');
  const version = emccVersion();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'grammars-'));
  let failed = false;
  try {
    fs.mkdirSync(outDir, { recursive: true });
    const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
    for (const g of GRAMMARS.filter((x) => !only || x.language === only)) {
      const { dir, integrity } = fetchSource(g, work);
      const built = path.join(work, `tree-sitter-${g.language}.wasm`);
      compile(g, dir, built);
      const hash = sha256(built);
      const target = path.join(outDir, `tree-sitter-${g.language}.wasm`);
      if (!g.sha256 || !g.integrity) {
        console.log(`${g.language}: unpinned — integrity ${integrity}, wasm sha256 ${hash} (emcc ${version}); pin them in tools/build-grammars.js`);
        failed = true;
        continue;
      }
      if (hash !== g.sha256) {
        console.error(`${g.language}: built wasm sha256 ${hash} is not the pinned ${g.sha256} (emcc ${version}; the pins are of emcc ${EMCC_VERSION})`);
        failed = true;
        continue;
      }
      if (check) {
        const committed = fs.existsSync(target) ? sha256(target) : 'missing';
        if (committed !== hash) {
          console.error(`${g.language}: committed ${path.relative(root, target)} (${committed}) differs from the build (${hash})`);
          failed = true;
        } else console.log(`${g.language}: ok ${hash}`);
        continue;
      }
      fs.copyFileSync(built, target);
      fs.copyFileSync(path.join(dir, 'LICENSE'), path.join(outDir, `LICENSE.${g.language}`));
      console.log(`${g.language}: wrote ${path.relative(root, target)} ${hash} (${g.pkg}@${g.version})`);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  if (failed) process.exit(1);
}

main();
