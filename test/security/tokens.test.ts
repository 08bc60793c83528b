import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { LOCAL_OPERATOR } from '../../src/ledger';
import { ensureOwnerToken, OWNER_TOKEN_FILE } from '../../src/security/owner-token';
import { authenticate, parseToken } from '../../src/security/tokens';
import { hashToken } from '../../src/commands/issue-token';
import { ledgerFixture } from '../support/ledger-fixture';

const ROOT = path.resolve(__dirname, '../..');
const cli = (dataDir: string, ...args: string[]) => execFileSync(process.execPath, ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8' });

describe('bearer tokens (SPEC §16)', () => {
  it('carry 256 random bits, are stored only as sha256 hashes, and a replayed issue returns the same token', async () => {
    const fx = await ledgerFixture({ workspaceId: 'tok' });
    try {
      await fx.ledger.run('addMember', 'tok', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'agent:a', role: 'member' });
      const key = newUuidV7();
      const a = await fx.ledger.issueToken('tok', { ...LOCAL_OPERATOR, idempotencyKey: key }, { principal: 'agent:a', role: 'member' });
      const again = await fx.ledger.issueToken('tok', { ...LOCAL_OPERATOR, idempotencyKey: key }, { principal: 'agent:a', role: 'member' });
      expect(again.json).toBe(a.json);
      expect(again.replayed).toBe(true);
      const b = await fx.ledger.issueToken('tok', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'agent:a', role: 'member' });
      expect(b.token).not.toBe(a.token);
      const secret = a.token.split('_').slice(3).join('_');
      expect(Buffer.from(secret, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
      const log = JSON.stringify(await fx.events());
      expect(log).not.toContain(secret);
      expect(log).toContain(hashToken(a.token));
      const caller = await authenticate(fx.ledger, 'tok', a.token);
      expect([caller.principal, caller.role]).toEqual(['agent:a', 'member']);
      // One changed character is a different token.
      const tampered = a.token.slice(0, -1) + (a.token.endsWith('A') ? 'B' : 'A');
      await expect(authenticate(fx.ledger, 'tok', tampered)).rejects.toMatchObject({ code: 'unauthorized' });
      expect(parseToken('Bearer nonsense')).toBeNull();
    } finally {
      await fx.cleanup();
    }
  });

  it('first start creates an owner token file with mode 0600 once; later starts keep it', async () => {
    const fx = await ledgerFixture();
    try {
      const first = await ensureOwnerToken(fx.ledger);
      expect(first).toEqual({ file: path.join(fx.dataDir, OWNER_TOKEN_FILE), workspaceId: 'default', created: true });
      expect(fs.statSync(first.file).mode & 0o777).toBe(0o600);
      const token = fs.readFileSync(first.file, 'utf8').trim();
      expect((await authenticate(fx.ledger, 'default', token)).role).toBe('owner');
      const second = await ensureOwnerToken(fx.ledger);
      expect(second.created).toBe(false);
      expect(fs.readFileSync(first.file, 'utf8').trim()).toBe(token);
    } finally {
      await fx.cleanup();
    }
  });

  it('CLI: token create | list | revoke', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cli-tok-'));
    try {
      cli(dataDir, 'workspace', 'create', 'cli-ws');
      cli(dataDir, 'member', 'add', '--workspace', 'cli-ws', '--principal', 'agent:cli', '--role', 'viewer');
      const token = cli(dataDir, 'token', 'create', '--workspace', 'cli-ws', '--principal', 'agent:cli', '--role', 'viewer', '--label', 'ci bot').trim();
      expect(parseToken(token)).toEqual({ workspaceId: 'cli-ws', tokenId: expect.stringMatching(/^[0-9a-f]{16}$/) });
      const listed = JSON.parse(cli(dataDir, 'token', 'list', '--workspace', 'cli-ws', '--json'));
      expect(listed).toEqual([expect.objectContaining({ tokenId: parseToken(token)!.tokenId, principal: 'agent:cli', role: 'viewer', label: 'ci bot', revoked: false })]);
      expect(JSON.stringify(listed)).not.toContain(token);
      cli(dataDir, 'token', 'revoke', parseToken(token)!.tokenId, '--workspace', 'cli-ws');
      expect(JSON.parse(cli(dataDir, 'token', 'list', '--workspace', 'cli-ws', '--json'))[0].revoked).toBe(true);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
