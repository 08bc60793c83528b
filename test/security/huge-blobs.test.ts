import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitRepo, MAX_OBJECT_BYTES } from '../../src/git/repo';

/**
 * A PR author controls file sizes. The blob reader held every byte of a blob however large (and
 * re-concatenated its buffer per chunk, quadratic in the size); a file over MAX_OBJECT_BYTES is now
 * skipped unread (null, as "unreadable") and the reader stays in step for the blobs that follow.
 */
describe('huge blobs in a repository', () => {
  let dir: string;
  let small: Buffer;
  let medium: Buffer;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-huge-'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
    git('init', '-q');
    small = Buffer.from('export const x = 1;\n');
    medium = randomBytes(3 * 1024 * 1024 + 17);
    fs.writeFileSync(path.join(dir, 'a.ts'), small);
    fs.writeFileSync(path.join(dir, 'm.bin'), medium);
    fs.writeFileSync(path.join(dir, 'huge.ts'), Buffer.alloc(MAX_OBJECT_BYTES + 1024 * 1024, 0x61));
    git('add', '.');
    git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'c');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a blob over the limit reads as null, and the reads around it stay exact', async () => {
    const repo = await GitRepo.open(dir);
    try {
      const [a, huge, m, again] = await Promise.all([repo.readFileAt('HEAD', 'a.ts'), repo.readFileAt('HEAD', 'huge.ts'), repo.readFileAt('HEAD', 'm.bin'), repo.readFileAt('HEAD', 'a.ts')]);
      expect(huge).toBeNull();
      expect(a?.equals(small)).toBe(true);
      expect(m?.equals(medium)).toBe(true);
      expect(again?.equals(small)).toBe(true);
      expect(await repo.readFileAt('HEAD', 'missing.ts')).toBeNull();
      expect((await repo.readFileAt('HEAD', 'a.ts'))?.equals(small)).toBe(true);
    } finally {
      repo.close();
    }
  });
});
