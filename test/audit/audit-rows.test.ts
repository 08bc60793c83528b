import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { hasAuditLog } from '../../src/events/chain';
import { ALICE, BOB, CAROL, computedEvent, HEAD1, REPO, reviewFixture, WS } from '../review/support';

const run = promisify(execFile);
const BIN = path.resolve(__dirname, '../../bin/review-ledger.js');
jest.setTimeout(120_000);

type Fixture = Awaited<ReturnType<typeof reviewFixture>>;
let f: Fixture;
afterEach(async () => f.cleanup());

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, '--data-dir', f.dataDir, ...args], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' }, encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Runs `fn` on the audit read model's rows table, in its own file, as someone with write access to it would. */
function editReadModel(fn: (db: Database.Database, table: string) => void): void {
  const db = new Database(path.join(f.dataDir, WS, 'readmodels.audit.db'));
  try {
    const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rm_audit_%_rows'").pluck().get() as string;
    fn(db, table);
  } finally {
    db.close();
  }
}

describe('review-ledger audit checks every row it prints against the chained event it comes from', () => {
  beforeEach(async () => {
    f = await reviewFixture();
    await f.request(7);
    await f.append(`pr-${REPO}-7`, 'ReviewComputed', computedEvent(HEAD1));
    const a = await f.file(ALICE, { priority: 'P1' });
    const b = await f.file(ALICE, { priority: 'P2' });
    await f.run('confirmNode', BOB, { ...f.pr(), nodeId: a });
    await f.run('dismissNode', CAROL, { ...f.pr(), nodeId: b, reason: 'intended' });
  });

  test('untouched, every row is verified and carries its event\'s chain hash; an edited actor in readmodels.audit.db is flagged, by field, and the command fails', async () => {
    const first = await cli('audit', '--workspace', WS, '--order', 'asc', '--json');
    expect(first.code).toBe(0);
    const rows = JSON.parse(first.stdout).rows;
    expect(rows.map((r: any) => [r.action, r.actor, r.check])).toEqual([
      ['confirm', BOB.principal, 'verified'],
      ['dismiss', CAROL.principal, 'verified'],
    ]);
    const store = f.ws.store;
    if (!hasAuditLog(store)) throw new Error('the SQLite store keeps a chain');
    for (const r of rows) {
      const [event] = await store.readChainPage(r.position - 1, 1);
      expect(r.hash).toBe(event.hash);
      expect(r.eventId).toBe(event.eventId);
    }
    const dismissed = rows[1].position as number;

    editReadModel((db, table) => db.prepare(`UPDATE ${table} SET actor = 'user:mallory' WHERE position = ?`).run(dismissed));
    const table = await cli('audit', '--workspace', WS, '--order', 'asc');
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(new RegExp(`^${dismissed}\\s+\\S+\\s+dismiss\\s+user:mallory\\s+.*\\s+MISMATCH$`, 'm'));
    expect(table.stdout).toMatch(new RegExp(`^${rows[0].position}\\s+.*\\s+verified$`, 'm'));
    expect(table.stdout).toContain(`row at position ${dismissed} does NOT match its event in the log — actor: the row says "user:mallory", the event says "${CAROL.principal}"`);
    expect(table.stdout).toContain('log integrity: OK: the chain verifies');
    expect(table.stderr).toBe(`error [audit_row_mismatch]: 1 row(s) of the audit read model do not match their events in the log (positions ${dismissed})\n`);

    const json = JSON.parse((await cli('audit', '--workspace', WS, '--order', 'asc', '--json')).stdout);
    expect(json.rows[1]).toMatchObject({ position: dismissed, actor: 'user:mallory', check: 'mismatch', hash: rows[1].hash, problem: `actor: the row says "user:mallory", the event says "${CAROL.principal}"` });

    // A row moved onto another event's position, and a row made up for an event that records no act.
    editReadModel((db, t) => {
      db.prepare(`UPDATE ${t} SET actor = ?, position = 1 WHERE position = ?`).run(CAROL.principal, dismissed);
    });
    const moved = JSON.parse((await cli('audit', '--workspace', WS, '--order', 'asc', '--json')).stdout).rows;
    expect(moved[0]).toMatchObject({ position: 1, check: 'mismatch', problem: expect.stringMatching(/^the event at position 1 \(\w+\) records no decision act$/) });
  });

  test('a row whose event lies past a break in the chain is shown as unverified, not as fact', async () => {
    const rows = JSON.parse((await cli('audit', '--workspace', WS, '--order', 'asc', '--json')).stdout).rows;
    const db = new Database(path.join(f.dataDir, WS, 'workspace.db'));
    db.prepare("UPDATE events SET data = replace(data, 'intended', 'intended!') WHERE global_position = ?").run(rows[1].position);
    db.close();
    const after = await cli('audit', '--workspace', WS, '--order', 'asc');
    expect(after.stdout).toMatch(new RegExp(`^${rows[0].position}\\s+.*\\s+verified$`, 'm'));
    expect(after.stdout).toMatch(new RegExp(`^${rows[1].position}\\s+.*\\s+unverified$`, 'm'));
    expect(after.stdout).toContain(`row at position ${rows[1].position} unverified: the log does not verify from position ${rows[1].position} on (see the log integrity), at or before this row: nothing in the log vouches for it`);
    expect(after.stdout).toContain(`log integrity: BROKEN at position ${rows[1].position}: edited`);
  });
});
