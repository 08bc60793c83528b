import { parentPort } from 'node:worker_threads';
import { extractFacts } from './extract';
import { loadGrammar } from './grammar-runtime';

/** Worker thread body: parse + extract one blob's facts per message (see extract-pool.ts). */
parentPort?.on('message', (m: { id: number; language: string; text: string }) => {
  loadGrammar(m.language)
    .then((g) => parentPort!.postMessage({ id: m.id, facts: extractFacts(g, m.text) }))
    .catch((err: Error) => parentPort!.postMessage({ id: m.id, error: err.message }));
});
