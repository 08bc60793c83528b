/**
 * At most `limit` events per key in each window of `windowMs` (a fixed window per key, started by the
 * key's first event in it). Keys are bounded: past `maxKeys` the expired windows go first, then the
 * oldest. Used for what an unauthenticated client may start per client (security/client-key.ts
 * clientKey): sign-ins, which cost the identity provider a round trip and hold state here.
 */
export class RateWindow {
  /** Insertion order is window-start order: a key whose window ended is deleted before it starts again. */
  private readonly windows = new Map<string, { start: number; n: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one event of `key` and answers 0; over the limit counts nothing and answers the ms until its window ends. */
  take(key: string): number {
    const t = this.now();
    let w = this.windows.get(key);
    if (w && t - w.start >= this.windowMs) {
      this.windows.delete(key);
      w = undefined;
    }
    if (!w) {
      if (this.windows.size >= this.maxKeys) this.prune(t);
      w = { start: t, n: 0 };
      this.windows.set(key, w);
    }
    if (w.n >= this.limit) return w.start + this.windowMs - t;
    w.n++;
    return 0;
  }

  /** Keys held now (for tests and bounds). */
  get size(): number {
    return this.windows.size;
  }

  private prune(t: number): void {
    for (const [k, w] of this.windows) {
      if (t - w.start < this.windowMs) break; // every later window started later still
      this.windows.delete(k);
    }
    while (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
  }
}
