import type { RecordedEvent } from '../../src/events/envelope';

/** Takes events from a subscription until `n` arrived (the test's own deadline is jest's, not a figure). */
export async function take(it: AsyncIterator<RecordedEvent>, n: number): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}
