import type { NewEvent } from '../../src/events/envelope';
import type { EventStore } from '../../src/events/store/port';

/** mulberry32 (test/support/prng.ts): the same seed, the same sequence on every machine. */
import { mulberry32 as prng } from '../support/prng';

export { prng };

export interface LogShape {
  seed: number;
  /** PR streams the acts spread over. */
  prs: number;
  /** Members (humans and agents), with tokens issued down a chain. */
  principals: number;
  events: number;
  repos?: number;
  workspaceId?: string;
  /** Distinct fingerprints that half of the findings share (the same problem reported again; default 400). */
  sharedFingerprints?: number;
  /** ISO start of the log; each event is 1–2000 ms after the previous one. */
  startAt?: string;
}

export interface Append {
  streamId: string;
  events: NewEvent[];
}

const hex = (r: () => number, n: number): string => {
  let s = '';
  while (s.length < n) s += Math.floor(r() * 0x100000000).toString(16).padStart(8, '0');
  return s.slice(0, n);
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const RULES_V1 = require('../../src/rules/v1.json') as { rulesVersion: string; verdict: Record<string, unknown> };
/** Log sizes at which the rules are activated again (rare in a workspace's life). */
const RULE_ACTIVATIONS_AT = [100, 400, 50_000];
const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
/** A stable 64-hex fingerprint per symbol (FNV-1a, repeated with a salt per 8 digits). */
const fingerprintOf = (symbolId: string): string => {
  let out = '';
  for (let salt = 0; out.length < 64; salt++) {
    let h = 0x811c9dc5 ^ salt;
    for (let i = 0; i < symbolId.length; i++) h = Math.imul(h ^ symbolId.charCodeAt(i), 16777619) >>> 0;
    out += h.toString(16).padStart(8, '0');
  }
  return out;
};
const SYMBOLS = 200;

/**
 * A realistic workspace log as appends: members and tokens on the workspace stream (tokens issued by
 * earlier tokens, so issuer chains are several links deep), and per PR a review request, findings
 * anchored to symbols, confirmations, dismissals, resolutions, contract and visual decisions,
 * finalization and publication. Some acts carry no role (as older events do), so the audit resolves
 * it from the membership as of the act.
 */
export function* generateLog(shape: LogShape): Generator<Append> {
  const r = prng(shape.seed);
  const ws = shape.workspaceId ?? 'scale';
  const repos = shape.repos ?? 4;
  let clock = Date.parse(shape.startAt ?? '2025-01-01T00:00:00.000Z');
  let seq = 0;
  let emitted = 0;
  const principals: string[] = [];
  const roles = new Map<string, string>();
  const tokens: Array<{ id: string; principal: string }> = [];
  const nodes = new Map<string, string[]>();
  const heads = new Map<string, { headSha: string; round: number }>();
  const fingerprints = new Map<string, string>();
  let activations = 0;
  const sharedFingerprints = Math.max(1, Math.floor((shape.sharedFingerprints ?? 400) / 20));
  const eventId = (): string => {
    seq++;
    // UUIDv7-shaped and unique: time prefix from the log clock, then the sequence.
    const t = clock.toString(16).padStart(12, '0');
    const s = seq.toString(16).padStart(20, '0');
    return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${s.slice(0, 3)}-8${s.slice(3, 6)}-${s.slice(8, 20)}`;
  };
  const meta = (principal: string, extra: Record<string, unknown> = {}): NewEvent['metadata'] => {
    clock += 1 + Math.floor(r() * 2000);
    const tok = tokens.length && r() < 0.8 ? tokens[Math.floor(r() * tokens.length)] : null;
    return {
      principal,
      workspaceId: ws,
      correlationId: `c${seq}`,
      causationId: null,
      occurredAt: new Date(clock).toISOString(),
      ...(r() < 0.7 ? { role: roles.get(principal) ?? 'member' } : {}),
      ...(tok ? { tokenId: tok.id } : {}),
      via: ['rpc', 'mcp', 'cli', 'webhook'][Math.floor(r() * 4)],
      ...extra,
    };
  };
  const ev = (type: string, data: unknown, principal: string): NewEvent => ({ eventId: eventId(), type, schemaVersion: 1, data, metadata: meta(principal) });
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const emit = function* (a: Append): Generator<Append> {
    emitted += a.events.length;
    yield a;
  };

  const owner = 'user:owner';
  principals.push(owner);
  roles.set(owner, 'owner');
  yield* emit({ streamId: 'workspace', events: [ev('MemberAdded', { principal: owner, role: 'owner' }, 'system:server')] });
  for (let i = 1; i < shape.principals && emitted < shape.events; i++) {
    const p = i % 3 === 0 ? `agent:bot-${i}` : `user:u${i}`;
    const role = p.startsWith('agent:') ? 'member' : ROLES[1 + Math.floor(r() * 3)];
    principals.push(p);
    roles.set(p, role);
    const issuer = tokens.length ? pick(tokens).principal : owner;
    const tokenId = `tok-${i}`;
    yield* emit({
      streamId: 'workspace',
      events: [ev('MemberAdded', { principal: p, role }, issuer), ev('ApiTokenIssued', { tokenId, tokenHash: hex(r, 64), principal: p, role, ...(i % 4 === 1 && p.startsWith('user:') ? { signIn: { issuer: 'https://idp.example', subject: `sub-${i}`, expiresAt: '2099-01-01T00:00:00.000Z', method: 'code' } } : {}) }, issuer)],
    });
    tokens.push({ id: tokenId, principal: p });
  }
  const humans = principals.filter((p) => p.startsWith('user:'));
  while (emitted < shape.events) {
    const x = r();
    if (activations < RULE_ACTIVATIONS_AT.length && emitted >= RULE_ACTIVATIONS_AT[activations]) {
      activations++;
      // A few times in the log's life the rules are activated again (a stricter block threshold): verdicts as of a bound use the rules of then.
      const document = { ...RULES_V1, rulesVersion: `v1-t${seq}`, verdict: { ...RULES_V1.verdict, blockThreshold: pick([0.5, 0.7, 0.9]) } };
      yield* emit({ streamId: 'workspace', events: [ev('RulesVersionActivated', { rulesVersion: document.rulesVersion, document }, owner)] });
      continue;
    }
    if (x < 0.01) {
      // Membership moves under the acts: the audit's role is the one as of each act.
      const p = pick(principals.slice(1));
      const to = ROLES[1 + Math.floor(r() * 3)];
      const from = roles.get(p) ?? 'member';
      roles.set(p, to);
      yield* emit({ streamId: 'workspace', events: [ev('MemberRoleChanged', { principal: p, from, to }, owner)] });
      continue;
    }
    const repo = `repo${Math.floor(r() * repos)}`;
    const pr = 1 + Math.floor(r() * Math.max(1, Math.floor(shape.prs / repos)));
    const streamId = `pr-${repo}-${pr}`;
    const by = pick(principals);
    const dropRole = r() < 0.3;
    const role = dropRole ? undefined : roles.get(by) ?? 'member';
    const withRole = (d: Record<string, unknown>) => (role === undefined ? d : { ...d, role });
    const ids = nodes.get(streamId) ?? [];
    const review = heads.get(streamId);
    if (!review || x < 0.06) {
      const headSha = hex(r, 40);
      yield* emit({
        streamId,
        events: [ev('ReviewRequested', { repoId: repo, prNumber: pr, baseSha: hex(r, 40), headSha, level: 'balanced', roster: [{ id: 'correctness', focus: 'correctness' }], rulesVersion: 'v1', requestedBy: by, role: role ?? 'member' }, by)],
      });
      nodes.set(streamId, ids);
      heads.set(streamId, { headSha, round: review?.round ?? 1 });
      continue;
    }
    if (x < 0.075) {
      // The computation at the current head: cohorts of definition fragments (nested, so the innermost
      // one wins), some of them arriving after nodes anchored by lines only were filed at that head.
      const cohorts = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, c) => {
        const mod = Math.floor(r() * 20);
        const fn = Math.floor(r() * SYMBOLS);
        return {
          key: `cohort-${c}-${mod}`,
          title: `mod${mod} Class${fn}`,
          grouping: 'semantic',
          files: [`src/mod${mod}.ts`],
          anchors: [`src/mod${mod}.ts#Class${fn}`],
          blastRadius: { dependents: { files: [], symbols: [], depth: 0, truncated: false }, publicApi: [], tests: [], score: 0 },
          readingOrder: { order: 'callee-first', steps: [] },
          rank: c + 1,
          clues: [],
          fragments: [
            { path: `src/mod${mod}.ts`, side: 'head', startLine: 1, endLine: 40, symbolId: `src/mod${mod}.ts#Class${fn}` },
            { path: `src/mod${mod}.ts`, side: 'head', startLine: 8, endLine: 16, symbolId: `src/mod${mod}.ts#Class${fn}.fn${fn}` },
            { path: `src/mod${mod}.ts`, side: 'base', startLine: 8, endLine: 30, symbolId: `src/mod${mod}.ts#old${fn}` },
            { path: `src/mod${mod}.ts`, side: 'head', startLine: 41, endLine: 45 },
          ],
        };
      });
      yield* emit({
        streamId,
        events: [ev('ReviewComputed', { baseSha: hex(r, 40), headSha: review.headSha, engineVersion: 'gen', inputsDigest: hex(r, 64), cohorts, dependencyDiffs: [], apiContract: { status: 'not_applicable', specs: [], changes: [] }, visual: { status: 'not_applicable', snapshots: [] }, changedFiles: [], metrics: {} }, 'system:compute')],
      });
      continue;
    }
    if (x < 0.085) {
      // The head moved: the next round reviews it (earlier rounds' nodes become this PR's history).
      review.round++;
      review.headSha = hex(r, 40);
      yield* emit({ streamId, events: [ev('ReviewRoundStarted', { round: review.round, baseSha: hex(r, 40), headSha: review.headSha, requestedBy: by, role: role ?? 'member' }, by)] });
      continue;
    }
    if (x < 0.45 || ids.length === 0) {
      const nodeId = `n${seq}`;
      ids.push(nodeId);
      const mod = Math.floor(r() * 20);
      const symbolId = `src/mod${mod}.ts#fn${Math.floor(r() * SYMBOLS)}`;
      const start = 1 + Math.floor(r() * 44);
      // Most reviewers name the symbol; some anchor by lines only (resolved through the computation's fragments, or not at all).
      // Half the findings share one of a few fingerprints per module (the same problem reported again, in another PR):
      // a dismissal of one marks the later ones "previously dismissed".
      const fingerprint = r() < 0.5 ? fingerprintOf(`${symbolId.split('#')[0]}#${Math.floor(r() * sharedFingerprints)}`) : hex(r, 64);
      fingerprints.set(nodeId, fingerprint);
      const anchor = r() < 0.7 ? { path: symbolId.split('#')[0], startLine: 10, endLine: 12, symbolId } : { path: `src/mod${mod}.ts`, side: r() < 0.2 ? 'LEFT' : 'RIGHT', startLine: start, endLine: start + Math.floor(r() * 6) };
      yield* emit({
        streamId,
        events: [
          ev(
            'ReviewNodeFiled',
            {
              nodeId,
              round: review.round,
              headSha: review.headSha,
              fingerprint,
              role: role ?? 'member',
              node: {
                kind: 'finding',
                priority: pick(['P0', 'P1', 'P2', 'P3']),
                triage: { category: pick(['security', 'correctness', 'performance']), severity: pick(['high', 'medium', 'low']), effort: 'small' },
                anchor,
                confidence: 0.8,
                title: `finding ${seq}`,
                body: `The call at line ${Math.floor(r() * 500)} can fail when the input is empty.`,
                reviewer: { principal: by, brief: 'correctness' },
              },
            },
            by,
          ),
        ],
      });
      continue;
    }
    const nodeId = pick(ids);
    const y = r();
    let e: NewEvent;
    if (y < 0.45) e = ev('ReviewNodeConfirmed', withRole({ nodeId, by, ...(r() < 0.3 ? { note: 'agreed' } : {}) }), by);
    else if (y < 0.6) e = ev('ReviewNodeDismissed', withRole({ nodeId, by, reason: 'not reachable', fingerprint: fingerprints.get(nodeId) ?? hex(r, 64) }), by);
    else if (y < 0.72) e = ev('ReviewNodeResolved', withRole({ nodeId, by, reason: 'fixed in head' }), by);
    else if (y < 0.8) e = ev('ContractChangeDecided', withRole({ changeId: `chg-${seq}`, decision: pick(['approved', 'rejected']), by, ...(r() < 0.5 ? { note: 'clients migrated' } : {}) }), by);
    else if (y < 0.86) e = ev('VisualChangeApproved', withRole({ snapshotId: `snap-${seq}`, approvalKey: hex(r, 16), by }), pick(humans));
    else if (y < 0.92)
      e = ev('ReviewFinalized', withRole({ round: 1, headSha: hex(r, 40), verdict: pick(['ship', 'hold', 'block']), confidence: 0.9, rulesVersion: 'v1', reasons: [], consensusNodeIds: [], walkthrough: '', tokenAxes: {}, by }), by);
    else if (y < 0.96) e = ev('PublishRequested', withRole({ requestId: `req-${seq}`, selection: 'consensus', needsApproval: by.startsWith('agent:'), by }), by);
    else if (y < 0.98) e = ev('PublishApproved', withRole({ requestId: `req-${seq}`, by }), pick(humans));
    else e = ev('ReviewPublished', withRole({ forgeReviewId: `gh-${seq}`, event: pick(['APPROVE', 'COMMENT']), inline: [], folded: [], fallbackUsed: r() < 0.1, publishedBy: by }), by);
    yield* emit({ streamId, events: [e] });
    // A dismissal also leaves a suppression fact in the workspace stream (src/commands/dismiss-node.ts).
    if (e.type === 'ReviewNodeDismissed') {
      const d = e.data as { nodeId: string; reason: string; fingerprint: string };
      yield* emit({ streamId: 'workspace', events: [ev('SuppressionFactRecorded', { fingerprint: d.fingerprint, repoId: repo, prNumber: pr, nodeId: d.nodeId, reason: d.reason, confidence: 'low' }, by)] });
    }
  }
}

/** Appends the log through the store's group commit, `concurrency` appends per turn. */
export async function appendLog(store: EventStore, appends: Iterable<Append>, concurrency = 200, onProgress?: (events: number) => void): Promise<number> {
  let batch: Promise<unknown>[] = [];
  let n = 0;
  for (const a of appends) {
    batch.push(store.append(a.streamId, 'any', a.events));
    n += a.events.length;
    if (batch.length >= concurrency) {
      await Promise.all(batch);
      batch = [];
      onProgress?.(n);
    }
  }
  await Promise.all(batch);
  return n;
}
