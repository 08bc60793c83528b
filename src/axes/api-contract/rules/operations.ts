import type { DiffContext } from '../context';
import type { OperationView, SpecModel } from '../model';
import { defineRule } from './rule';

const F = 'operations';

export const API_REMOVED_WITHOUT_DEPRECATION = defineRule(F, 'api-removed-without-deprecation', 'none', 'breaking', 'An operation was removed without having been deprecated first.', '`GET /users` present → absent (it was not `deprecated: true`)');
export const API_REMOVED_BEFORE_SUNSET = defineRule(F, 'api-removed-before-sunset', 'none', 'breaking', 'A deprecated operation was removed before its `x-sunset` date (or it had no sunset date).', '`deprecated: true, x-sunset: 2999-01-01` → removed');
export const API_REMOVED_AFTER_SUNSET = defineRule(F, 'api-removed-after-sunset', 'none', 'info', 'A deprecated operation was removed after its `x-sunset` date, as announced.', '`deprecated: true, x-sunset: 2020-01-01` → removed');
export const API_ADDED = defineRule(F, 'api-added', 'none', 'non-breaking', 'A new operation.', 'absent → `POST /users`');
export const API_DEPRECATED = defineRule(F, 'api-deprecated', 'none', 'info', 'An operation was marked deprecated.', '`GET /users` → `deprecated: true`');
export const API_UNDEPRECATED = defineRule(F, 'api-undeprecated', 'none', 'info', 'An operation is no longer deprecated.', '`deprecated: true` → unset');
export const API_SUNSET_EARLIER = defineRule(F, 'api-sunset-date-earlier', 'none', 'breaking', 'The `x-sunset` date of an operation moved earlier (or was set on an operation that had none): clients have less time than announced.', '`x-sunset: 2030-01-01` → `x-sunset: 2029-01-01`');
export const API_SUNSET_LATER = defineRule(F, 'api-sunset-date-later', 'none', 'info', 'The `x-sunset` date moved later or was withdrawn.', '`x-sunset: 2029-01-01` → `x-sunset: 2030-01-01`');
export const API_OPERATION_ID_CHANGED = defineRule(F, 'api-operation-id-changed', 'none', 'info', 'The operationId changed: generated client method names change.', '`operationId: listUsers` → `operationId: getUsers`');
export const API_TAGS_CHANGED = defineRule(F, 'api-tags-changed', 'none', 'info', 'The tags of an operation changed (grouping in generated clients and docs).', '`tags: [users]` → `tags: [accounts]`');
export const API_BASE_PATH_CHANGED = defineRule(F, 'api-base-path-changed', 'none', 'breaking', 'The Swagger 2.0 `basePath` changed: every operation moved.', '`basePath: /v1` → `basePath: /v2`');

export const API_STABILITY_DECREASED = defineRule(F, 'api-stability-decreased', 'none', 'breaking', 'The `x-stability-level` of an operation went down (stable → beta → alpha → draft): clients built against the promise lose it.', '`x-stability-level: stable` → `x-stability-level: beta`');
export const API_STABILITY_INCREASED = defineRule(F, 'api-stability-increased', 'none', 'info', 'The `x-stability-level` of an operation went up.', '`x-stability-level: beta` → `x-stability-level: stable`');
export const API_SUNSET_DATE_INVALID = defineRule(F, 'api-sunset-date-invalid', 'none', 'info', 'The `x-sunset` of an operation is not a date: the sunset rules cannot apply to it.', '`x-sunset: soon`');
export const API_SERVERS_CHANGED = defineRule(F, 'api-servers-changed', 'none', 'info', 'The document-level server URLs changed (clients configured with a removed URL must move).', '`servers: [{url: https://api.example.com/v1}]` → `servers: [{url: https://api.example.com}]`');

export const operationRules = [
  API_STABILITY_DECREASED,
  API_STABILITY_INCREASED,
  API_SUNSET_DATE_INVALID,
  API_SERVERS_CHANGED,
  API_REMOVED_WITHOUT_DEPRECATION,
  API_REMOVED_BEFORE_SUNSET,
  API_REMOVED_AFTER_SUNSET,
  API_ADDED,
  API_DEPRECATED,
  API_UNDEPRECATED,
  API_SUNSET_EARLIER,
  API_SUNSET_LATER,
  API_OPERATION_ID_CHANGED,
  API_TAGS_CHANGED,
  API_BASE_PATH_CHANGED,
];

const site = (op: OperationView) => ({ operation: op.key, display: op.display });
const time = (iso: string | undefined): number | undefined => {
  if (iso === undefined) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
};

