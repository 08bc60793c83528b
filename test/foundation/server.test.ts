import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServer } from '../../src/server/bootstrap';

describe('HTTP server', () => {
  test('GET /health answers with the store status on 127.0.0.1', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-server-'));
    const server = await startServer({ dataDir, port: 0 });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${server.url}/health`);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({ status: 'ok', store: { adapter: 'sqlite', dataDir, synchronous: 'FULL' } });
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
