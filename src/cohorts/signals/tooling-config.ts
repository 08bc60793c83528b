import { baseName } from '../cite';
import { toolingConfigPairs } from '../evidence/pairing';
import type { SignalDef } from '../types';

/** Tooling configuration files of one directory (evidence/pairing.ts `toolingConfigPairs`). Measured: earned its place on ofetch, neutral on seven others. */
export const toolingConfig: SignalDef = {
  id: 'tooling-config',
  stage: 'join',
  default: true,
  measured: 'ofetch mean 0.933 → 0.967; seven others unchanged',
  joins: 'changed tooling configuration files of one directory (a bundler or test runner config: they change together when the toolchain does)',
  evidence: 'tooling configuration of one directory: build.config.ts and vitest.config.ts',
  label: 'tooling configuration of one directory',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ semantic, join }) => {
    for (const [a, b] of toolingConfigPairs(semantic.map((f) => f.path))) join(a, b, 'tooling-config', `${baseName(a)} and ${baseName(b)}`);
  },
};
