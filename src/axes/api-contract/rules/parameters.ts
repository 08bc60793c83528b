import type { DiffContext, Site } from '../context';
import { canonicalJson } from '../context';
import { isObject } from '../document';
import { sunsetTime, type OperationView, type ParameterView } from '../model';
import type { SchemaDiff } from './schema-diff';
import { defineRule } from '../rule';

const F = 'parameters';

export const REQUEST_PARAMETER_REMOVED = defineRule(F, 'request-parameter-removed', 'request', 'warning', 'A parameter (path, query, header or cookie) that was not deprecated was removed: clients still sending it may be refused or silently ignored (oasdiff: WARN).', '`parameters: [{in: query, name: limit}]` → `parameters: []`');
export const REQUEST_PARAMETER_ADDED_REQUIRED = defineRule(F, 'request-parameter-added-required', 'request', 'breaking', 'A new required parameter: existing clients do not send it.', '`[]` → `[{in: query, name: tenant, required: true}]`');
export const REQUEST_PARAMETER_ADDED = defineRule(F, 'request-parameter-added', 'request', 'non-breaking', 'A new optional parameter.', '`[]` → `[{in: query, name: limit}]`');
export const REQUEST_PARAMETER_BECAME_REQUIRED = defineRule(F, 'request-parameter-became-required', 'request', 'breaking', 'An optional parameter became required.', '`{name: limit, required: false}` → `{name: limit, required: true}`');
export const REQUEST_PARAMETER_BECAME_OPTIONAL = defineRule(F, 'request-parameter-became-optional', 'request', 'non-breaking', 'A required parameter became optional.', '`{required: true}` → `{required: false}`');
export const REQUEST_PARAMETER_DEPRECATED = defineRule(F, 'request-parameter-deprecated', 'request', 'info', 'A parameter was marked deprecated.', '`{name: limit}` → `{name: limit, deprecated: true}`');
export const REQUEST_PARAMETER_SERIALIZATION_CHANGED = defineRule(F, 'request-parameter-serialization-changed', 'request', 'breaking', 'How a parameter is serialized changed (style/explode, or collectionFormat in Swagger 2.0): clients encode it differently than the server parses it.', '`{style: form, explode: true}` → `{style: form, explode: false}`');

export const REQUEST_PARAMETER_REMOVED_WITH_DEPRECATION = defineRule(F, 'request-parameter-removed-with-deprecation', 'request', 'info', 'A deprecated parameter with no `x-sunset` date was removed: its deprecation was the announcement.', '`{name: limit, deprecated: true}` → removed');
export const REQUEST_PARAMETER_REMOVED_BEFORE_SUNSET = defineRule(F, 'request-parameter-removed-before-sunset', 'request', 'breaking', 'A deprecated parameter was removed before its `x-sunset` date.', '`{deprecated: true, x-sunset: 2999-01-01}` → removed');
export const REQUEST_PARAMETER_REMOVED_AFTER_SUNSET = defineRule(F, 'request-parameter-removed-after-sunset', 'request', 'info', 'A deprecated parameter was removed after its `x-sunset` date, as announced.', '`{deprecated: true, x-sunset: 2020-01-01}` → removed');
export const REQUEST_PARAMETER_REACTIVATED = defineRule(F, 'request-parameter-reactivated', 'request', 'info', 'A deprecated parameter is no longer deprecated.', '`{deprecated: true}` → `{}`');
export const REQUEST_PARAMETER_SUNSET_DELETED = defineRule(F, 'request-parameter-sunset-deleted', 'request', 'breaking', 'The `x-sunset` of a parameter that is still deprecated was deleted: clients lose the date they planned against.', '`{deprecated: true, x-sunset: 2030-01-01}` → `{deprecated: true}`');
export const REQUEST_PARAMETER_SUNSET_DATE_INVALID = defineRule(F, 'request-parameter-sunset-date-invalid', 'request', 'breaking', 'The `x-sunset` of a parameter is not an RFC 3339 date: the deprecation policy cannot be applied to it.', '`{deprecated: true, x-sunset: soon}`');
export const REQUEST_PARAMETER_SUNSET_DATE_EARLIER = defineRule(F, 'request-parameter-sunset-date-earlier', 'request', 'breaking', 'The `x-sunset` of a deprecated parameter moved earlier, to a date already past: clients had no notice.', '`x-sunset: 2030-01-01` → `x-sunset: 2020-01-01`');
export const REQUEST_PARAMETER_DEFAULT_CHANGED = defineRule(F, 'request-parameter-default-changed', 'request', 'breaking', 'The default of an optional parameter changed, was added or was removed: the server now behaves differently for clients that omit it.', '`{name: limit, schema: {default: 10}}` → `{name: limit, schema: {default: 20}}`');

