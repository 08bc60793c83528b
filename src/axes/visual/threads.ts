import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread running `<name>.ts/.js` of this folder; from TypeScript sources (tests,
 * benchmarks) through the swc require hook.
 */
export function startVisualWorker(name: string): Worker {
  const ext = path.extname(__filename);
  const entry = path.join(__dirname, `${name}${ext}`);
  if (ext !== '.ts') return new Worker(entry);
  const register = path.resolve(__dirname, '../../../tools/ts-register.js');
  return new Worker(`require(${JSON.stringify(register)}); require(${JSON.stringify(entry)});`, { eval: true });
}
