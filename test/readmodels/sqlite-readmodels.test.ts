import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '../../src/events/store/sqlite';
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
