import * as path from 'node:path';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { configureReadModelDb, SqliteCommitter, type CommitJob } from './sqlite-commit';
import { openSideDatabase } from '../../stores/sqlite/side-database';

/**
 * The writer thread of a SQLite read-model file: a build's batches are committed here, on the thread's
 * own connection, while the main thread folds the next batch (a build used one core: about a third of
 * its time was these inserts and commits). Each job is SqliteCommitter.commit — rows and checkpoint in
 * one transaction, exactly as on the main connection — and jobs run in the order they were posted.
 */
interface Request {
  id: number;
  job?: CommitJob;
  /** A promotion (see SqliteReadModelStorage.promote): these statements, in one transaction. */
  transaction?: Array<{ sql: string; params: unknown[] }>;
  /** A chunk's `prepare` ahead of its commit job (SqliteCommitter.prepare). */
  prepare?: { token: number; statements: Array<{ sql: string; params: unknown[] }> };
}

type Reply = { id: number; ok: boolean } | { id: number; error: string };

if (parentPort && workerData && (workerData as { readModelWriter?: string }).readModelWriter) {
  const data = workerData as { readModelWriter: string; log?: string };
  const db = openSideDatabase(data.readModelWriter, { fileMustExist: true, synchronous: 'NORMAL' });
  configureReadModelDb(db, data.log);
  const committer = new SqliteCommitter(db);
  const port = parentPort;
  port.on('message', (m: Request | 'close') => {
    if (m === 'close') {
      db.close();
      port.close();
      return;
    }
    let reply: Reply;
    try {
      if (m.transaction) {
        const stmts = m.transaction;
        db.transaction(() => {
          for (const st of stmts) db.prepare(st.sql).run(st.params);
        })();
        committer.forget();
        reply = { id: m.id, ok: true };
      } else if (m.prepare) {
        committer.prepare(m.prepare.token, m.prepare.statements);
        reply = { id: m.id, ok: true };
      } else reply = { id: m.id, ok: committer.commit(m.job!) };
    } catch (err) {
      // A table dropped since a statement was prepared: prepared again on the next job.
      committer.forget();
      reply = { id: m.id, error: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(reply);
  });
}

/** The main thread's end of a writer thread: commit() resolves with the job's result once it ran. */
export class SqliteWriter {
  private readonly worker: Worker;
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (ok: boolean) => void; reject: (e: unknown) => void }>();
  private failed: unknown = null;
  private closing: Promise<void> | null = null;

  constructor(file: string, log?: string) {
    const ext = path.extname(__filename);
    const entry = path.join(__dirname, `sqlite-writer${ext}`);
    const data = { readModelWriter: file, log };
    // From the TypeScript sources (tests, benchmarks) through the swc require hook, as stores/sqlite/chain-worker.
    this.worker =
      ext === '.ts'
        ? new Worker(`require(${JSON.stringify(path.resolve(__dirname, '../../../tools/ts-register.js'))}); require(${JSON.stringify(entry)});`, { eval: true, workerData: data })
        : new Worker(entry, { workerData: data });
    // An idle writer does not keep the process alive.
    this.worker.unref();
    this.worker.on('message', (r: Reply) => {
      const w = this.waiting.get(r.id);
      if (!w) return;
      this.waiting.delete(r.id);
      if (this.waiting.size === 0) this.worker.unref();
      if ('error' in r) w.reject(new Error(`read models: ${r.error}`));
      else w.resolve(r.ok);
    });
    const fail = (err: unknown): void => {
      this.failed = err;
      const ws = [...this.waiting.values()];
      this.waiting.clear();
      for (const w of ws) w.reject(err);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`read models: the writer thread exited (${code})`)));
  }

  /** False when the writer cannot take jobs (it failed or is closing): commit on the caller's connection. */
  get usable(): boolean {
    return this.failed === null && this.closing === null;
  }

  commit(job: CommitJob): Promise<boolean> {
    return this.post({ id: 0, job });
  }

  /** Runs a chunk's `prepare` statements now (after the jobs posted before); the commit job naming `token` as preparedAs skips them. */
  prepare(token: number, statements: Array<{ sql: string; params: unknown[] }>): Promise<boolean> {
    return this.post({ id: 0, prepare: { token, statements } });
  }

  /** Runs `statements` in one transaction on the thread's connection, after the jobs posted before. */
  transaction(statements: Array<{ sql: string; params: unknown[] }>): Promise<boolean> {
    return this.post({ id: 0, transaction: statements });
  }

  private post(request: Request): Promise<boolean> {
    if (!this.usable) return Promise.reject(this.failed ?? new Error('read models: the writer thread is closing'));
    const id = this.next++;
    return new Promise<boolean>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      // Referenced while a job is pending: the process waits for its commit.
      this.worker.ref();
      this.worker.postMessage({ ...request, id } satisfies Request);
    });
  }

  /** Lets the jobs posted so far finish, then closes the thread's connection and ends it. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.waiting.values()].map((w) => new Promise<void>((res) => {
        const { resolve, reject } = w;
        w.resolve = (ok) => (resolve(ok), res());
        w.reject = (e) => (reject(e), res());
      })));
      if (this.failed === null) {
        const exited = new Promise<void>((res) => this.worker.once('exit', () => res()));
        // Referenced until it exited: the caller awaits this (an unreferenced thread would let the process end first).
        this.worker.ref();
        this.worker.postMessage('close');
        await exited;
      }
    })();
    return this.closing;
  }
}
