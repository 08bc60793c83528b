import { newUuidV7 } from '../../src/events/ids';
import { BASE, HEAD_A, nodePayload } from '../rpc/support';

type QuotaReply = { result?: unknown; error?: { message: string; data?: { code: string; details?: { quotaBytes: number; usedBytes: number } } } };

/**
 * One member filling workspace `default` (the SQLite and the PostgreSQL log-quota tests): 40 KB findings
 * on r#1 until the server refuses one (at most 400). Checks what every store must answer past the quota —
 * the refusal, named, with the quota and the size; still refused; reads and admin-level acts go on — and
 * returns how many findings were accepted before it, for each store's own bound.
 */
export async function fillUntilQuota(url: string, owner: string, quota: number): Promise<{ accepted: number }> {
  const rpc = async (method: string, params: Record<string, unknown>): Promise<QuotaReply> => {
    const res = await fetch(`${url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { workspace_id: 'default', idempotencyKey: newUuidV7(), ...params } }),
    });
    return (await res.json()) as QuotaReply;
  };
  const target = { repoId: 'r', prNumber: 1 };
  expect((await rpc('requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
  let accepted = 0;
  let refusal: QuotaReply['error'];
  for (let i = 0; i < 400 && !refusal; i++) {
    const out = await rpc('addReviewNode', { ...target, node: nodePayload(`finding ${i}`, { body: 'x'.repeat(40_000) }) });
    if (out.error) refusal = out.error;
    else accepted++;
  }
  expect(refusal?.data?.code).toBe('log_quota_exceeded');
  expect(refusal!.message).toMatch(new RegExp(`workspace "default": its event log takes \\d+ bytes, at or past logQuotaBytes \\(${quota}\\)`));
  expect(refusal!.data!.details!.quotaBytes).toBe(quota);
  expect(refusal!.data!.details!.usedBytes).toBeGreaterThanOrEqual(quota);
  // Still refused.
  expect((await rpc('addReviewNode', { ...target, node: nodePayload('one more') })).error?.data?.code).toBe('log_quota_exceeded');
  // Reads answer; admin-level acts (managing members and tokens) are not refused.
  expect((await rpc('review_studio.verdict', target)).error).toBeUndefined();
  expect((await rpc('addMember', { principal: 'agent:helper', role: 'member' })).error).toBeUndefined();
  expect((await rpc('removeMember', { principal: 'agent:helper' })).error).toBeUndefined();
  return { accepted };
}
