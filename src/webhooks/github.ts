import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../domain-error';
import { isEvent, type EventOfType } from '../events/catalogue/event-types';
import type { Ledger } from '../ledger';
import type { WorkspaceHandle } from '../workspaces/registry';
import { readWebhookSecret } from './secrets';
import { parseCheckRunDelivery, parseCheckSuiteDelivery, parsePullRequestDelivery } from './schemas';
import { Slot } from '../slots';

export const WEBHOOK_PRINCIPAL = 'system:github-webhook' as const;

/** What a head observed through a webhook on a repo configured with `autoRecompute` starts. */
export const AUTO_RECOMPUTE_COMMAND = 'computeReview';

export interface WebhookDelivery {
  workspaceId: unknown;
  event: string | undefined;
  deliveryId: string | undefined;
  signature: string | undefined;
  body: Buffer;
}

export interface WebhookOutcome {
  status: number;
  body: Record<string, unknown>;
}

/**
 * `sha256=<64 lowercase hex>` over the exact body bytes, compared in constant time. The header must be
 * exactly that: Buffer.from(…, 'hex') stops at the first non-hex character, so without the pattern a
 * valid signature followed by garbage would pass.
 */
export function verifySignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/.test(header)) return false;
  const presented = Buffer.from(header.slice(7), 'hex');
  const expected = createHmac('sha256', secret).update(body).digest();
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

