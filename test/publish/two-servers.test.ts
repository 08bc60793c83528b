import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { Ledger } from '../../src/ledger';
import { loadConfig, type LedgerConfig } from '../../src/config';
import { attachReadModels } from '../../src/readmodels/stored/registry';
import { whenPostgres, ownDatabase } from '../scale/pg-support';
import { ALICE, BOB, CAROL, OWNER, PR, publishFixture, REPO, WS } from './support';

/**
 * The publisher looks on GitHub for an earlier post of the review and posts only when it finds none. Two
 * processes on one store (two servers on PostgreSQL; a server and the CLI on a SQLite data dir) pressing
 * at once both found none and both posted: two reviews on the pull request, two ReviewPublished events.
 * The store's exclusive section (EventStore.exclusive) now keeps the look and the post of one process
 * apart from another's. Each "process" here is a Ledger of its own (its own caches and in-process locks).
 */
async function pressOnTwoLedgers(config: Partial<LedgerConfig>, otherConfig: (dataDir: string) => Partial<LedgerConfig>) {
  const f = await publishFixture({ config });
  const other = new Ledger(loadConfig(otherConfig(f.dataDir), {}), { services: f.services, onOpenWorkspace: attachReadModels });
  try {
    await f.file(ALICE, { title: 'five is a string now', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    await f.file(BOB, { title: 'v12 unused', brief: 'qa', anchor: { path: 'src/app.ts', startLine: 12, endLine: 12 } });
    await f.finalize();
    // A slow GitHub: without the exclusive section every press would list no review before any posts one.
    f.github.reviewsListingDelayMs = 300;
    const onOther = () => other.run('publish', WS, { principal: OWNER.principal as never, role: OWNER.role, idempotencyKey: newUuidV7() }, { repoId: REPO, prNumber: PR });
    const results = await Promise.allSettled([f.publish(CAROL), onOther(), f.publish(CAROL), onOther()]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as { code?: string }).code).toBe('already_published');
    expect(f.github.reviewPosts()).toHaveLength(1);
    expect(f.github.pulls.get(PR)!.reviews).toHaveLength(1);
    expect(await f.eventsOf('ReviewPublished')).toHaveLength(1);
  } finally {
    await other.close();
    await f.close();
  }
}

describe('publishing from two processes on one store posts one review', () => {
  test('SQLite: two ledgers on one data dir (a server and the CLI), two presses on each at once', async () => {
    await pressOnTwoLedgers({}, (dataDir) => ({ dataDir }));
  }, 120_000);
});

whenPostgres('publishing from two servers on one PostgreSQL store', () => {
  const db = ownDatabase('pub2');
  const url = db.url;
  const dirs: string[] = [];
  beforeAll(() => db.create());
  afterAll(async () => {
    await db.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('two servers with separate data dirs, two presses on each at once', async () => {
    await pressOnTwoLedgers({ store: 'postgres', databaseUrl: url }, () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-pub2-'));
      dirs.push(dataDir);
      return { dataDir, store: 'postgres', databaseUrl: url };
    });
  }, 120_000);
});
