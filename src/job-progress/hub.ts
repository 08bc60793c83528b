/**
 * Progress of long-running work (indexing a commit, computing a review), per workspace, in memory only.
 * Progress is ephemeral: it is never an event, never written to a store, and a restart forgets it. The
 * log records the outcome (`RepoIndexed`, `ReviewComputed`); this hub only says how far along the work is.
 *
 * Updates are coalesced twice: per workspace, the hub keeps only the latest update of each job and hands
 * them to subscribers at most every `intervalMs` (indexing reports once per file); per subscriber, a
 * congested consumer keeps only the latest undelivered update of each job. A job always ends with a
 * `done` or `failed` update, which replaces whatever was pending for it, so the end is never lost.
 */

export type JobKind = 'indexCode' | 'computeReview';
import { Slot, SlotMap } from '../slots';
export type JobStatus = 'running' | 'done' | 'failed';

export interface ProgressUpdate {
  /** Unique in this server process; every update of one job carries it. */
  job: string;
  kind: JobKind;
  status: JobStatus;
  repoId: string;
  prNumber?: number;
  /** The commit being indexed (set once resolved). */
  commit?: string;
  /** `index`, or `index-head` / `index-base` when computing a review. */
  phase?: string;
  /** Files of the current phase done / to do. */
  done: number;
  total: number;
  /** The whole job, 0…1; never decreases within a job, 1 when done. */
  fraction: number;
  /** Why the job failed (`failed` only). */
  error?: string;
  /** Order of updates within the workspace (subscribers may see gaps: coalesced steps). */
  seq: number;
}

export interface JobDescription {
  kind: JobKind;
  repoId: string;
  prNumber?: number;
}

/** What a command holds while it works: reports go to its own workspace's subscribers only. */
export interface JobProgress {
  /** Files `done` of `total` in `phase`; `fraction` is where that puts the whole job. */
  report(p: { phase: string; done: number; total: number; fraction: number; commit?: string }): void;
  done(): void;
  failed(err: unknown): void;
}

/** Where a subscriber's updates go (a WebSocket, an SSE response). */
export interface ProgressSink {
  send(subscription: string, update: ProgressUpdate): void;
  congested(): boolean;
  onDrain(cb: () => void): void;
  /** The hub closed (server shutdown): a stream that only this subscription holds open ends now. */
  ended?(): void;
}

/** Service name under which the server registers its hub (Ledger `services`); commands look it up there. */
export const PROGRESS_HUB_SERVICE = new Slot<ProgressHub>('progress.hub');

const NO_JOB: JobProgress = { report() {}, done() {}, failed() {} };

/** Finished jobs a new subscriber still sees in its snapshot (so a late subscriber learns the outcome). */
const RECENT_FINISHED = 16;

export class ProgressSubscription {
  private readonly pending = new Map<string, ProgressUpdate>();
  private waiting = false;
  closed = false;

  constructor(readonly id: string, private readonly sink: ProgressSink, private readonly onClose: (s: ProgressSubscription) => void, private readonly afterSeq: number) {}

  /** Latest per job: a newer update of a job replaces the undelivered one. */
  offer(u: ProgressUpdate): void {
    // Already part of the snapshot this subscriber started from.
    if (this.closed || u.seq <= this.afterSeq) return;
    this.pending.delete(u.job);
    this.pending.set(u.job, u);
    this.flush();
  }

  private flush(): void {
    if (this.waiting) return;
    for (const [job, u] of this.pending) {
      if (this.closed) return;
      if (this.sink.congested()) {
        this.waiting = true;
        this.sink.onDrain(() => {
          this.waiting = false;
          this.flush();
        });
        return;
      }
      this.pending.delete(job);
      this.sink.send(this.id, u);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending.clear();
    this.onClose(this);
  }

  /** Closed by the hub (server shutdown), not by its subscriber: the sink is told. */
  end(): void {
    if (this.closed) return;
    this.close();
    this.sink.ended?.();
  }
}

class WorkspaceProgress {
  readonly subscribers = new Set<ProgressSubscription>();
  /** Latest update of every running job. */
  readonly running = new Map<string, ProgressUpdate>();
  readonly finished: ProgressUpdate[] = [];
  /** Updates waiting for the next tick of the interval. */
  readonly outbox = new Map<string, ProgressUpdate>();
  timer: NodeJS.Timeout | null = null;
  seq = 0;
}

export class ProgressHub {
  private readonly workspaces = new Map<string, WorkspaceProgress>();
  private nextJob = 1;
  private nextSubscription = 1;

