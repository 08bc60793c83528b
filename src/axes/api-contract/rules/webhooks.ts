import type { DiffContext } from '../context';
import type { OperationView } from '../model';
import { defineRule } from '../rule';

const F = 'webhooks';

/**
 * Webhooks (OAS 3.1) and callbacks (OAS 3) run the other way round: the API sends the request and the subscriber answers, so
 * their payload schemas are classified as responses and their responses as requests.
 */
export const WEBHOOK_REMOVED = defineRule(F, 'webhook-removed', 'response', 'breaking', 'A webhook is no longer sent: subscribers relying on it stop receiving events.', '`webhooks: {newPet: …}` → `webhooks: {}`');
export const WEBHOOK_ADDED = defineRule(F, 'webhook-added', 'response', 'non-breaking', 'A new webhook.', '`webhooks: {}` → `webhooks: {newPet: …}`');

export const CALLBACK_REMOVED = defineRule(F, 'callback-removed', 'response', 'breaking', 'A callback (OAS 3 `callbacks`) is no longer made: clients waiting for it never hear back.', '`callbacks: {onDone: …}` → `callbacks: {}`');
export const CALLBACK_ADDED = defineRule(F, 'callback-added', 'response', 'non-breaking', 'A new callback.', '`callbacks: {}` → `callbacks: {onDone: …}`');

export const webhookRules = [WEBHOOK_REMOVED, WEBHOOK_ADDED, CALLBACK_REMOVED, CALLBACK_ADDED];

export function checkWebhookRemoved(ctx: DiffContext, op: OperationView): void {
  if (op.callback) {
    ctx.report(CALLBACK_REMOVED, { operation: op.key, display: op.display }, { base: op.loc, message: 'callback removed' });
    return;
  }
  ctx.report(WEBHOOK_REMOVED, { operation: op.key, display: op.display }, { base: op.loc, message: 'webhook removed' });
}

export function checkWebhookAdded(ctx: DiffContext, op: OperationView): void {
  if (op.callback) {
    ctx.report(CALLBACK_ADDED, { operation: op.key, display: op.display }, { head: op.loc, message: 'callback added' });
    return;
  }
  ctx.report(WEBHOOK_ADDED, { operation: op.key, display: op.display }, { head: op.loc, message: 'webhook added' });
}
