import type { Database } from 'better-sqlite3';

/**
 * SQLite functions of the read-model connections (configureReadModelDb registers them): the review-stream
 * rule of `parseReviewStream` (src/events/streams.ts), remembered per stream id, for the set-based
 * rebuild's statements (src/readmodels/stored/bulk.ts). The same rule written in SQL (rtrim and four line-break
 * scans, evaluated again at every use of the stripped id; still PostgreSQL's) cost ~3.8 µs per audit row
 * on SQLite, against ~1.4 µs for the two calls here (measured over the 90k audit rows of a 200k-event
 * log: 343 → 123 ms for repo and PR).
 *
 * The rule is repeated here rather than imported: this module is loaded by every writer thread
 * (sqlite-writer.ts), and src/events/streams.ts brings the event catalogue with it (~120 ms of CPU per
 * thread to compile and load). test/readmodels/bulk.test.ts checks both give the same answer on every
 * stream id of its log, and these functions against parseReviewStream on edge cases.
 */
export const REVIEW_FUNCTIONS = { repo: 'rm_review_repo', pr: 'rm_review_pr' } as const;

/** parseReviewStream's pattern: `pr-<repoId>-<prNumber>`, `.` not matching line terminators. */
const REVIEW_STREAM = /^pr-(.+)-(\d+)$/;

type Parsed = { repoId: string; prNumber: number } | null;
const parsed = new Map<string, Parsed>();

export function reviewStreamRule(streamId: string): Parsed {
  let pr = parsed.get(streamId);
  if (pr === undefined) {
    const m = REVIEW_STREAM.exec(streamId);
    pr = m ? { repoId: m[1], prNumber: Number(m[2]) } : null;
    // Bounded: a log of more streams than this parses the rest each time.
    if (parsed.size < 100_000) parsed.set(streamId, pr);
  }
  return pr;
}

/** Registers REVIEW_FUNCTIONS on a connection that runs a set-based build's statements: null for a stream that is not a review's. */
export function registerReviewFunctions(db: Database): void {
  db.function(REVIEW_FUNCTIONS.repo, { deterministic: true }, (id: unknown) => (typeof id === 'string' ? (reviewStreamRule(id)?.repoId ?? null) : null));
  db.function(REVIEW_FUNCTIONS.pr, { deterministic: true }, (id: unknown) => (typeof id === 'string' ? (reviewStreamRule(id)?.prNumber ?? null) : null));
}