  constructor(private readonly intervalMs = 50) {}

  /** Starts a job in a workspace; its reports reach that workspace's subscribers and nobody else. */
  start(workspaceId: string, job: JobDescription): JobProgress {
    const id = `${job.kind}-${this.nextJob++}`;
    let last: ProgressUpdate | null = null;
    const emit = (status: JobStatus, p: Partial<ProgressUpdate>) => {
      if (last && last.status !== 'running') return;
      const ws = this.workspace(workspaceId);
      const fraction = status === 'done' ? 1 : Math.min(1, Math.max(last?.fraction ?? 0, p.fraction ?? 0));
      const base: ProgressUpdate = last ?? { job: id, kind: job.kind, status, repoId: job.repoId, ...(job.prNumber !== undefined ? { prNumber: job.prNumber } : {}), done: 0, total: 0, fraction: 0, seq: 0 };
      const u: ProgressUpdate = { ...base, ...p, status, fraction, seq: ++ws.seq };
      last = u;
      this.publish(workspaceId, ws, u);
    };
    emit('running', { done: 0, total: 0, fraction: 0 });
    return {
      report: (p) => emit('running', p),
      done: () => emit('done', {}),
      failed: (err) => emit('failed', { error: String((err as Error)?.message ?? err).slice(0, 500) }),
    };
  }

  /** A job handle for this workspace when a hub is registered (the server), else one that does nothing (CLI). */
  static jobFor(services: SlotMap, workspaceId: string, job: JobDescription): JobProgress {
    const hub = services.get(PROGRESS_HUB_SERVICE);
    return hub instanceof ProgressHub ? hub.start(workspaceId, job) : NO_JOB;
  }

  /** Subscribes to one workspace's progress; the snapshot is every running job and the last few that ended. */
  subscribe(workspaceId: string, sink: ProgressSink): { subscription: ProgressSubscription; snapshot: ProgressUpdate[] } {
    const ws = this.workspace(workspaceId);
    const subscription = new ProgressSubscription(`p${this.nextSubscription++}`, sink, (s) => {
      ws.subscribers.delete(s);
      this.releaseIfIdle(workspaceId, ws);
    }, ws.seq);
    ws.subscribers.add(subscription);
    return { subscription, snapshot: [...ws.finished, ...ws.running.values()].sort((a, b) => a.seq - b.seq) };
  }

  subscriberCount(workspaceId: string): number {
    return this.workspaces.get(workspaceId)?.subscribers.size ?? 0;
  }

  close(): void {
    for (const ws of this.workspaces.values()) {
      if (ws.timer) clearTimeout(ws.timer);
      for (const s of [...ws.subscribers]) s.end();
    }
    this.workspaces.clear();
  }

  private workspace(id: string): WorkspaceProgress {
    let ws = this.workspaces.get(id);
    if (!ws) this.workspaces.set(id, (ws = new WorkspaceProgress()));
    return ws;
  }

  private publish(workspaceId: string, ws: WorkspaceProgress, u: ProgressUpdate): void {
    if (u.status === 'running') ws.running.set(u.job, u);
    else {
      ws.running.delete(u.job);
      ws.finished.push(u);
      if (ws.finished.length > RECENT_FINISHED) ws.finished.shift();
    }
    ws.outbox.delete(u.job);
    ws.outbox.set(u.job, u);
    if (u.status !== 'running') {
      // The end of a job goes out at once (with whatever else is waiting), not at the next tick.
      if (ws.timer) clearTimeout(ws.timer);
      ws.timer = null;
      this.deliver(workspaceId, ws);
    } else if (!ws.timer) {
      ws.timer = setTimeout(() => {
        ws.timer = null;
        this.deliver(workspaceId, ws);
      }, this.intervalMs);
      ws.timer.unref();
    }
  }

  private deliver(workspaceId: string, ws: WorkspaceProgress): void {
    const batch = [...ws.outbox.values()];
    ws.outbox.clear();
    for (const s of ws.subscribers) for (const u of batch) s.offer(u);
    this.releaseIfIdle(workspaceId, ws);
  }

  /** A workspace with no subscriber, no job and no recent outcome to show holds nothing: drop it. */
  private releaseIfIdle(workspaceId: string, ws: WorkspaceProgress): void {
    if (ws.subscribers.size === 0 && ws.running.size === 0 && ws.finished.length === 0 && ws.outbox.size === 0 && !ws.timer) {
      if (this.workspaces.get(workspaceId) === ws) this.workspaces.delete(workspaceId);
    }
  }
}
