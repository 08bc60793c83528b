import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JobSlots } from '../../src/compute/job-slots';
import { DEFAULT_JOB_SLOTS, loadOperatorConfig } from '../../src/operator-config';

/** A job the test finishes by hand, recording when it started. */
function manual(log: string[], name: string) {
  let finish!: (v: string) => void;
  let fail!: (e: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return {
    job: () => {
      log.push(name);
      return done;
    },
    finish: () => finish(name),
    fail: (e: Error) => fail(e),
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('JobSlots: index/compute jobs at most `running` at once, fair across workspaces', () => {
  it('runs at most `running` jobs; the next starts when one ends, errors included', async () => {
    const slots = new JobSlots(2, 10);
    const log: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => manual(log, n));
    const runs = [a, b, c, d].map((j) => slots.run('ws', j.job));
    await settle();
    expect(log).toEqual(['a', 'b']);
    expect(slots.stats()).toEqual({ running: 2, waiting: { ws: 2 } });
    a.fail(new Error('boom'));
    await expect(runs[0]).rejects.toThrow('boom');
    await settle();
    expect(log).toEqual(['a', 'b', 'c']);
    b.finish();
    c.finish();
    await settle();
    expect(log).toEqual(['a', 'b', 'c', 'd']);
    d.finish();
    expect(await Promise.all(runs.slice(1))).toEqual(['b', 'c', 'd']);
    expect(slots.stats()).toEqual({ running: 0, waiting: {} });
  });

  it("gives a freed slot to the workspaces in turn: one tenant's backlog does not hold back another's job", async () => {
    const slots = new JobSlots(1, 10);
    const log: string[] = [];
    const first = manual(log, 'a0');
    const backlog = [1, 2, 3].map((i) => manual(log, `a${i}`));
    const other = manual(log, 'b0');
    const runs = [slots.run('a', first.job), ...backlog.map((j) => slots.run('a', j.job)), slots.run('b', other.job)];
    await settle();
    first.finish();
    await settle();
    expect(log).toEqual(['a0', 'a1']);
    backlog[0].finish();
    await settle();
    // b's one job came after a's three, and runs second among them.
    expect(log).toEqual(['a0', 'a1', 'b0']);
    other.finish();
    await settle();
    backlog[1].finish();
    await settle();
    backlog[2].finish();
    await Promise.all(runs);
    expect(log).toEqual(['a0', 'a1', 'b0', 'a2', 'a3']);
  });

  it('refuses past `waitingPerKey` waiting jobs of one key with jobs_queue_full; other keys still wait', async () => {
    const slots = new JobSlots(1, 2);
    const log: string[] = [];
    const jobs = [0, 1, 2].map((i) => manual(log, `a${i}`));
    const runs = jobs.map((j) => slots.run('a', j.job));
    await expect(slots.run('a', async () => 'never')).rejects.toMatchObject({ code: 'jobs_queue_full', details: { waiting: 2, slots: 1 } });
    const b = manual(log, 'b0');
    const bRun = slots.run('b', b.job);
    // With no waiting allowed, a job that finds every slot taken is refused at once.
    const none = new JobSlots(1, 0);
    const only = manual(log, 'only');
    const onlyRun = none.run('c', only.job);
    await expect(none.run('c', async () => 'never')).rejects.toMatchObject({ code: 'jobs_queue_full', details: { waiting: 0, slots: 1 } });
    only.finish();
    await onlyRun;
    log.splice(log.indexOf('only'), 1);
    for (const j of jobs) {
      j.finish();
      await settle();
    }
    b.finish();
    await Promise.all([...runs, bRun]);
    expect(log).toEqual(['a0', 'a1', 'b0', 'a2']);
  });

  it('tells a job that has to wait how many of its workspace are ahead of it, and only one that waits', async () => {
    const slots = new JobSlots(1, 10);
    const log: string[] = [];
    const waits: Array<[string, number]> = [];
    const jobs = ['a0', 'a1', 'a2'].map((n) => manual(log, n));
    const runs = jobs.map((j, i) => slots.run('a', j.job, undefined, (ahead) => waits.push([`a${i}`, ahead])));
    expect(waits).toEqual([
      ['a1', 0],
      ['a2', 1],
    ]);
    for (const j of jobs) {
      j.finish();
      await settle();
    }
    await Promise.all(runs);
  });

  it('a job whose request is cancelled while it waits leaves the queue and never runs', async () => {
    const slots = new JobSlots(1, 10);
    const log: string[] = [];
    const a = manual(log, 'a');
    const b = manual(log, 'b');
    const c = manual(log, 'c');
    const ac = new AbortController();
    const runA = slots.run('ws', a.job);
    const runB = slots.run('ws', b.job, ac.signal);
    const runC = slots.run('ws', c.job);
    ac.abort(new Error('client gone'));
    await expect(runB).rejects.toThrow('client gone');
    expect(slots.stats().waiting).toEqual({ ws: 1 });
    a.finish();
    await settle();
    c.finish();
    await Promise.all([runA, runC]);
    expect(log).toEqual(['a', 'c']);
    const aborted = new AbortController();
    aborted.abort(new Error('already gone'));
    await expect(slots.run('ws', async () => 'x', aborted.signal)).rejects.toThrow('already gone');
    expect(slots.stats()).toEqual({ running: 0, waiting: {} });
  });

  it('the operator sets both bounds; more slots start waiting jobs at once, fewer take effect as jobs end', async () => {
    const slots = new JobSlots(1, 10);
    const log: string[] = [];
    const jobs = ['a', 'b', 'c', 'd'].map((n) => manual(log, n));
    const runs = jobs.map((j) => slots.run('ws', j.job));
    await settle();
    expect(log).toEqual(['a']);
    slots.configure({ running: 3, waitingPerWorkspace: 10 });
    await settle();
    expect(log).toEqual(['a', 'b', 'c']);
    slots.configure({ running: 1, waitingPerWorkspace: 10 });
    jobs[0].finish();
    jobs[1].finish();
    await settle();
    // Two of three ended, one still runs: with one slot, d still waits.
    expect([log, slots.stats()]).toEqual([['a', 'b', 'c'], { running: 1, waiting: { ws: 1 } }]);
    jobs[2].finish();
    await settle();
    expect(log).toEqual(['a', 'b', 'c', 'd']);
    jobs[3].finish();
    await Promise.all(runs);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-job-config-'));
    try {
      const file = path.join(dir, 'config.json');
      fs.writeFileSync(file, JSON.stringify({ jobs: { running: 1 } }));
      expect(loadOperatorConfig(dir, { configFile: file }, {}).jobs).toEqual({ running: 1, waitingPerWorkspace: DEFAULT_JOB_SLOTS.waitingPerWorkspace });
      fs.writeFileSync(file, JSON.stringify({ jobs: { running: 0 } }));
      expect(() => loadOperatorConfig(dir, { configFile: file }, {})).toThrow(/jobs\.running/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
