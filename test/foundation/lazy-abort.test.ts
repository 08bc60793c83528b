import { LazyAbort } from '../../src/lazy-abort';

describe('LazyAbort: an AbortController made on first use', () => {
  test('a signal read before abort is aborted by it, with its reason', () => {
    const a = new LazyAbort();
    const signal = a.signal;
    expect(signal.aborted).toBe(false);
    a.abort(new Error('client gone'));
    expect(signal.aborted).toBe(true);
    expect(() => signal.throwIfAborted()).toThrow('client gone');
  });

  test('abort before anyone read the signal: the signal handed out later is already aborted, with that reason', () => {
    const a = new LazyAbort();
    expect(a.isAborted).toBe(false);
    a.abort(new Error('token revoked'));
    expect(a.isAborted).toBe(true);
    expect(a.signal.aborted).toBe(true);
    expect(() => a.signal.throwIfAborted()).toThrow('token revoked');
  });

  test('the first reason wins, as with AbortController; the same signal every time', () => {
    const a = new LazyAbort();
    a.abort('first');
    a.abort('second');
    expect(a.reason).toBe('first');
    expect(a.signal.reason).toBe('first');
    expect(a.signal).toBe(a.signal);
  });

  test('never aborted: the signal stays quiet', () => {
    const a = new LazyAbort();
    expect(a.signal.aborted).toBe(false);
    expect(a.reason).toBeUndefined();
  });
});
