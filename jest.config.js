/** Jest 30 on Node 20 cannot load the ESM-only @nestjs packages natively; @swc/jest transpiles them. */
const swcTransform = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
    },
    module: { type: 'commonjs' },
  },
];
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/e2e/'],
  transform: { '^.+\\.(t|j|mj)s$': swcTransform },
  transformIgnorePatterns: [
    '/node_modules/(?!(@nestjs|@octokit|universal-user-agent|before-after-hook|json-with-bigint|fast-content-type-parse|content-type|uuid|file-type|uint8array-extras|strtok3|token-types|@tokenizer|load-esm|openid-client|oauth4webapi|jose|oidc-provider)/)',
  ],
  testTimeout: 30000,
};
