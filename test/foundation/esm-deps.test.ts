// The ESM-only dependencies load under jest (transformed by @swc/jest): a regression here breaks
// every suite that touches them.
test('ESM-only dependencies load under jest', async () => {
  const { Octokit } = await import('@octokit/rest');
  expect(typeof Octokit).toBe('function');
  const { NestFactory } = await import('@nestjs/core');
  expect(typeof NestFactory.create).toBe('function');
});
