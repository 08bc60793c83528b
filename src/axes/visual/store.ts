import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../stores/private-files';
import { sha256 } from './diff';

const HASH = /^[0-9a-f]{64}$/;

function imagePath(workspaceDir: string, hash: string): string {
  return path.join(workspaceDir, 'visual', `${hash}.png`);
}

/**
 * Stores a diff image under its own sha256 in `<workspaceDir>/visual/` and returns the hash. Written to
 * a temporary file and renamed into place, so a reader never sees a half-written image; an existing
 * file with that name already has exactly these bytes, so it is left alone.
 */
export async function writeDiffImage(workspaceDir: string, png: Uint8Array): Promise<string> {
  const hash = sha256(png);
  const target = imagePath(workspaceDir, hash);
  try {
    await fs.access(target);
    return hash;
  } catch {
    /* not stored yet */
  }
  await fs.mkdir(path.dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
  const temp = `${target}.${randomUUID()}.tmp`;
  try {
    await fs.writeFile(temp, png, { mode: PRIVATE_FILE_MODE });
    await fs.rename(temp, target);
  } finally {
    await fs.rm(temp, { force: true });
  }
  return hash;
}

/** The stored diff image with this hash, or null when there is none or the hash is not a sha256. */
export async function readDiffImage(workspaceDir: string, hash: string): Promise<Buffer | null> {
  // Validated before touching the file system: the hash comes from a URL.
  if (typeof hash !== 'string' || !HASH.test(hash)) return null;
  try {
    return await fs.readFile(imagePath(workspaceDir, hash));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
