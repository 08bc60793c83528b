// Lets plain `node` run the TypeScript sources directly (benchmarks, crash-test children, the CLI
// before `npm run build`): a require hook that transpiles .ts with @swc/core, the same transform
// jest uses, so decorators and their metadata behave exactly as in the tests and the build.
const swc = require('@swc/core');
const Module = require('node:module');
const fs = require('node:fs');

const options = {
  jsc: {
    target: 'es2022',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

if (!Module._extensions['.ts'] || !Module._extensions['.ts'].__reviewLedger) {
  const compile = function (module, filename) {
    const source = fs.readFileSync(filename, 'utf8');
    const { code } = swc.transformSync(source, { ...options, filename });
    module._compile(code, filename);
  };
  compile.__reviewLedger = true;
  Module._extensions['.ts'] = compile;
}
process.setSourceMapsEnabled?.(true);
