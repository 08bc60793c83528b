// The ESM-only dependencies load under jest (transformed by @swc/jest): a regression here breaks
// every suite that touches them.
test('ESM-only dependencies load under jest', async () => {
  const { Octokit } = await import('@octokit/rest');
  expect(typeof Octokit).toBe('function');
  const { NestFactory } = await import('@nestjs/core');
  expect(typeof NestFactory.create).toBe('function');
  // Sign-in (issue 43): the OpenID client the server uses, and the provider its tests run.
  const client = await import('openid-client');
  expect(typeof client.authorizationCodeGrant).toBe('function');
  const { default: Provider } = await import('oidc-provider');
  expect(typeof Provider).toBe('function');
});
