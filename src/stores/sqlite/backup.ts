import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../../domain-error';
import { mkdirPrivate, PRIVATE_FILE_MODE, touchPrivate } from '../private-files';
import { openSideDatabase } from './side-database';

/**
 * A consistent copy of an SQLite data dir while its server runs: what "restore it from a backup" (the
 * `store_damaged` answer) needs. Each database is copied with `VACUUM INTO` on a read-only connection: one
 * read transaction, so the copy is the file as of one moment (in WAL mode writers go on meanwhile, and
 * never make it start over, as the page-by-page backup API would under steady writes). The copy is itself
 * a data dir: `--data-dir <backup>` serves it (read models, consumer positions and caches are not copied —
 * they are rebuilt from the log — nor the repo root: its clones are registered by path, the operator copies it).
 */

/** The data dir's own secrets, copied 0600 (with them a restored server verifies its chain and its tokens). */
const SECRET_FILES = ['server.key', 'audit-ed25519.pem', 'owner-token'];

export interface BackupReport {
  createdAt: string;
  /** Every workspace folder with a log, and its head (the last global position in the copy). */
  workspaces: Array<{ workspaceId: string; head: number; bytes: number }>;
  /** Secret files copied (relative to the data dir). */
  secrets: string[];
}

/** Copies `dataDir`'s catalogue, each workspace's log and webhook secrets, and its secrets into `to` (new or empty). */
export function backupSqliteDataDir(dataDir: string, to: string, clock: () => Date = () => new Date()): BackupReport {
  const src = path.resolve(dataDir);
  const dest = path.resolve(to);
  if (!fs.existsSync(path.join(src, 'catalog.db'))) throw new DomainError('invalid_config', `--data-dir: ${src} holds no catalog.db: not a review-ledger data dir`);
  if (dest === src || dest.startsWith(src + path.sep)) throw new DomainError('invalid_config', `--to: ${dest} is inside the data dir it would copy`);
  if (fs.existsSync(dest) && fs.readdirSync(dest).length > 0) throw new DomainError('invalid_config', `--to: ${dest} exists and is not empty: a backup goes into a new or empty folder`);
  mkdirPrivate(dest);
  const createdAt = clock().toISOString();
  copyDatabase(path.join(src, 'catalog.db'), path.join(dest, 'catalog.db'));
  const workspaces: BackupReport['workspaces'] = [];
  for (const entry of fs.readdirSync(src, { withFileTypes: true }).filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const log = path.join(src, entry.name, 'workspace.db');
    if (!fs.existsSync(log)) continue;
    const into = path.join(dest, entry.name);
    mkdirPrivate(into);
    const copy = path.join(into, 'workspace.db');
    copyDatabase(log, copy);
    const db = openSideDatabase(copy, { readonly: true });
    let head: number;
    try {
      head = (db.prepare('SELECT coalesce(max(global_position), 0) AS head FROM events').get() as { head: number }).head;
    } finally {
      db.close();
    }
    const secrets = path.join(src, entry.name, 'webhook-secrets');
    if (fs.existsSync(secrets)) {
      mkdirPrivate(path.join(into, 'webhook-secrets'));
      for (const f of fs.readdirSync(secrets)) copySecret(path.join(secrets, f), path.join(into, 'webhook-secrets', f));
    }
    workspaces.push({ workspaceId: entry.name, head, bytes: fs.statSync(copy).size });
  }
  const secrets = SECRET_FILES.filter((f) => fs.existsSync(path.join(src, f)));
  for (const f of secrets) copySecret(path.join(src, f), path.join(dest, f));
  const report: BackupReport = { createdAt, workspaces, secrets };
  fs.writeFileSync(path.join(dest, 'backup.json'), `${JSON.stringify(report, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
  return report;
}

/** `VACUUM INTO` a fresh 0600 file from a read-only connection: the database as of one read transaction. */
function copyDatabase(from: string, to: string): void {
  touchPrivate(to); // empty: VACUUM INTO accepts an empty file and keeps its mode
  const db = openSideDatabase(from, { readonly: true });
  try {
    db.prepare('VACUUM INTO ?').run(to);
  } finally {
    db.close();
  }
}

function copySecret(from: string, to: string): void {
  fs.copyFileSync(from, to);
  fs.chmodSync(to, PRIVATE_FILE_MODE);
}
