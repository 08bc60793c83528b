import * as fs from 'node:fs';
import { transformSync } from '@swc/core';

/**
 * pixelmatch 7 is an ESM-only package. Node 20.20 `require`s it natively (the server, the CLI, the
 * bench and our worker threads all do), but jest 30 on Node 20 cannot, and jest.config.js only
 * transpiles the @nestjs packages under node_modules. Until pixelmatch is added to that allow-list,
 * tests importing the diff engine in-process load the REAL pixelmatch source, transpiled to CommonJS
 * with swc (the transform jest already uses) — the same code, not a stand-in.
 */
function loadEsmAsCommonJs(file: string): unknown {
  const { code } = transformSync(fs.readFileSync(file, 'utf8'), { filename: file, module: { type: 'commonjs' }, jsc: { target: 'es2022' } });
  const module = { exports: {} as Record<string, unknown> };
  new Function('exports', 'module', code)(module.exports, module);
  return module.exports;
}

jest.mock('pixelmatch', () => loadEsmAsCommonJs(require.resolve('pixelmatch')));
