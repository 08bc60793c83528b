/**
 * Long synchronous work done in pieces lets the event loop run once it has held it this long. A read of
 * the log from SQLite is synchronous page by page, and async iteration only queues microtasks, so a
 * reader of a whole log held every other request until it was done: a viewer's `replay` of 150k events
 * kept /health waiting 1.2 s, a `since` resume of a large view 1 s; in a loop, every workspace stalls.
 */
export const TURN_MS = 10;

/** Call `between()` between pieces of work: it yields (setImmediate) once TURN_MS have passed since the last turn. */
export class EventLoopTurns {
  private since = performance.now();

  async between(): Promise<void> {
    if (performance.now() - this.since < TURN_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}
