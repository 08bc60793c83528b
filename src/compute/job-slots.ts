import { DomainError } from '../domain-error';
import { DEFAULT_JOB_SLOTS } from '../operator-config';

/**
 * How many index / compute jobs run at once in one process, and how many may wait per workspace.
 *
 * Each running job holds a commit's code graph, parse trees and git children: ~15–30 MB and a git process
 * or two. Unbounded, one member's 96 concurrent `computeReview` calls took the server to 2.9 GB with 98
 * children and /health to 2.3 s, and finished no sooner than with a few at a time (0.48 jobs/s against 0.57
 * with 24): past the cores, more at once only adds memory. Now at most `running` jobs run (the cores, at
 * least 2); the others wait in their workspace's queue, and a freed slot goes to the workspaces in turn
 * (round robin), so one tenant's backlog never holds back another tenant's single job. A workspace with
 * `waitingPerWorkspace` jobs waiting gets `jobs_queue_full` (retryable) instead of a longer queue. Both
 * are operator settings (`jobs` in the config file; defaults in operator-config.ts).
 */

interface Waiter {
  start: () => void;
}

export class JobSlots {
  private active = 0;
  /** Waiting jobs per key, in arrival order; keys in the order a freed slot visits them. */
  private readonly queues = new Map<string, Waiter[]>();

  constructor(
    public running: number = DEFAULT_JOB_SLOTS.running,
    public waitingPerKey: number = DEFAULT_JOB_SLOTS.waitingPerWorkspace,
  ) {}

  /** The operator's settings (startServer); more slots start waiting jobs at once, fewer take effect as jobs end. */
  configure(settings: { running: number; waitingPerWorkspace: number }): void {
    this.running = settings.running;
    this.waitingPerKey = settings.waitingPerWorkspace;
    while (this.active < this.running && this.queues.size > 0) {
      this.active++;
      this.release();
    }
  }

  /** Jobs running now, and waiting per key (for tests and /health-style reports). */
  stats(): { running: number; waiting: Record<string, number> } {
    return { running: this.active, waiting: Object.fromEntries([...this.queues].map(([k, q]) => [k, q.length])) };
  }

  /**
   * Runs `job` once a slot is free; a job whose signal aborts while it waits leaves the queue and never
   * runs. `onWait` is called (with how many of its key's jobs are ahead) when it has to wait.
   */
  async run<T>(key: string, job: () => Promise<T>, signal?: AbortSignal, onWait?: (ahead: number) => void): Promise<T> {
    signal?.throwIfAborted();
    // Jobs wait only while every slot is taken (release hands a slot straight to a waiter).
    if (this.active < this.running) this.active++;
    else {
      const waiting = this.wait(key, signal);
      onWait?.(this.queues.get(key)!.length - 1);
      await waiting;
    }
    try {
      return await job();
    } finally {
      this.release();
    }
  }

  private wait(key: string, signal?: AbortSignal): Promise<void> {
    let queue = this.queues.get(key);
    const waiting = queue?.length ?? 0;
    if (waiting >= this.waitingPerKey) {
      throw new DomainError('jobs_queue_full', `workspace: ${waiting} index/compute jobs are already waiting for one of the server's ${this.running} job slots; send this one again later`, { waiting, slots: this.running });
    }
    if (!queue) this.queues.set(key, (queue = []));
    const q = queue;
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const i = q.indexOf(waiter);
        if (i >= 0) q.splice(i, 1);
        if (q.length === 0 && this.queues.get(key) === q) this.queues.delete(key);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      q.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A slot freed: the next workspace in turn gets it (its oldest job), and goes to the back of the turn. */
  private release(): void {
    const next = this.queues.entries().next();
    // No one waiting, or fewer slots than jobs running since configure(): the slot is given back.
    if (next.done || this.active > this.running) {
      this.active--;
      return;
    }
    const [key, queue] = next.value;
    const waiter = queue.shift()!;
    this.queues.delete(key);
    if (queue.length > 0) this.queues.set(key, queue);
    // The slot passes straight to the waiter: `active` is unchanged.
    waiter.start();
  }
}

/** The process's slots: every index and compute job of every workspace in this server shares them. */
export const JOB_SLOTS = new JobSlots();
