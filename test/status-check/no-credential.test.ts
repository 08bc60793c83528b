import { collect } from '../../src/events/store/port';
import { newUuidV7 } from '../../src/events/ids';
import { GitFixture } from '../support/git-fixture';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';

/**
 * Opting a repo in to the verdict status check on a server with no GitHub credential (no client
 * registered, no token or App in the environment) is refused, naming the field, and writes nothing
 * (issue 38: it succeeded silently, and no status was ever posted). Opting out needs no credential.
 */
const CREDENTIAL_VARS = ['REVIEW_LEDGER_GITHUB_TOKEN', 'GITHUB_TOKEN', 'REVIEW_LEDGER_GITHUB_APP_ID'];

describe('setVerdictStatusCheck without a GitHub credential', () => {
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    for (const k of CREDENTIAL_VARS) {
      saved[k] = process.env[k];
      delete process.env[k];
    }
  });
  afterAll(() => {
    for (const k of CREDENTIAL_VARS) if (saved[k] !== undefined) process.env[k] = saved[k];
  });

  it('refuses to opt in (github_not_configured on `enabled`), writes nothing, and lets an opt-out through', async () => {
    const fx = await ledgerFixture({ workspaceId: 'acme' });
    const repo = new GitFixture('rl-status-nocred-');
    try {
      repo.git('remote', 'add', 'origin', 'https://github.com/acme/shop.git');
      repo.write('a.ts', 'export const a = 1;\n');
      repo.commit('base');
      await fx.ledger.run('registerRepo', 'acme', { ...OWNER, idempotencyKey: newUuidV7() }, { repoId: 'shop', path: repo.dir });
      const before = (await fx.events()).length;
      const refused = fx.ledger.run('setVerdictStatusCheck', 'acme', { ...OWNER, idempotencyKey: newUuidV7() }, { repoId: 'shop', enabled: true });
      await expect(refused).rejects.toMatchObject({ code: 'github_not_configured', details: { field: 'enabled' } });
      await expect(refused).rejects.toThrow(/^enabled: this server has no GitHub credential.*REVIEW_LEDGER_GITHUB_TOKEN/);
      expect((await fx.events()).length).toBe(before);
      const off = await fx.ledger.run('setVerdictStatusCheck', 'acme', { ...OWNER, idempotencyKey: newUuidV7() }, { repoId: 'shop', enabled: false });
      expect(off.response.result).toEqual({ unchanged: true });
      const stream = await collect((await fx.ledger.workspace('acme')).store.readStream('repo-shop'));
      expect(stream.map((e) => e.type)).toEqual(['RepoRegistered']);
    } finally {
      await fx.cleanup();
      repo.cleanup();
    }
  });
});
