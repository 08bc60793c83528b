import { githubClientFactoryFromEnv } from '../../src/publish/github-client';
import { forgeFromRemote } from '../../src/compute/streams';

/**
 * SPEC §16 "the GitHub credential goes only to github.com or operator-configured Enterprise hosts":
 * the host is matched exactly, never by "contains github".
 */
describe('the GitHub credential goes only to github.com or configured Enterprise hosts', () => {
  const env = { REVIEW_LEDGER_GITHUB_TOKEN: 'ghp_not-a-real-token' };

  it('a look-alike host is not GitHub: its remote is not a github forge, and no client is built for it', () => {
    for (const url of ['https://github.evil.example/acme/widgets.git', 'git@mygithub.example:acme/widgets.git', 'https://github.com.evil.example/acme/widgets']) {
      expect([url, forgeFromRemote(url)?.kind]).toEqual([url, undefined]);
    }
    const factory = githubClientFactoryFromEnv(env);
    expect(() => factory({ kind: 'github', owner: 'acme', name: 'widgets', url: 'https://github.evil.example/acme/widgets' })).toThrow(
      expect.objectContaining({ code: 'github_host_not_allowed' }),
    );
  });

  it('github.com (https, ssh and scp-like remotes) stays GitHub', () => {
    for (const url of ['https://github.com/acme/widgets.git', 'ssh://git@github.com/acme/widgets.git', 'git@github.com:acme/widgets.git']) {
      expect(forgeFromRemote(url)).toMatchObject({ kind: 'github', owner: 'acme', name: 'widgets', url: 'https://github.com/acme/widgets' });
    }
    expect(() => githubClientFactoryFromEnv(env)({ kind: 'github', owner: 'acme', name: 'widgets', url: 'https://github.com/acme/widgets' })).not.toThrow();
  });

  it('an Enterprise host counts only when the operator configured it, by exact host', () => {
    const url = 'https://ghe.corp.example/acme/widgets.git';
    expect(forgeFromRemote(url)).toBeUndefined();
    expect(forgeFromRemote(url, ['ghe.corp.example'])).toMatchObject({ kind: 'github', url: 'https://ghe.corp.example/acme/widgets' });
    expect(forgeFromRemote('https://ghe.corp.example.evil/acme/widgets', ['ghe.corp.example'])).toBeUndefined();
    const forge = { kind: 'github' as const, owner: 'acme', name: 'widgets', url: 'https://ghe.corp.example/acme/widgets' };
    expect(() => githubClientFactoryFromEnv(env)(forge)).toThrow(expect.objectContaining({ code: 'github_host_not_allowed' }));
    expect(() => githubClientFactoryFromEnv(env, ['ghe.corp.example'])(forge)).not.toThrow();
  });
});
