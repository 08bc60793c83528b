/**
 * An AbortController made on first use. Hot paths (every HTTP request, every command's prepare) need a
 * signal only when someone reads it — long reads, indexing, computing — and an AbortController per call
 * showed in bench:rpc profiles. `abort` before anyone read the signal is remembered: the signal handed out
 * later is already aborted, with the same reason.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private aborted = false;
  private why: unknown;

  /** Aborts the signal (now, or when it is first read); the first reason wins, as AbortController's does. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.why = reason;
    this.controller?.abort(reason);
  }

  /** Whether abort was called (without making the controller). */
  get isAborted(): boolean {
    return this.aborted;
  }

  /** The reason given to abort (undefined until then). */
  get reason(): unknown {
    return this.why;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }
}
