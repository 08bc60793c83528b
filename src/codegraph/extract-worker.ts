import { parentPort } from 'node:worker_threads';
import { runJob } from './extract-pool';
import { loadGrammar } from './languages/grammar-runtime';

/**
 * Worker thread body: parse + extract one blob's facts (or a text's doc lines) per message (see extract-pool.ts). The facts travel
 * back as their JSON text: one string is cheaper to post than the structured clone of thousands of small
 * objects, and it is exactly what the facts cache stores, so the main thread does not serialize them again.
 */
parentPort?.on('message', (m: { id: number; kind: 'facts' | 'docLines'; language: string; text: string }) => {
  loadGrammar(m.language)
    .then((g) => parentPort!.postMessage({ id: m.id, json: runJob(g, m.kind, m.text) }))
    .catch((err: Error) => parentPort!.postMessage({ id: m.id, error: err.message }));
});