export const REQUEST_PARAMETER_EMPTY_VALUE_DISALLOWED = defineRule(F, 'request-parameter-empty-value-disallowed', 'request', 'breaking', 'A query parameter no longer allows an empty value (`allowEmptyValue` removed).', '`{allowEmptyValue: true}` → `{}`');
export const REQUEST_PARAMETER_EMPTY_VALUE_ALLOWED = defineRule(F, 'request-parameter-empty-value-allowed', 'request', 'non-breaking', 'A query parameter now allows an empty value.', '`{}` → `{allowEmptyValue: true}`');

export const parameterRules = [
  REQUEST_PARAMETER_REMOVED_WITH_DEPRECATION,
  REQUEST_PARAMETER_REMOVED_BEFORE_SUNSET,
  REQUEST_PARAMETER_REMOVED_AFTER_SUNSET,
  REQUEST_PARAMETER_REACTIVATED,
  REQUEST_PARAMETER_SUNSET_DELETED,
  REQUEST_PARAMETER_SUNSET_DATE_INVALID,
  REQUEST_PARAMETER_SUNSET_DATE_EARLIER,
  REQUEST_PARAMETER_DEFAULT_CHANGED,
  REQUEST_PARAMETER_EMPTY_VALUE_DISALLOWED,
  REQUEST_PARAMETER_EMPTY_VALUE_ALLOWED,
  REQUEST_PARAMETER_REMOVED,
  REQUEST_PARAMETER_ADDED_REQUIRED,
  REQUEST_PARAMETER_ADDED,
  REQUEST_PARAMETER_BECAME_REQUIRED,
  REQUEST_PARAMETER_BECAME_OPTIONAL,
  REQUEST_PARAMETER_DEPRECATED,
  REQUEST_PARAMETER_SERIALIZATION_CHANGED,
];

const isStructured = (schema: unknown): boolean => {
  if (!isObject(schema)) return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.includes('array') || types.includes('object') || schema.properties !== undefined || schema.items !== undefined;
};

const describe = (p: ParameterView) => `${p.in} parameter ${p.name}`;

