import type { RecordedEvent } from '../envelope';
import type { Subscription } from './port';

type ReadPage = (after: number, limit: number) => Promise<RecordedEvent[]>;
type Listen = (wake: () => void) => () => void;

/**
 * Catch-up then live, for any adapter: notifications only WAKE the reader, which always pulls from its
 * own last position. So an event appended during catch-up is read exactly once (no gap, no duplicate),
 * and a slow consumer never accumulates a buffer: unread events stay in the store.
 */
export class LiveSubscription implements Subscription {
  private pos: number;
  private closed = false;
  private dirty = true;
  private waiter: (() => void) | null = null;
  private readonly unlisten: () => void;

  constructor(after: number, private readonly readPage: ReadPage, listen: Listen, private readonly pageSize = 500) {
    this.pos = after;
    this.unlisten = listen(() => this.wake());
  }

  get position(): number {
    return this.pos;
  }

  private wake(): void {
    this.dirty = true;
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unlisten();
    this.wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    try {
      while (!this.closed) {
        this.dirty = false;
        const page = await this.readPage(this.pos, this.pageSize);
        for (const e of page) {
          if (this.closed) return;
          if (e.globalPosition <= this.pos) continue;
          this.pos = e.globalPosition;
          yield e;
        }
        if (page.length >= this.pageSize || this.dirty) continue;
        await new Promise<void>((resolve) => {
          if (this.dirty || this.closed) return resolve();
          this.waiter = resolve;
        });
      }
    } finally {
      this.close();
    }
  }
}
