import { ProgressHub, type ProgressSink, type ProgressUpdate } from '../../src/job-progress/hub';

/** A sink whose consumer can be made slow: while congested nothing is written, drain resumes delivery. */
function slowSink() {
  const sent: ProgressUpdate[] = [];
  let congested = false;
  let drain: (() => void) | null = null;
  const sink: ProgressSink = {
    send: (_id, u) => sent.push(u),
    congested: () => congested,
    onDrain: (cb) => {
      drain = cb;
    },
  };
  return {
    sink,
    sent,
    setCongested(v: boolean) {
      congested = v;
      if (!v && drain) {
        const cb = drain;
        drain = null;
        cb();
      }
    },
  };
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ProgressHub (in-memory, per workspace)', () => {
  it('coalesces to the latest update per job within an interval and sends the end at once', async () => {
    const hub = new ProgressHub(30);
    const s = slowSink();
    hub.subscribe('ws-a', s.sink);
    const job = hub.start('ws-a', { kind: 'indexCode', repoId: 'r' });
    for (let i = 1; i <= 100; i++) job.report({ phase: 'index', done: i, total: 200, fraction: i / 200 });
    await tick(80);
    expect(s.sent.map((u) => u.done)).toEqual([100]);
    job.report({ phase: 'index', done: 150, total: 200, fraction: 0.75 });
    job.done();
    // No waiting for the interval: done replaces the pending 150 and goes out now.
    expect(s.sent.map((u) => [u.status, u.done])).toEqual([
      ['running', 100],
      ['done', 150],
    ]);
    expect(s.sent[1].fraction).toBe(1);
    // Nothing after the end of a job.
    job.report({ phase: 'index', done: 200, total: 200, fraction: 1 });
    job.failed(new Error('late'));
    await tick(60);
    expect(s.sent).toHaveLength(2);
    hub.close();
  });

  it('a congested subscriber holds at most one update per job (the latest) and still gets every end', async () => {
    const hub = new ProgressHub(5);
    const slow = slowSink();
    const fast = slowSink();
    hub.subscribe('ws-a', slow.sink);
    hub.subscribe('ws-a', fast.sink);
    slow.setCongested(true);
    const a = hub.start('ws-a', { kind: 'indexCode', repoId: 'a' });
    const b = hub.start('ws-a', { kind: 'computeReview', repoId: 'b', prNumber: 4 });
    for (let i = 1; i <= 20; i++) {
      a.report({ phase: 'index', done: i, total: 20, fraction: i / 20 });
      b.report({ phase: 'index-head', done: i, total: 40, fraction: i / 40 });
      await tick(8);
    }
    a.failed(new Error('git exploded'));
    expect(slow.sent).toEqual([]);
    expect(fast.sent.length).toBeGreaterThan(10);
    slow.setCongested(false);
    expect(slow.sent.map((u) => [u.job, u.status, u.done])).toEqual([
      [expect.stringMatching(/^computeReview-/), 'running', 20],
      [expect.stringMatching(/^indexCode-/), 'failed', 20],
    ]);
    expect(slow.sent[1].error).toBe('git exploded');
    b.done();
    expect(slow.sent.at(-1)).toMatchObject({ status: 'done', prNumber: 4, fraction: 1 });
    hub.close();
  });

  it('fractions never go backwards within a job, and workspaces never see each other', async () => {
    const hub = new ProgressHub(1);
    const a = slowSink();
    const b = slowSink();
    hub.subscribe('ws-a', a.sink);
    hub.subscribe('ws-b', b.sink);
    const job = hub.start('ws-a', { kind: 'computeReview', repoId: 'r', prNumber: 1 });
    job.report({ phase: 'index-head', done: 5, total: 10, fraction: 0.3 });
    await tick(10);
    job.report({ phase: 'index-base', done: 0, total: 10, fraction: 0.1 });
    await tick(10);
    job.done();
    expect(a.sent.map((u) => u.fraction)).toEqual([0.3, 0.3, 1]);
    expect(b.sent).toEqual([]);
    expect(hub.subscribe('ws-b', b.sink).snapshot).toEqual([]);
    expect(hub.subscribe('ws-a', a.sink).snapshot.map((u) => u.status)).toEqual(['done']);
    hub.close();
  });
});
