import { DomainError } from '../domain-error';
import type { Principal } from '../events/envelope';
import { workspaceFold, type WorkspaceState } from './workspace-state';
import { retainWorkspace, type WorkspaceHandle } from './registry';
import { loadStream } from './load-stream';
import { effectiveRole } from './provisioning';
import { type Role, roleAtLeast } from '../events/roles';
import { Slot } from '../slots';

/**
 * Ends long-lived streams (WebSocket subscriptions, SSE streams) whose access was taken away: a revoked
 * token, a removed member, a demotion below what the stream needs. A call is re-authenticated on every
 * request; a stream is authenticated once, so without this a revoked token would keep receiving data.
 *
 * Per workspace with open streams, one timer looks at the workspace stream every CHECK_MS (one cached
 * fold read: nothing when nothing changed). Polling rather than a store subscription because it also sees
 * revocations committed by other processes (the CLI) on every store, and costs one query per workspace —
 * not per stream — per tick. The promise is "ended within 1 s"; CHECK_MS leaves room for a loaded machine.
 */
export const CHECK_MS = 200;

/** Ledger service holding its AccessGuard (commands reach it through CommandEnv.services). */
export const ACCESS_GUARD_SERVICE = new Slot<AccessGuard>('security.accessGuard');

/** A stream to end when its token stops granting `minRole`. */
export interface GuardedStream {
  principal: Principal;
  tokenId: string;
  minRole: Role;
  /** False once the stream ended by itself (unsubscribed, disconnected): the guard forgets it. */
  isOpen(): boolean;
  /** Ends the stream, telling the client why. Called at most once. */
  end(reason: DomainError): void;
}

/**
 * What a command started by `tokenId` gets when that token stops granting it while it runs: its result
 * (an index, a computed review) is not recorded.
 */
export function jobStopped(command: string, reason: DomainError): DomainError {
  return new DomainError(reason.code, `${command}: ${reason.message.replace(/; the stream is closed$/, '')}; the ${command} it started was stopped and nothing it computed is recorded`, reason.details);
}

/** Why a token no longer grants a stream, or null while it still does. `now`: a sign-in session past its end no longer does. */
export function revocationOf(state: WorkspaceState, s: Pick<GuardedStream, 'principal' | 'tokenId' | 'minRole'>, now?: Date): DomainError | null {
  const token = state.tokens[s.tokenId];
  if (!token || token.revoked) return new DomainError('token_revoked', `Authorization: token ${s.tokenId} was revoked; the stream is closed`, { tokenId: s.tokenId });
  if (now && token.signIn && Date.parse(token.signIn.expiresAt) <= now.getTime()) {
    return new DomainError('session_expired', `Authorization: the sign-in of ${s.principal} (token ${s.tokenId}) expired at ${token.signIn.expiresAt}; sign in again; the stream is closed`, { tokenId: s.tokenId });
  }
  const role = effectiveRole(s.principal, token.role, state.members[s.principal]);
  if (role === null) return new DomainError('member_removed', `Authorization: ${s.principal} is no longer a member of this workspace; the stream is closed`, { principal: s.principal });
  if (!roleAtLeast(role, s.minRole)) return new DomainError('role_changed', `Authorization: ${s.principal} is now ${role}; this stream needs ${s.minRole} or above and is closed`, { principal: s.principal, role });
  return null;
}

interface WorkspaceWatch {
  workspace: WorkspaceHandle;
  streams: Set<GuardedStream>;
  /** The same streams by principal (closed ones leave lazily): what `admit` counts. */
  byPrincipal: Map<string, Set<GuardedStream>>;
  revision: number;
  /** The earliest end of a sign-in session among the streams (ms), or Infinity: checked then even if nothing was appended. */
  nextExpiry: number;
  timer: NodeJS.Timeout;
  checking: boolean;
  /** Keeps the workspace open while streams on it are guarded. */
  release: () => void;
}

export class AccessGuard {
  private readonly watches = new Map<string, WorkspaceWatch>();

  /** `clock`: the ledger's (a session's end is compared with it, as authenticate does). */
  constructor(private readonly clock: () => Date = () => new Date()) {}

