import { RateWindow } from '../../src/security/rate-window';

/** The per-client start limit of sign-ins (src/security/rate-window.ts), on a clock the test moves. */
describe('RateWindow', () => {
  let t = 0;
  const clock = () => t;
  beforeEach(() => (t = 1_000_000));

  it('admits `limit` events per key per window, then answers the wait until the window ends', () => {
    const w = new RateWindow(3, 60_000, 100, clock);
    expect([w.take('a'), w.take('a'), w.take('a')]).toEqual([0, 0, 0]);
    t += 10_000;
    expect(w.take('a')).toBe(50_000);
    // A refused event is not counted: the wait only shrinks with time.
    t += 49_999;
    expect(w.take('a')).toBe(1);
    t += 1;
    expect(w.take('a')).toBe(0);
  });

  it('counts each key apart', () => {
    const w = new RateWindow(1, 60_000, 100, clock);
    expect([w.take('a'), w.take('b'), w.take('a'), w.take('b'), w.take('c')]).toEqual([0, 0, 60_000, 60_000, 0]);
  });

  it('holds at most maxKeys: expired windows go first, then the oldest', () => {
    const w = new RateWindow(1, 60_000, 3, clock);
    w.take('old');
    t += 60_000;
    w.take('b');
    w.take('c');
    // 'old' has expired: it goes, the live ones stay limited.
    w.take('d');
    expect(w.size).toBe(3);
    expect([w.take('b'), w.take('c'), w.take('d')]).toEqual([60_000, 60_000, 60_000]);
    // None expired: the oldest ('b') goes to make room, and starts afresh when it comes back.
    w.take('e');
    expect(w.size).toBe(3);
    expect(w.take('b')).toBe(0);
  });
});
