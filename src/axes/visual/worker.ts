import { parentPort } from 'node:worker_threads';
import { runDiffJob, type DiffJob } from './diff';

// Entry point of a diff pool worker (see pool.ts): one job at a time, results in order. Inflates in
// this thread: the pool's workers already occupy the cores (no band helper either: split.ts).
parentPort!.on('message', async (message: { id: number; job: DiffJob }) => {
  const result = await runDiffJob(message.job, { inline: true });
  parentPort!.postMessage({ id: message.id, result });
});
