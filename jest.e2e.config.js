/** The browser suite (`npm run test:e2e`): same transform as jest.config.js, only test/e2e. */
const base = require('./jest.config.js');
module.exports = {
  ...base,
  roots: ['<rootDir>/test/e2e'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 60000,
};