export function checkOperationRemoved(ctx: DiffContext, op: OperationView): void {
  if (!op.deprecated) {
    ctx.report(API_REMOVED_WITHOUT_DEPRECATION, site(op), { base: op.loc, message: 'operation removed without deprecation' });
    return;
  }
  const sunset = time(op.sunset);
  const asOf = time(ctx.options.asOf);
  if (sunset !== undefined && asOf !== undefined && asOf >= sunset) {
    ctx.report(API_REMOVED_AFTER_SUNSET, site(op), { base: op.loc, message: `deprecated operation removed after its sunset date ${op.sunset}` });
  } else {
    ctx.report(API_REMOVED_BEFORE_SUNSET, site(op), {
      base: op.loc,
      message: op.sunset ? `deprecated operation removed before its sunset date ${op.sunset}` : 'deprecated operation removed, but it announced no x-sunset date',
    });
  }
}

export function checkOperationAdded(ctx: DiffContext, op: OperationView): void {
  ctx.report(API_ADDED, site(op), { head: op.loc, message: 'operation added' });
}

export function checkOperationMetadata(ctx: DiffContext, b: OperationView, h: OperationView): void {
  const s = site(h);
  if (!b.deprecated && h.deprecated) ctx.report(API_DEPRECATED, s, { base: b.loc, head: h.loc, message: `operation deprecated${h.sunset ? ` (sunset ${h.sunset})` : ''}` });
  if (b.deprecated && !h.deprecated) ctx.report(API_UNDEPRECATED, s, { base: b.loc, head: h.loc, message: 'operation is no longer deprecated' });
  if (b.sunset !== h.sunset && (h.sunset === undefined || time(h.sunset) !== undefined)) {
    const bt = time(b.sunset);
    const ht = time(h.sunset);
    const earlier = ht !== undefined && (bt === undefined || ht < bt);
    ctx.report(earlier ? API_SUNSET_EARLIER : API_SUNSET_LATER, s, {
      base: b.loc,
      head: h.loc,
      message: `x-sunset changed from ${b.sunset ?? 'none'} to ${h.sunset ?? 'none'}`,
    });
  }
  const stability = ['draft', 'alpha', 'beta', 'stable'];
  const bs = b.stability === undefined ? undefined : stability.indexOf(b.stability);
  const hs = h.stability === undefined ? undefined : stability.indexOf(h.stability);
  if (bs !== undefined && hs !== undefined && bs !== -1 && hs !== -1 && bs !== hs) {
    ctx.report(hs < bs ? API_STABILITY_DECREASED : API_STABILITY_INCREASED, s, { base: b.loc, head: h.loc, message: `x-stability-level changed from ${b.stability} to ${h.stability}` });
  }
  if (h.sunset !== undefined && time(h.sunset) === undefined && h.sunset !== b.sunset) {
    ctx.report(API_SUNSET_DATE_INVALID, s, { head: h.loc, message: `x-sunset "${h.sunset}" is not a date` });
  }
  if (b.operationId !== h.operationId) ctx.report(API_OPERATION_ID_CHANGED, s, { base: b.loc, head: h.loc, message: `operationId changed from ${b.operationId ?? 'none'} to ${h.operationId ?? 'none'}` });
  const bt = [...b.tags].sort().join(',');
  const ht = [...h.tags].sort().join(',');
  if (bt !== ht) ctx.report(API_TAGS_CHANGED, s, { base: b.loc, head: h.loc, message: `tags changed from [${bt}] to [${ht}]` });
}

export function checkDocument(ctx: DiffContext, base: SpecModel, head: SpecModel): void {
  const removed = base.servers.filter((u) => !head.servers.includes(u));
  const added = head.servers.filter((u) => !base.servers.includes(u));
  if ((removed.length > 0 || added.length > 0) && base.servers.length > 0 && head.servers.length > 0) {
    ctx.report(API_SERVERS_CHANGED, { operation: '', display: '' }, {
      base: { file: base.docs.rootFile, ptr: '/servers' },
      head: { file: head.docs.rootFile, ptr: '/servers' },
      message: `servers changed${removed.length ? `; removed ${removed.join(', ')}` : ''}${added.length ? `; added ${added.join(', ')}` : ''}`,
    });
  }
  if (base.basePath !== undefined && head.basePath !== undefined && base.basePath !== head.basePath) {
    ctx.report(API_BASE_PATH_CHANGED, { operation: '', display: '' }, { base: { file: base.docs.rootFile, ptr: '/basePath' }, head: { file: head.docs.rootFile, ptr: '/basePath' }, message: `basePath changed from ${base.basePath} to ${head.basePath}` });
  }
}