  /** Guards a stream opened by an authenticated caller; it is forgotten once `isOpen()` turns false. */
  hold(workspace: WorkspaceHandle, stream: GuardedStream): void {
    let w = this.watches.get(workspace.id);
    if (!w) {
      const entry: WorkspaceWatch = { workspace, streams: new Set(), byPrincipal: new Map(), revision: -2, nextExpiry: Infinity, checking: false, timer: setInterval(() => void this.check(entry), CHECK_MS), release: retainWorkspace(workspace) };
      entry.timer.unref();
      this.watches.set(workspace.id, (w = entry));
    }
    w.streams.add(stream);
    let mine = w.byPrincipal.get(stream.principal);
    if (!mine) w.byPrincipal.set(stream.principal, (mine = new Set()));
    mine.add(stream);
    // A new stream may hold a session that ends sooner: the next tick looks again.
    w.revision = -2;
  }

  /**
   * Refuses a new stream of `principal` in `workspace` when it already holds `max` open ones over all its
   * connections and transports (WebSocket, SSE, progress): the per-connection limit alone let one token
   * hold 256 on each of any number of connections, ~14 KB of server memory each (2,048 verdict watches
   * took 29 MiB). Called before the stream is created.
   */
  admit(workspace: WorkspaceHandle, principal: string, max: number, what: string): void {
    const mine = this.watches.get(workspace.id)?.byPrincipal.get(principal);
    if (!mine) return;
    for (const s of mine) if (!s.isOpen()) mine.delete(s);
    if (mine.size >= max) throw new DomainError('too_many_subscriptions', `${what}: ${principal} holds ${max} subscriptions in workspace ${workspace.id} over all its connections; close some first`, { limit: max });
  }

  /** Open guarded streams (for tests and health figures). */
  size(): number {
    let n = 0;
    for (const w of this.watches.values()) n += w.streams.size;
    return n;
  }

  private async check(w: WorkspaceWatch): Promise<void> {
    if (w.checking) return;
    w.checking = true;
    try {
      for (const s of w.streams) if (!s.isOpen()) this.forget(w, s);
      if (w.streams.size === 0) return this.drop(w);
      const { state, revision } = await loadStream(workspaceFold, w.workspace, 'workspace');
      const now = this.clock();
      if (revision === w.revision && now.getTime() < w.nextExpiry) return;
      w.revision = revision;
      w.nextExpiry = Infinity;
      for (const s of [...w.streams]) {
        const reason = revocationOf(state, s, now);
        if (!reason) {
          const end = state.tokens[s.tokenId]?.signIn?.expiresAt;
          if (end) w.nextExpiry = Math.min(w.nextExpiry, Date.parse(end));
          continue;
        }
        this.forget(w, s);
        s.end(reason);
      }
    } catch (err) {
      // The store is away for now (an outage): keep guarding, the next tick checks again.
      if ((err as { code?: unknown }).code === 'store_unavailable') return;
      // The store closed under us (shutdown): the transports end their streams themselves.
      this.drop(w);
    } finally {
      w.checking = false;
    }
  }

  private forget(w: WorkspaceWatch, s: GuardedStream): void {
    w.streams.delete(s);
    const mine = w.byPrincipal.get(s.principal);
    if (mine?.delete(s) && mine.size === 0) w.byPrincipal.delete(s.principal);
  }

  private drop(w: WorkspaceWatch): void {
    clearInterval(w.timer);
    w.release();
    if (this.watches.get(w.workspace.id) === w) this.watches.delete(w.workspace.id);
  }

  close(): void {
    for (const w of [...this.watches.values()]) this.drop(w);
  }
}

// Keyed by the ledger object (any object): one guard per ledger, without importing the Ledger type.
const guards = new WeakMap<object, AccessGuard>();

/** The ledger's one guard (every transport of a server shares it). */
export function accessGuardFor(ledger: object): AccessGuard {
  let g = guards.get(ledger);
  const clock = (ledger as { clock?: () => Date }).clock;
  if (!g) guards.set(ledger, (g = new AccessGuard(typeof clock === 'function' ? () => clock.call(ledger) : undefined)));
  return g;
}
