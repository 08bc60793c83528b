import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '../../src/events/store/sqlite';
import { readModelHost } from '../../src/readmodels/registry';
import { readModelConformance, Workspace } from './conformance';

const open = (dir: string): Workspace => {
  const store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'rm', synchronous: 'NORMAL' });
  return { id: 'rm', dir, store, cache: new Map(), close: () => store.close() };
};

readModelConformance('sqlite', {
  fresh: async () => open(fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-'))),
  childArgs: (ws) => ['sqlite', ws.dir],
  reopen: async (ws) => open(ws.dir),
});

test('the read-model file beside the log is private (0600, like the log), whatever the umask', async () => {
  const ws = open(fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-mode-')));
  const old = process.umask(0o022);
  try {
    const host = readModelHost(ws)!;
    await host.settle();
    await host.close();
    for (const f of fs.readdirSync(ws.dir).filter((n) => n.startsWith('readmodels.db'))) expect([f, fs.statSync(path.join(ws.dir, f)).mode & 0o777]).toEqual([f, 0o600]);
  } finally {
    process.umask(old);
    await ws.close();
  }
});
