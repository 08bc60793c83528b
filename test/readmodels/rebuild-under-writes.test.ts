import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { readModelHost } from '../../src/readmodels/stored/registry';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';

const ROOT = path.resolve(__dirname, '../..');

/**
 * `read-models rebuild` while another process keeps writing (issue 34: it stopped a few events short of
 * the head and never returned). The build must catch up with a moving head, be promoted, and then
 * follow the other process's appends like any active slot.
 */
test('a rebuild while another process appends finishes, and the models then reach the final head', async () => {
  const f = await ledgerFixture({ workspaceId: 'acme' });
  for (let i = 0; i < 1500; i++) await f.ledger.run('setReviewLevel', 'acme', { ...OWNER, idempotencyKey: newUuidV7() }, { level: i % 2 ? 'light' : 'thorough' });
  const started = path.join(f.dataDir, 'writer-started');
  const stopFile = path.join(f.dataDir, 'writer-stop');
  const script = `
    const fs = require('node:fs');
    const { Ledger } = require('./src/ledger'); const { loadConfig } = require('./src/config'); const { newUuidV7 } = require('./src/events/ids');
    const l = new Ledger(loadConfig({ dataDir: process.argv[1] }, {}));
    (async () => {
      let i = 0;
      while (!fs.existsSync(process.argv[3])) {
        await l.run('setReviewLevel', 'acme', { principal: 'user:owner', role: 'owner', idempotencyKey: newUuidV7() }, { level: i++ % 2 ? 'light' : 'thorough' });
        if (i === 20) fs.writeFileSync(process.argv[2], '');
        await new Promise((r) => setTimeout(r, 2));
      }
      await l.close();
    })();`;
  const child = spawn(process.execPath, ['-r', './tools/ts-register.js', '-e', script, f.dataDir, started, stopFile], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  while (!fs.existsSync(started)) {
    if (child.exitCode !== null) throw new Error(`writer exited: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const ws = await f.ledger.workspace('acme');
  const host = readModelHost(ws)!;
  const headBefore = await ws.store.headPosition();
  const slots = await host.rebuildAll(host.names);
  for (const s of slots) expect(s.position).toBeGreaterThanOrEqual(headBefore);
  fs.writeFileSync(stopFile, '');
  expect(await exited).toBe(0);
  expect(stderr).toBe('');
  const finalHead = await ws.store.headPosition();
  expect(finalHead).toBeGreaterThan(headBefore);
  await host.settle();
  for (const name of host.names) expect(host.slot(name)!.position).toBe(finalHead);
  await f.cleanup();
}, 120_000);
