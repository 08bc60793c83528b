import type { DiffContext } from '../context';
import { STABILITY_LEVELS, sunsetTime, type OperationView, type SpecModel } from '../model';
import { defineRule } from '../rule';

const F = 'operations';

export const API_REMOVED_WITHOUT_DEPRECATION = defineRule(F, 'api-removed-without-deprecation', 'none', 'breaking', 'An operation was removed without having been deprecated first.', '`GET /users` present → absent (it was not `deprecated: true`)');
export const API_REMOVED_BEFORE_SUNSET = defineRule(F, 'api-removed-before-sunset', 'none', 'breaking', 'A deprecated operation was removed before its `x-sunset` date.', '`deprecated: true, x-sunset: 2999-01-01` → removed');
export const API_REMOVED_WITH_DEPRECATION = defineRule(F, 'api-removed-with-deprecation', 'none', 'info', 'A deprecated operation with no `x-sunset` date was removed: its deprecation was the announcement.', '`deprecated: true` → removed');
export const API_REMOVED_UNSTABLE = defineRule(F, 'api-removed-unstable', 'none', 'info', 'An operation marked `x-stability-level: alpha` or `draft` was removed: unstable operations are exempt from the breaking rules.', '`x-stability-level: alpha` → removed');
export const API_REMOVED_AFTER_SUNSET = defineRule(F, 'api-removed-after-sunset', 'none', 'info', 'A deprecated operation was removed after its `x-sunset` date, as announced.', '`deprecated: true, x-sunset: 2020-01-01` → removed');
export const API_ADDED = defineRule(F, 'api-added', 'none', 'non-breaking', 'A new operation.', 'absent → `POST /users`');
export const API_DEPRECATED = defineRule(F, 'api-deprecated', 'none', 'info', 'An operation was marked deprecated.', '`GET /users` → `deprecated: true`');
export const API_UNDEPRECATED = defineRule(F, 'api-undeprecated', 'none', 'info', 'An operation is no longer deprecated.', '`deprecated: true` → unset');
export const API_SUNSET_EARLIER = defineRule(F, 'api-sunset-date-earlier', 'none', 'breaking', 'The `x-sunset` date of a deprecated operation moved earlier, to a date already past: clients had no notice.', '`x-sunset: 2030-01-01` → `x-sunset: 2020-01-01`');
export const API_SUNSET_CHANGED = defineRule(F, 'api-sunset-date-changed', 'none', 'info', 'The `x-sunset` date of an operation was set, or moved earlier but is still ahead: the announced deprecation period still runs (oasdiff grades it so unless a minimum notice is configured).', '`x-sunset: 2031-01-01` → `x-sunset: 2030-01-01`');
export const API_SUNSET_LATER = defineRule(F, 'api-sunset-date-later', 'none', 'info', 'The `x-sunset` date moved later.', '`x-sunset: 2029-01-01` → `x-sunset: 2030-01-01`');
export const API_SUNSET_DELETED = defineRule(F, 'api-sunset-deleted', 'none', 'breaking', 'The `x-sunset` of an operation that is still deprecated was deleted: clients lose the date they planned against.', '`deprecated: true, x-sunset: 2030-01-01` → `deprecated: true`');
export const API_OPERATION_ID_CHANGED = defineRule(F, 'api-operation-id-changed', 'none', 'info', 'The operationId changed: generated client method names change.', '`operationId: listUsers` → `operationId: getUsers`');
export const API_TAGS_CHANGED = defineRule(F, 'api-tags-changed', 'none', 'info', 'The tags of an operation changed (grouping in generated clients and docs).', '`tags: [users]` → `tags: [accounts]`');
export const API_BASE_PATH_CHANGED = defineRule(F, 'api-base-path-changed', 'none', 'breaking', 'The Swagger 2.0 `basePath` changed: every operation moved.', '`basePath: /v1` → `basePath: /v2`');

export const API_STABILITY_DECREASED = defineRule(F, 'api-stability-decreased', 'none', 'breaking', 'The `x-stability-level` of an operation went down (stable → beta → alpha → draft): clients built against the promise lose it.', '`x-stability-level: stable` → `x-stability-level: beta`');
export const API_STABILITY_INCREASED = defineRule(F, 'api-stability-increased', 'none', 'info', 'The `x-stability-level` of an operation went up.', '`x-stability-level: beta` → `x-stability-level: stable`');
export const API_SUNSET_DATE_INVALID = defineRule(F, 'api-sunset-date-invalid', 'none', 'breaking', 'The `x-sunset` of an operation is not an RFC 3339 date: the deprecation policy cannot be applied to it, so it is flagged until fixed.', '`x-sunset: soon`');
export const API_STABILITY_LEVEL_INVALID = defineRule(F, 'api-stability-level-invalid', 'none', 'breaking', 'The `x-stability-level` of an operation is not one of draft, alpha, beta, stable: which rules apply to it is unknown, so it is flagged until fixed.', '`x-stability-level: experimental`');
export const API_SERVERS_CHANGED = defineRule(F, 'api-servers-changed', 'none', 'info', 'The document-level server URLs changed (clients configured with a removed URL must move).', '`servers: [{url: https://api.example.com/v1}]` → `servers: [{url: https://api.example.com}]`');

