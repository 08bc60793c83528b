import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { eventStoreConformance } from './store-conformance';

const dirs: string[] = [];
eventStoreConformance(
  'sqlite',
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-sqlite-'));
    dirs.push(dir);
    return new SqliteEventStore({ file: path.join(dir, 'ws', 'workspace.db'), workspaceId: 'ws' });
  },
);
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
