import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { prDecisionFold, prFold, type PrState } from '../../src/review/pr-state';
import { appendLog, generateLog } from '../readmodels/generate';

/**
 * The commands that decide on a PR fold it with prDecisionFold (node bodies reduced to what the verdict
 * reads, so the fold cache holds ~2.5× as many PRs). Everything a decider reads must be what prFold has:
 * on generated logs (rounds, confirmations, dismissals, finalizations), the two states
 * differ in nothing but the bodies' other fields.
 */
describe('prDecisionFold is prFold without node bodies', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-decision-fold-'));
    store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'df', synchronous: 'OFF' });
    await appendLog(store, generateLog({ seed: 23, prs: 40, principals: 8, repos: 2, events: 6000 }), 200);
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('equals the full fold with every node body cut to priority and confidence, on every PR stream', async () => {
    const streams = new Set<string>();
    for await (const e of store.readAll()) if (e.streamId.startsWith('pr-')) streams.add(e.streamId);
    expect(streams.size).toBeGreaterThan(20);
    let nodes = 0;
    for (const s of streams) {
      let full: PrState = prFold.initialState();
      let lean = prDecisionFold.initialState();
      for await (const e of store.readStream(s)) {
        full = prFold.evolve(full, e);
        lean = prDecisionFold.evolve(lean, e);
      }
      const cut = JSON.parse(JSON.stringify(full)) as PrState;
      for (const n of Object.values(cut.nodes)) (n as { node: unknown }).node = { priority: n.node.priority, confidence: n.node.confidence };
      expect(JSON.parse(JSON.stringify(lean))).toEqual(cut);
      nodes += full.nodeCount;
    }
    // The log exercised what differs between the two: many nodes. (Carried-over findings differ only in
    // the anchors the full fold moves; the carry tests in test/review run every carrying command.)
    expect(nodes).toBeGreaterThan(500);
  });
});
