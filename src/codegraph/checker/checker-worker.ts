import { parentPort } from 'node:worker_threads';
import { clearSourceCache, runCheckerJob, type CheckerJob } from './checker-job';

// The checker thread's entry (checker-thread.ts): one job at a time, its result or its error posted back.
parentPort?.on('message', (m: { job?: CheckerJob; clear?: boolean }) => {
  if (m.clear) {
    clearSourceCache();
    return;
  }
  if (!m.job) return;
  try {
    parentPort!.postMessage({ result: runCheckerJob(m.job) });
  } catch (e) {
    parentPort!.postMessage({ error: (e as Error).message ?? String(e) });
  }
});
