import { eventDefinition, validateEventData } from '../../src/events/catalogue';
import { newUuidV7 } from '../../src/events/ids';
import type { RecordedEvent } from '../../src/events/envelope';
import type { Role } from '../../src/events/roles';
import type { WorkspaceHandle } from '../../src/workspaces/registry';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';

export { OWNER };
export const WS = 'acme';
export const REPO = 'web-app';
export const BASE = 'b'.repeat(40);
export const HEAD1 = '1'.repeat(40);
export const HEAD2 = '2'.repeat(40);
export const ALICE = { principal: 'agent:alice', role: 'member' as Role };
export const BOB = { principal: 'agent:bob', role: 'member' as Role };
export const CAROL = { principal: 'user:carol', role: 'member' as Role };

export type Actor = { principal: string; role: Role };

export async function reviewFixture() {
  const f = await ledgerFixture({ workspaceId: WS });
  const ws = await f.ledger.workspace(WS);
  const run = (command: string, actor: Actor, payload: Record<string, unknown>, key = newUuidV7()) =>
    f.ledger.run(command, WS, { principal: actor.principal as any, role: actor.role, idempotencyKey: key }, payload);
  const pr = (prNumber = 7) => ({ repoId: REPO, prNumber });
  return {
    ...f,
    ws,
    run,
    pr,
    count: async () => ws.store.headPosition(),
    request: (prNumber = 7, headSha = HEAD1, actor: Actor = ALICE) => run('requestReview', actor, { ...pr(prNumber), baseSha: BASE, headSha }),
    async file(actor: Actor, node: Partial<NodeInput> = {}, prNumber = 7): Promise<string> {
      const out = await run('addReviewNode', actor, { ...pr(prNumber), node: nodeInput(node) });
      return (out.response.result as { nodeId: string }).nodeId;
    },
    append: (streamId: string, type: string, data: unknown, principal = 'system:test') => appendRaw(ws, streamId, type, data, principal),
  };
}

export interface NodeInput {
  kind: string;
  priority: string;
  triage: { category: string; severity: string; effort: string };
  anchor?: { path: string; startLine: number; endLine: number; symbolId?: string };
  confidence: number;
  title: string;
  body: string;
  brief: string;
}

let counter = 0;
export function nodeInput(over: Partial<NodeInput> = {}): NodeInput {
  counter++;
  return {
    kind: 'bug',
    priority: 'P2',
    triage: { category: 'correctness', severity: 'medium', effort: 'small' },
    anchor: { path: 'src/app.ts', startLine: 10 + counter, endLine: 12 + counter },
    confidence: 0.8,
    title: `finding ${counter}`,
    body: 'details',
    brief: 'engineer',
    ...over,
  };
}

/** Appends an event straight to the store, bypassing every command (forgeries, foreign events). */
export async function appendRaw(ws: WorkspaceHandle, streamId: string, type: string, data: unknown, principal: string): Promise<RecordedEvent> {
  const def = eventDefinition(type);
  const eventId = newUuidV7();
  const rev = await ws.store.streamRevision(streamId);
  await ws.store.append(streamId, rev < 0 ? 'no_stream' : rev, [
    {
      eventId,
      type,
      schemaVersion: def.schemaVersion,
      data: validateEventData(type, data),
      metadata: { principal: principal as any, workspaceId: ws.id, correlationId: eventId, causationId: null, occurredAt: new Date().toISOString() },
    },
  ]);
  return (await ws.store.findEvent(eventId, streamId))!;
}

export function computedEvent(headSha: string, over: { apiContract?: unknown; visual?: unknown } = {}) {
  return {
    baseSha: BASE,
    headSha,
    engineVersion: 'test-1',
    inputsDigest: 'c'.repeat(64),
    cohorts: [],
    dependencyDiffs: [],
    apiContract: over.apiContract ?? { status: 'not_applicable', reason: 'no API spec file changed', specs: [], changes: [] },
    visual: over.visual ?? { status: 'not_applicable', reason: 'no snapshots', snapshots: [] },
    changedFiles: [],
    metrics: {},
  };
}
