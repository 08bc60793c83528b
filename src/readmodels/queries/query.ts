import type { z } from 'zod';
import type { RecordedEvent } from '../../events/envelope';
import type { Role } from '../../events/roles';
import type { WorkspaceHandle } from '../../workspaces/registry';
import type { StreamFold } from '../../events/kernel-types';

/**
 * A read model exposed to clients: `review_studio.<name>` answers it once, `watch<Name>` streams it.
 * A query is a pure fold over the events that can affect it plus a pure view of the folded state, so a
 * watcher can fold incrementally (one event → one evolve → maybe one update) and "as of" reads just stop
 * folding at a position.
 */
export interface QueryDefinition<I = any, S = any, R = any> {
  /** e.g. "verdict" → RPC `review_studio.verdict`, subscription `watchVerdict`. */
  name: string;
  description: string;
  input: z.ZodType<I>;
  access: { minRole: Role };
  /** Cheap filter: can this event change the answer for this input? */
  affects(input: I, event: RecordedEvent): boolean;
  /** A fresh fold for this input (rules and other parameters are captured here). */
  fold(input: I, workspace: WorkspaceHandle): Promise<StreamFold<S>> | StreamFold<S>;
  /**
   * Where folding starts: the streams to read (fast path, read stream by stream and filtered by position),
   * or 'all' to read the whole log in order.
   */
  sources(input: I): string[] | 'all';
  view(state: S, input: I): R;
  /**
   * Facts that are not a fold of the log but belong with the answer (the audit's chain status: the rows
   * are only as good as the log behind them). Merged beside `position` and `value` in the RPC and MCP
   * answer (`answerQuery`); not part of watch updates. Read as the log is stored now, whatever `asOf`.
   */
  attach?(workspace: WorkspaceHandle): Promise<Record<string, unknown>>;
}