/** Parameters are matched by location and name; path parameters by position, so a rename is not a change. */
export function checkParameters(ctx: DiffContext, schemas: SchemaDiff, b: OperationView, h: OperationView, direction: Site['direction']): void {
  const s = { operation: h.key, display: h.display };
  const keys = [...new Set([...b.parameters.keys(), ...h.parameters.keys()])].sort();
  for (const key of keys) {
    const bp = b.parameters.get(key);
    const hp = h.parameters.get(key);
    if (bp && !hp) {
      reportRemoval(ctx, s, bp, h);
      continue;
    }
    if (!bp && hp) {
      ctx.report(hp.required ? REQUEST_PARAMETER_ADDED_REQUIRED : REQUEST_PARAMETER_ADDED, s, { base: b.loc, head: hp.listedAt, message: `${hp.required ? 'required' : 'optional'} ${describe(hp)} added`, oasdiff: { in: hp.in } });
      continue;
    }
    if (!bp || !hp) continue;
    if (!bp.required && hp.required) ctx.report(REQUEST_PARAMETER_BECAME_REQUIRED, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} became required` });
    if (bp.required && !hp.required) ctx.report(REQUEST_PARAMETER_BECAME_OPTIONAL, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} became optional` });
    if (bp.allowEmptyValue && !hp.allowEmptyValue) ctx.report(REQUEST_PARAMETER_EMPTY_VALUE_DISALLOWED, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} no longer allows an empty value` });
    if (!bp.allowEmptyValue && hp.allowEmptyValue) ctx.report(REQUEST_PARAMETER_EMPTY_VALUE_ALLOWED, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} now allows an empty value` });
    checkParameterLifecycle(ctx, s, bp, hp);
    checkParameterDefault(ctx, s, bp, hp);
    // style/explode only change the wire format of arrays and objects
    if (bp.serialization !== hp.serialization && (isStructured(ctx.base.deref(bp.schema).node) || isStructured(ctx.head.deref(hp.schema).node))) ctx.report(REQUEST_PARAMETER_SERIALIZATION_CHANGED, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} serialization changed from ${bp.serialization} to ${hp.serialization}` });
    schemas.compare({ ...s, direction, label: describe(hp), parameter: true, where: { area: 'request-parameter', in: hp.in, root: describe(hp) } }, bp.schema, hp.schema);
  }
}

const asOfTime = (ctx: DiffContext): number | undefined => (ctx.options.asOf === undefined ? undefined : Date.parse(ctx.options.asOf));

/** oasdiff's parameter removal ladder: not deprecated → breaking; deprecated without a date → info; before its sunset → breaking; after → info. */
function reportRemoval(ctx: DiffContext, s: Pick<Site, 'operation' | 'display'>, bp: ParameterView, h: OperationView): void {
  const at = { base: bp.listedAt, head: h.loc };
  if (!bp.deprecated) return ctx.report(REQUEST_PARAMETER_REMOVED, s, { ...at, message: `${describe(bp)} removed` });
  if (bp.sunset === undefined) return ctx.report(REQUEST_PARAMETER_REMOVED_WITH_DEPRECATION, s, { ...at, message: `deprecated ${describe(bp)} removed` });
  const sunset = sunsetTime(bp.sunset);
  if (sunset === undefined) return ctx.report(REQUEST_PARAMETER_SUNSET_DATE_INVALID, s, { ...at, message: `deprecated ${describe(bp)} removed; its x-sunset "${bp.sunset}" is not a date` });
  const now = asOfTime(ctx);
  if (now !== undefined && now >= sunset) ctx.report(REQUEST_PARAMETER_REMOVED_AFTER_SUNSET, s, { ...at, message: `deprecated ${describe(bp)} removed after its sunset date ${bp.sunset}` });
  else ctx.report(REQUEST_PARAMETER_REMOVED_BEFORE_SUNSET, s, { ...at, message: `deprecated ${describe(bp)} removed before its sunset date ${bp.sunset}` });
}

/** Deprecation and x-sunset of a parameter present on both sides. */
function checkParameterLifecycle(ctx: DiffContext, s: Pick<Site, 'operation' | 'display'>, bp: ParameterView, hp: ParameterView): void {
  const at = { base: bp.loc, head: hp.loc };
  if (!bp.deprecated && hp.deprecated) ctx.report(REQUEST_PARAMETER_DEPRECATED, s, { ...at, message: `${describe(hp)} deprecated${hp.sunset ? ` (sunset ${hp.sunset})` : ''}` });
  if (bp.deprecated && !hp.deprecated) ctx.report(REQUEST_PARAMETER_REACTIVATED, s, { ...at, message: `${describe(hp)} is no longer deprecated` });
  if (!hp.deprecated || bp.sunset === hp.sunset) return;
  if (hp.sunset === undefined) {
    ctx.report(REQUEST_PARAMETER_SUNSET_DELETED, s, { ...at, message: `x-sunset ${bp.sunset} of deprecated ${describe(hp)} deleted` });
    return;
  }
  const ht = sunsetTime(hp.sunset);
  if (ht === undefined) {
    ctx.report(REQUEST_PARAMETER_SUNSET_DATE_INVALID, s, { ...at, message: `x-sunset "${hp.sunset}" of ${describe(hp)} is not a date` });
    return;
  }
  const bt = sunsetTime(bp.sunset);
  const now = asOfTime(ctx);
  if (bt !== undefined && ht < bt && now !== undefined && ht < now) {
    ctx.report(REQUEST_PARAMETER_SUNSET_DATE_EARLIER, s, { ...at, message: `x-sunset of ${describe(hp)} moved from ${bp.sunset} to ${hp.sunset}, already past` });
  }
}

/** A changed default of an optional parameter (oasdiff ERR): clients that omit it now get something else. */
function checkParameterDefault(ctx: DiffContext, s: Pick<Site, 'operation' | 'display'>, bp: ParameterView, hp: ParameterView): void {
  // A path parameter is always required, so its default is never used and changing it changes nothing: our
  // detection. oasdiff reads `required` as written, so under --profile oasdiff a path parameter without
  // `required: true` (invalid, but common) has its default changes reported like an optional parameter's.
  const required = (p: ParameterView) => (ctx.asOasdiff ? p.requiredAsWritten : p.required);
  if (required(bp) || required(hp)) return;
  const bs = ctx.base.deref(bp.schema).node;
  const hs = ctx.head.deref(hp.schema).node;
  const bd = isObject(bs) ? bs.default : undefined;
  const hd = isObject(hs) ? hs.default : undefined;
  if (bd === undefined && hd === undefined) return;
  if (bd !== undefined && hd !== undefined && canonicalJson(bd) === canonicalJson(hd)) return;
  const show = (v: unknown) => (v === undefined ? 'none' : JSON.stringify(v));
  ctx.report(REQUEST_PARAMETER_DEFAULT_CHANGED, s, { base: bp.schema, head: hp.schema, message: `default of ${describe(hp)} changed from ${show(bd)} to ${show(hd)}`, oasdiff: { change: bd === undefined ? 'added' : hd === undefined ? 'removed' : 'changed' } });
}
