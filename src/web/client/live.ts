/// <reference lib="dom" />
/**
 * The page's only channel to the ledger's read side: watch* subscriptions over one WebSocket. Each
 * subscription remembers the global position of the last value it received; after a dropped socket the
 * page reconnects and re-subscribes with `since`, so the server replays exactly what was missed (a
 * resumed subscription keeps its last value until an update arrives). Nothing is polled.
 */

export interface SubscriptionState {
  key: string;
  method: string;
  params: Record<string, unknown>;
  position: number | null;
  value: unknown;
  serverId: string | null;
  error: string | null;
  /** Not in the log (job progress): no position, so a reconnect subscribes afresh instead of resuming. */
  ephemeral: boolean;
}

export interface LiveStats {
  connects: number;
  resumes: number;
  snapshots: number;
  updates: number;
  /** Fresh subscriptions to ephemeral streams (progress), counted apart from the log's snapshots. */
  ephemeral: number;
}

type Reply = { id?: number; result?: any; error?: { message: string; data?: { code?: string } }; method?: string; params?: any };

export class LiveConnection {
  readonly subs = new Map<string, SubscriptionState>();
  readonly stats: LiveStats = { connects: 0, resumes: 0, snapshots: 0, updates: 0, ephemeral: 0 };
  private ws: WebSocket | null = null;
  private byServerId = new Map<string, string>();
  private pending = new Map<number, (r: Reply) => void>();
  private nextId = 1;
  private retryMs = 200;
  private held = false;
  private closedForGood = false;
  connected = false;

  constructor(
    private readonly workspaceId: string,
    /** null: the session cookie authenticates the socket (the sign-in session). */
    private readonly token: string | null,
    private readonly onChange: (key: string | null) => void,
    private readonly onAuthFailure: (message: string) => void,
  ) {}

  watch(key: string, method: string, params: Record<string, unknown>, ephemeral = false): void {
    const previous = this.subs.get(key);
    if (previous && previous.method === method && JSON.stringify(previous.params) === JSON.stringify(params)) return;
    if (previous?.serverId && this.connected) this.send('unwatch', { subscription: previous.serverId }, () => undefined);
    if (previous?.serverId) this.byServerId.delete(previous.serverId);
    this.subs.set(key, { key, method, params, position: null, value: previous?.value ?? null, serverId: null, error: null, ephemeral });
    if (this.connected) this.subscribe(key);
  }

  connect(): void {
    if (this.closedForGood) return;
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${proto}//${location.host}/rpc${this.token ? `?access_token=${encodeURIComponent(this.token)}` : ''}`);
    this.ws = ws;
    ws.onopen = () => {
      this.connected = true;
      this.retryMs = 200;
      this.stats.connects++;
      for (const key of this.subs.keys()) this.subscribe(key);
      this.onChange(null);
    };
    ws.onmessage = (ev) => this.onFrame(String(ev.data));
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.connected = false;
      this.ws = null;
      this.byServerId.clear();
      for (const s of this.subs.values()) s.serverId = null;
      for (const cb of this.pending.values()) cb({ error: { message: 'connection lost' } });
      this.pending.clear();
      this.onChange(null);
      this.scheduleReconnect();
    };
  }

  /** Test and operator hook: drop the socket as a network failure would. */
  drop(): void {
    this.ws?.close(4000, 'dropped');
  }

  /** While held, a dropped socket stays down (lets a test change things while the page is offline). */
  hold(on: boolean): void {
    this.held = on;
    if (!on && !this.ws) this.connect();
  }

  close(): void {
    this.closedForGood = true;
    this.ws?.close();
  }

  private scheduleReconnect(): void {
    if (this.held || this.closedForGood) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 3000);
    setTimeout(() => {
      if (!this.ws && !this.held) this.connect();
    }, wait);
  }

  private send(method: string, params: Record<string, unknown>, cb: (r: Reply) => void): void {
    if (!this.ws || !this.connected) return cb({ error: { message: 'not connected' } });
    const id = this.nextId++;
    this.pending.set(id, cb);
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  }

  private subscribe(key: string): void {
    const sub = this.subs.get(key)!;
    const params: Record<string, unknown> = { workspace_id: this.workspaceId, ...sub.params };
    if (sub.position !== null && !sub.ephemeral) params.since = sub.position;
    const asked = sub.params;
    this.send(sub.method, params, (r) => {
      const current = this.subs.get(key);
      if (!current || current.params !== asked) return; // re-targeted meanwhile
      if (r.error) {
        const code = r.error.data?.code;
        if (code === 'unauthorized' || code === 'forbidden') return this.onAuthFailure(r.error.message);
        if (code === 'invalid_since') {
          // The server cannot resume from there (e.g. another store): start over from a snapshot.
          current.position = null;
          return this.subscribe(key);
        }
        if (r.error.message !== 'connection lost') current.error = r.error.message;
        return this.onChange(key);
      }
      current.error = null;
      current.serverId = r.result.subscription;
      this.byServerId.set(r.result.subscription, key);
      if (current.ephemeral) {
        this.stats.ephemeral++;
        current.value = { jobs: r.result.jobs ?? [] };
      } else if (r.result.resumed) this.stats.resumes++;
      else {
        this.stats.snapshots++;
        current.value = r.result.snapshot;
        current.position = r.result.position;
      }
      this.onChange(key);
    });
  }

  private onFrame(text: string): void {
    let msg: Reply | Reply[];
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) {
      if (m.method === 'watch.update') {
        const key = this.byServerId.get(m.params.subscription);
        const sub = key ? this.subs.get(key) : undefined;
        if (!sub) continue;
        if (sub.ephemeral) {
          // Progress updates are the latest state of one job: merge by job id.
          const jobs = ((sub.value as { jobs?: Array<{ job: string }> } | null)?.jobs ?? []).filter((j) => j.job !== m.params.value?.job);
          sub.value = { jobs: [...jobs, m.params.value] };
          this.onChange(sub.key);
          continue;
        }
        sub.value = m.params.value;
        sub.position = m.params.position;
        this.stats.updates++;
        this.onChange(sub.key);
      } else if (m.method === 'watch.error') {
        // The server ended a watch (shutting down, fold failed): reconnecting resumes every subscription.
        this.drop();
      } else if (typeof m.id === 'number') {
        const cb = this.pending.get(m.id);
        this.pending.delete(m.id);
        cb?.(m);
      }
    }
  }
}
