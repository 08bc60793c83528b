import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as net from 'node:net';
import { Ledger } from '../../src/ledger';
import { loadConfig } from '../../src/config';
import { startServer } from '../../src/server/bootstrap';
import { JOB_SLOTS } from '../../src/compute/job-slots';
import { DEFAULT_FOLD_CACHE_BYTES } from '../../src/workspaces/fold-cache';

describe('HTTP server', () => {
  test('GET /health answers with the store status on 127.0.0.1', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-server-'));
    const server = await startServer({ dataDir, port: 0 });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${server.url}/health`);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({ status: 'ok', store: { adapter: 'sqlite', synchronous: 'FULL' } });
      // Index/compute job slots as totals (no workspace named on this public endpoint).
      expect(body.jobs).toEqual({ slots: JOB_SLOTS.running, running: 0, waiting: 0 });
      // The fold cache's totals: a server whose states pass the budget shows evictions and misses climbing.
      expect(body.foldCache).toEqual({ states: expect.any(Number), bytes: expect.any(Number), budgetBytes: DEFAULT_FOLD_CACHE_BYTES, evictions: expect.any(Number), misses: expect.any(Number) });
      expect(body.foldCache.bytes).toBeLessThanOrEqual(body.foldCache.budgetBytes);
      // No host path on an unauthenticated endpoint (docs/security.md).
      expect(JSON.stringify(body)).not.toContain(dataDir);
      // The browser's tab icon is served, not a 404 on every page load (issue 38).
      const icon = await fetch(`${server.url}/favicon.ico`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toBe('image/svg+xml');
      expect(await icon.text()).toMatch(/^<svg /);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('on an IPv6 address the URL it prints brackets the host, and answers there', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-server-'));
    const server = await startServer({ dataDir, port: 0, host: '::1' });
    try {
      expect(server.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a server started on a given ledger listens where the caller says (port 0), even while the operator runs one on that ledger\'s port', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-server-'));
    // The ledger's own config names a port that is already taken, as the README's `npm start` takes 3000.
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const takenPort = (blocker.address() as net.AddressInfo).port;
    const ledger = new Ledger(loadConfig({ dataDir, port: takenPort }));
    const server = await startServer({ port: 0 }, ledger);
    try {
      expect(Number(new URL(server.url).port)).not.toBe(takenPort);
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
    } finally {
      await server.close();
      blocker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a server that cannot bind throws and leaves nothing running', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-server-'));
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const takenPort = (blocker.address() as net.AddressInfo).port;
    try {
      await expect(startServer({ dataDir, port: takenPort })).rejects.toMatchObject({ code: 'port_in_use', message: expect.stringContaining(`127.0.0.1:${takenPort} is in use`) });
      // Nothing of the failed start is left holding the data dir: the next start on it succeeds.
      const again = await startServer({ dataDir, port: 0 });
      await again.close();
    } finally {
      blocker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
