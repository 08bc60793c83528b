import { blankLineNumbers, docLinesWithin } from './doc-lines';
import { IN_THREAD_PARSE_MS, PARSE_BUDGET_MS } from './extract';
import { sharedExtractPool } from './extract-pool';
import { loadGrammar } from './languages/grammar-runtime';

/**
 * 1-based numbers of the lines that are blank or whose every non-blank character is inside a comment or
 * docstring. Parsed on this thread within IN_THREAD_PARSE_MS; a text that takes longer is parsed on a
 * worker (the same answer, off the event loop: compute runs on the server's thread).
 */
export async function docLinesOf(languageId: string, source: string): Promise<Set<number>> {
  const grammar = await loadGrammar(languageId);
  const here = docLinesWithin(grammar, source, performance.now() + IN_THREAD_PARSE_MS);
  if (here) return here;
  const pool = sharedExtractPool();
  return pool ? new Set(await pool.docLines(languageId, source)) : (docLinesWithin(grammar, source, performance.now() + PARSE_BUDGET_MS) ?? new Set(blankLineNumbers(source)));
}

