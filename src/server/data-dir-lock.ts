import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../domain-error';

/**
 * One server per SQLite data dir. Two servers on one dir would each fold and append on their own
 * (SQLite serializes the writes, but subscriptions, checkpoint schedules and in-memory indexes would
 * diverge without a word), so the second refuses. The lock is a file holding the owner's pid, created
 * with O_EXCL; a lock whose pid no longer runs (a killed server) is stale and taken over.
 */
export const LOCK_FILE = 'server.lock';

/** Locks held by this process, so a second server in the same process is refused too. */
const held = new Set<string>();
let exitHook = false;

/** A process that exits without close() (`process.exit`: a second SIGTERM while `serve` drains) leaves no lock behind. */
function releaseAllOnExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const file of held) if (readOwner(file)?.pid === process.pid) fs.rmSync(file, { force: true });
  });
}

export interface DataDirLock {
  readonly file: string;
  release(): void;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(file: string): { pid: number; since?: string } | null {
  try {
    const o = JSON.parse(fs.readFileSync(file, 'utf8')) as { pid?: unknown; since?: unknown };
    return Number.isSafeInteger(o.pid) ? { pid: o.pid as number, since: typeof o.since === 'string' ? o.since : undefined } : null;
  } catch {
    return null;
  }
}

export function lockDataDir(dataDir: string, note: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): DataDirLock {
  const dir = path.resolve(dataDir);
  const file = path.join(dir, LOCK_FILE);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const body = JSON.stringify({ pid: process.pid, since: new Date().toISOString() });
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, body, { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw refused(dir, file);
        throw err;
      }
      const owner = readOwner(file);
      const ours = owner?.pid === process.pid;
      if (owner && ((ours && held.has(file)) || (!ours && running(owner.pid)))) throw refused(dir, file, owner);
      // Stale: its process is gone (or the file is unreadable, or our pid reused from a dead server).
      note(`review-ledger: taking over the stale lock ${file}${owner ? ` of pid ${owner.pid}, which no longer runs` : ''}`);
      fs.rmSync(file, { force: true });
    }
  }
  held.add(file);
  releaseAllOnExit();
  return {
    file,
    release() {
      if (!held.delete(file)) return;
      if (readOwner(file)?.pid === process.pid) fs.rmSync(file, { force: true });
    },
  };
}

function refused(dir: string, file: string, owner = readOwner(file)): DomainError {
  const who = owner ? `pid ${owner.pid}${owner.pid === process.pid ? ', this process' : ''}${owner.since ? `, since ${owner.since}` : ''}` : 'another process';
  return new DomainError('data_dir_locked', `data dir: ${dir} is in use by another review-ledger server (${who}); stop it, or start this one with another --data-dir (lock: ${file})`, { dataDir: dir, pid: owner?.pid });
}
