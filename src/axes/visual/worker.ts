import { parentPort } from 'node:worker_threads';
import { runDiffJob, type DiffJob } from './diff';

// Entry point of a diff pool worker (see pool.ts): one job at a time, results in order.
parentPort!.on('message', async (message: { id: number; job: DiffJob }) => {
  const result = await runDiffJob(message.job);
  parentPort!.postMessage({ id: message.id, result });
});
