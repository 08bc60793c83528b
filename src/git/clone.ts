import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DomainError } from '../domain-error';

/** A clone that takes longer is stopped (a forge that trickles bytes must not hold a request forever). */
const CLONE_TIMEOUT_MS = 10 * 60_000;

/** Bytes of the files under `dir` (what a clone occupies); files vanishing mid-walk are skipped. */
export async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  const walk = async (d: string): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else total += await fs.promises.lstat(p).then((st) => st.size, () => 0);
    }
  };
  await walk(dir);
  return total;
}

/** How often a running clone's size is measured against what it may still take. */
const CLONE_SIZE_CHECK_MS = 250;

/**
 * Runs `git <args>` cloning into `target`, measuring the clone as it grows: past `budgetBytes` git is
 * killed and the partial clone removed (`overBudget()`); any other failure removes it too (`failed(why)`).
 */
export function cloneWithin(args: string[], target: string, budgetBytes: number, failed: (why: string) => DomainError, overBudget: () => DomainError): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let over = false;
    const child = execFile(
      'git',
      args,
      { timeout: CLONE_TIMEOUT_MS, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', GIT_ASKPASS: '/bin/false', SSH_ASKPASS: '/bin/false' } },
      async (err, _stdout, stderr) => {
        clearInterval(timer);
        // A clone that finished between two measurements is measured once more.
        if (!err && !over && (await dirBytes(target)) > budgetBytes) over = true;
        if (!err && !over) return resolve();
        fs.rmSync(target, { recursive: true, force: true });
        reject(over ? overBudget() : failed(String(stderr || err!.message)));
      },
    );
    let measuring = false;
    const timer = setInterval(() => {
      if (measuring || over) return;
      measuring = true;
      void dirBytes(target).then((bytes) => {
        measuring = false;
        if (bytes > budgetBytes && !over) {
          over = true;
          child.kill('SIGKILL');
        }
      });
    }, CLONE_SIZE_CHECK_MS);
  });
}
