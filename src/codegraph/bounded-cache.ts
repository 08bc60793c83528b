/**
 * Arrays kept per key and bounded by the elements kept in all, not by entries (one generated file can hold tens of
 * thousands of names): the least recently used entry goes first, and an array longer than the whole bound is not
 * kept. Callers key by workspace as well as by blob, so no tenant's computation is sped up by another's reads.
 */
export class BoundedArrayCache<T> {
  private readonly entries = new Map<string, readonly T[]>();
  private total = 0;

  constructor(readonly maxElements: number) {}

  /** The array kept under `key`, now the most recently used; undefined when none. */
  get(key: string): readonly T[] | undefined {
    const value = this.entries.get(key);
    if (value) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** Keeps `value` under `key` unless it is longer than the bound or the key is kept already; evicts to fit. */
  set(key: string, value: readonly T[]): void {
    if (value.length > this.maxElements || this.entries.has(key)) return;
    this.entries.set(key, value);
    this.total += value.length;
    for (const [oldest, kept] of this.entries) {
      if (this.total <= this.maxElements) break;
      this.entries.delete(oldest);
      this.total -= kept.length;
    }
  }
}