export const signBody = (secret: string, body: Buffer | string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * The idempotency key of the n-th command a delivery produces: a UUIDv7 whose bits come from the digest
 * of the signed body. The signature covers the body only, not X-GitHub-Delivery, so the body is what
 * identifies a delivery: a redelivery (same id, same body) and a captured delivery replayed under a new
 * id both replay instead of recording twice. The timestamp is the payload's own time, so the key is the
 * same every time.
 */
export function deliveryKey(workspaceId: string, bodyDigest: string, n: number, at: number): string {
  const h = createHash('sha256').update(`${workspaceId}/${bodyDigest}/${n}`).digest('hex');
  const ms = Math.max(0, Math.min(at, 2 ** 48 - 1)).toString(16).padStart(12, '0');
  const hex = ms + '7' + h.slice(0, 3) + ((parseInt(h[3], 16) & 0x3) | 0x8).toString(16) + h.slice(4, 19);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

interface RepoRef {
  repoId: string;
  autoRecompute: boolean;
}

const REPO_INDEX = new Slot<{ position: number; byName: Map<string, RepoRef> }>('webhooks.repoIndex');

/** GitHub `owner/name` (lower-cased) → registered repo, folded from the log and kept current by position. */
async function findRepo(ws: WorkspaceHandle, fullName: string): Promise<RepoRef | undefined> {
  const index = ws.cache.getOrSet(REPO_INDEX, () => ({ position: 0, byName: new Map() }));
  for await (const e of ws.store.readAll({ after: index.position })) {
    index.position = e.globalPosition;
    if (isEvent(e, 'RepoRegistered')) indexRepo(index.byName, e);
  }
  return index.byName.get(fullName.toLowerCase());
}

function indexRepo(byName: Map<string, RepoRef>, e: EventOfType<'RepoRegistered'>): void {
  const d = e.data;
  if (d.forge?.kind !== 'github') return;
  byName.set(`${d.forge.owner}/${d.forge.name}`.toLowerCase(), { repoId: d.repoId, autoRecompute: d.config?.autoRecompute === true });
}

const HANDLED: Record<'pull_request' | 'check_run' | 'check_suite', string[]> = {
  pull_request: ['opened', 'reopened', 'synchronize'],
  check_run: ['completed'],
  check_suite: ['completed'],
};

/**
 * POST /webhooks/github?workspace_id=…: verify the signature with the repo's secret (nothing is recorded
 * before that), check the fields the ledger reads (schemas.ts: other fields may be added or missing), map it to commands, and let the
 * delivery id make every command idempotent. Unknown events are acknowledged and ignored.
 */
export async function handleGithubWebhook(ledger: Ledger, d: WebhookDelivery): Promise<WebhookOutcome> {
  const wid = typeof d.workspaceId === 'string' ? d.workspaceId : '';
  if (!wid) throw new DomainError('missing_workspace', 'workspace_id: required as a query parameter of the webhook URL');
  if (!ledger.workspaces.get(wid)) throw new DomainError('unknown_workspace', `workspace_id: "${wid.slice(0, 63)}" is not a registered workspace`);
  if (!d.event) throw new DomainError('invalid_webhook', 'X-GitHub-Event: header required');
  if (!d.deliveryId || d.deliveryId.length > 100) throw new DomainError('invalid_webhook', 'X-GitHub-Delivery: header required (at most 100 characters)');
  let payload: any;
  try {
    payload = JSON.parse(d.body.toString('utf8'));
  } catch {
    throw new DomainError('invalid_webhook', 'body: not JSON (configure the webhook with content type application/json)');
  }
  const fullName: unknown = payload?.repository?.full_name;
  if (typeof fullName !== 'string') throw new DomainError('unauthorized', 'repository.full_name: missing, so no secret can verify this delivery');
  const ws = await ledger.workspace(wid);
  const repo = await findRepo(ws, fullName);
  const secret = repo ? readWebhookSecret(ws.dir, repo.repoId) : null;
  // One answer for "unknown repo", "no secret" and "bad signature": a forger learns nothing.
  if (!repo || !secret || !verifySignature(secret, d.body, d.signature)) throw new DomainError('invalid_signature', 'X-Hub-Signature-256: missing or does not match the repository secret');

  const action = typeof payload.action === 'string' ? payload.action : '';
  const event = d.event;
  if (!(event === 'pull_request' || event === 'check_run' || event === 'check_suite') || !HANDLED[event].includes(action)) return { status: 202, body: { ignored: true, event, action: action || null } };

  const digest = createHash('sha256').update(d.body).digest('hex');
  const envelope = (n: number, at: number) => ({ idempotencyKey: deliveryKey(wid, digest, n, at), principal: WEBHOOK_PRINCIPAL, role: 'member' as const, via: 'webhook' as const, correlationId: `github-delivery:${d.deliveryId}` });
  const results: Array<{ command: string; prNumber: number; replayed: boolean; result: unknown }> = [];
  let recomputing: string | null = null;
  if (event === 'pull_request') {
    const delivery = parsePullRequestDelivery(action, payload);
    const pr = delivery.pull_request;
    const at = Date.parse(pr.updated_at ?? '') || 0;
    // The PR's updated_at orders deliveries: an older one never moves the observed head back.
    const observedAt = at ? new Date(at).toISOString() : undefined;
    const out = await ledger.run('observeHead', wid, envelope(0, at), { repoId: repo.repoId, prNumber: delivery.number, headSha: pr.head.sha, baseSha: pr.base.sha, source: `github:pull_request.${action}`, ...(observedAt ? { observedAt } : {}) });
    results.push({ command: 'observeHead', prNumber: delivery.number, replayed: out.replayed, result: out.response.result });
    // GitHub gives a delivery 10 s: the computation runs after the answer, started by the auto-recompute
    // saga once the recorded HeadObserved reaches the EventBus (auto-recompute.saga.ts). Its key comes
    // from that event, so a redelivery (which records nothing) or a restart cannot start a second one.
    if (repo.autoRecompute && out.response.eventIds.length > 0) recomputing = AUTO_RECOMPUTE_COMMAND;
  } else {
    const { check, name } =
      event === 'check_run'
        ? ((run) => ({ check: run, name: run.name }))(parseCheckRunDelivery(action, payload).check_run)
        : ((suite) => ({ check: suite, name: suite.app?.name ?? 'check_suite' }))(parseCheckSuiteDelivery(action, payload).check_suite);
    const at = Date.parse(check.completed_at ?? check.updated_at ?? '') || 0;
    const url: string | undefined = check.html_url ?? check.details_url ?? check.url ?? undefined;
    const prs = check.pull_requests;
    for (let i = 0; i < prs.length; i++) {
      const input = { repoId: repo.repoId, prNumber: prs[i].number, name: name.slice(0, 200), status: check.status, conclusion: check.conclusion ?? undefined, url, headSha: check.head_sha };
      const out = await ledger.run('recordCiSignal', wid, envelope(i, at), input);
      results.push({ command: 'recordCiSignal', prNumber: prs[i].number, replayed: out.replayed, result: out.response.result });
    }
  }
  return { status: 200, body: { delivery: d.deliveryId, duplicate: results.length > 0 && results.every((r) => r.replayed), results, ...(recomputing ? { recompute: recomputing } : {}) } };
}