export const operationRules = [
  API_STABILITY_LEVEL_INVALID,
  API_REMOVED_WITH_DEPRECATION,
  API_REMOVED_UNSTABLE,
  API_SUNSET_CHANGED,
  API_SUNSET_DELETED,
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
const time = (iso: string | undefined): number | undefined => (iso === undefined ? undefined : Date.parse(iso));

/** alpha and draft operations promise nothing: oasdiff (at its default level) exempts them from the breaking rules. */
export const isUnstable = (op: OperationView): boolean => op.stability === 'alpha' || op.stability === 'draft';
const validStability = (v: string | undefined): boolean => v === undefined || (STABILITY_LEVELS as readonly string[]).includes(v);

/** `pathRemoved`: no operation is left at this path in head (oasdiff then names the path, not the operation). */
export function checkOperationRemoved(ctx: DiffContext, op: OperationView, pathRemoved = false): void {
  const oasdiff = { pathRemoved };
  if (isUnstable(op)) {
    ctx.report(API_REMOVED_UNSTABLE, site(op), { base: op.loc, message: `operation removed (x-stability-level ${op.stability}: exempt)` });
    return;
  }
  if (!op.deprecated) {
    ctx.report(API_REMOVED_WITHOUT_DEPRECATION, site(op), { base: op.loc, message: 'operation removed without deprecation', oasdiff });
    return;
  }
  if (op.sunset === undefined) {
    ctx.report(API_REMOVED_WITH_DEPRECATION, site(op), { base: op.loc, message: 'deprecated operation removed (it announced no x-sunset date)', oasdiff });
    return;
  }
  const sunset = sunsetTime(op.sunset);
  if (sunset === undefined) {
    ctx.report(API_SUNSET_DATE_INVALID, site(op), { base: op.loc, message: `deprecated operation removed; its x-sunset "${op.sunset}" is not a date`, oasdiff });
    return;
  }
  const asOf = time(ctx.options.asOf);
  if (asOf !== undefined && asOf >= sunset) {
    ctx.report(API_REMOVED_AFTER_SUNSET, site(op), { base: op.loc, message: `deprecated operation removed after its sunset date ${op.sunset}` });
  } else {
    ctx.report(API_REMOVED_BEFORE_SUNSET, site(op), { base: op.loc, message: `deprecated operation removed before its sunset date ${op.sunset}`, oasdiff });
  }
}

export function checkOperationAdded(ctx: DiffContext, op: OperationView): void {
  ctx.report(API_ADDED, site(op), { head: op.loc, message: 'operation added' });
}

export function checkOperationMetadata(ctx: DiffContext, b: OperationView, h: OperationView): void {
  const s = site(h);
  if (!b.deprecated && h.deprecated) ctx.report(API_DEPRECATED, s, { base: b.loc, head: h.loc, message: `operation deprecated${h.sunset ? ` (sunset ${h.sunset})` : ''}` });
  if (b.deprecated && !h.deprecated) ctx.report(API_UNDEPRECATED, s, { base: b.loc, head: h.loc, message: 'operation is no longer deprecated' });
  if (b.sunset !== h.sunset) checkSunsetChange(ctx, s, b, h);
  if (!validStability(h.stability) && h.stability !== b.stability) {
    ctx.report(API_STABILITY_LEVEL_INVALID, s, { head: h.loc, message: `x-stability-level "${h.stability}" is not one of ${STABILITY_LEVELS.join(', ')}` });
  }
  // oasdiff reads a missing level as stable, and judges the change by the level the operation leaves
  const bs = STABILITY_LEVELS.indexOf((b.stability ?? 'stable') as (typeof STABILITY_LEVELS)[number]);
  const hs = STABILITY_LEVELS.indexOf((h.stability ?? 'stable') as (typeof STABILITY_LEVELS)[number]);
  const leavesAnUnstableLevel = hs < bs && bs < STABILITY_LEVELS.indexOf('beta'); // alpha → draft promised nothing
  if (bs !== -1 && hs !== -1 && bs !== hs && !leavesAnUnstableLevel && (b.stability !== undefined || h.stability !== undefined)) {
    ctx.report(hs < bs ? API_STABILITY_DECREASED : API_STABILITY_INCREASED, s, { base: b.loc, head: h.loc, message: `x-stability-level changed from ${b.stability ?? 'none (stable)'} to ${h.stability ?? 'none (stable)'}` });
  }
  if (b.operationId !== h.operationId) ctx.report(API_OPERATION_ID_CHANGED, s, { base: b.loc, head: h.loc, message: `operationId changed from ${b.operationId ?? 'none'} to ${h.operationId ?? 'none'}` });
  const bt = [...b.tags].sort().join(',');
  const ht = [...h.tags].sort().join(',');
  if (bt !== ht) ctx.report(API_TAGS_CHANGED, s, { base: b.loc, head: h.loc, message: `tags changed from [${bt}] to [${ht}]` });
}

function checkSunsetChange(ctx: DiffContext, s: { operation: string; display: string }, b: OperationView, h: OperationView): void {
  const at = { base: b.loc, head: h.loc };
  const message = `x-sunset changed from ${b.sunset ?? 'none'} to ${h.sunset ?? 'none'}`;
  if (h.sunset === undefined) {
    // withdrawn together with the deprecation: the undeprecation says it all
    if (h.deprecated) ctx.report(API_SUNSET_DELETED, s, { ...at, message: `x-sunset ${b.sunset} deleted while the operation stays deprecated` });
    return;
  }
  const ht = sunsetTime(h.sunset);
  if (ht === undefined) {
    ctx.report(API_SUNSET_DATE_INVALID, s, { head: h.loc, message: `x-sunset "${h.sunset}" is not a date` });
    return;
  }
  const bt = sunsetTime(b.sunset);
  if (bt !== undefined && ht > bt) return ctx.report(API_SUNSET_LATER, s, { ...at, message });
  const asOf = time(ctx.options.asOf);
  if (bt !== undefined && asOf !== undefined && ht < asOf) return ctx.report(API_SUNSET_EARLIER, s, { ...at, message: `${message}, a date already past` });
  ctx.report(API_SUNSET_CHANGED, s, { ...at, message });
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
