import type { DiffContext, Site } from '../context';
import { isObject } from '../document';
import type { OperationView, ParameterView } from '../model';
import type { SchemaDiff } from '../schema-diff';
import { defineRule } from './rule';

const F = 'parameters';

export const REQUEST_PARAMETER_REMOVED = defineRule(F, 'request-parameter-removed', 'request', 'breaking', 'A parameter (path, query, header or cookie) was removed.', '`parameters: [{in: query, name: limit}]` → `parameters: []`');
export const REQUEST_PARAMETER_ADDED_REQUIRED = defineRule(F, 'request-parameter-added-required', 'request', 'breaking', 'A new required parameter: existing clients do not send it.', '`[]` → `[{in: query, name: tenant, required: true}]`');
export const REQUEST_PARAMETER_ADDED = defineRule(F, 'request-parameter-added', 'request', 'non-breaking', 'A new optional parameter.', '`[]` → `[{in: query, name: limit}]`');
export const REQUEST_PARAMETER_BECAME_REQUIRED = defineRule(F, 'request-parameter-became-required', 'request', 'breaking', 'An optional parameter became required.', '`{name: limit, required: false}` → `{name: limit, required: true}`');
export const REQUEST_PARAMETER_BECAME_OPTIONAL = defineRule(F, 'request-parameter-became-optional', 'request', 'non-breaking', 'A required parameter became optional.', '`{required: true}` → `{required: false}`');
export const REQUEST_PARAMETER_DEPRECATED = defineRule(F, 'request-parameter-deprecated', 'request', 'info', 'A parameter was marked deprecated.', '`{name: limit}` → `{name: limit, deprecated: true}`');
export const REQUEST_PARAMETER_SERIALIZATION_CHANGED = defineRule(F, 'request-parameter-serialization-changed', 'request', 'breaking', 'How a parameter is serialized changed (style/explode, or collectionFormat in Swagger 2.0): clients encode it differently than the server parses it.', '`{style: form, explode: true}` → `{style: form, explode: false}`');

export const REQUEST_PARAMETER_EMPTY_VALUE_DISALLOWED = defineRule(F, 'request-parameter-empty-value-disallowed', 'request', 'breaking', 'A query parameter no longer allows an empty value (`allowEmptyValue` removed).', '`{allowEmptyValue: true}` → `{}`');
export const REQUEST_PARAMETER_EMPTY_VALUE_ALLOWED = defineRule(F, 'request-parameter-empty-value-allowed', 'request', 'non-breaking', 'A query parameter now allows an empty value.', '`{}` → `{allowEmptyValue: true}`');

export const parameterRules = [
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
      ctx.report(REQUEST_PARAMETER_REMOVED, s, { base: bp.listedAt, head: h.loc, message: `${describe(bp)} removed` });
      continue;
    }
    if (!bp && hp) {
      ctx.report(hp.required ? REQUEST_PARAMETER_ADDED_REQUIRED : REQUEST_PARAMETER_ADDED, s, { base: b.loc, head: hp.listedAt, message: `${hp.required ? 'required' : 'optional'} ${describe(hp)} added` });
      continue;
    }
    if (!bp || !hp) continue;
    if (!bp.required && hp.required) ctx.report(REQUEST_PARAMETER_BECAME_REQUIRED, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} became required` });
    if (bp.required && !hp.required) ctx.report(REQUEST_PARAMETER_BECAME_OPTIONAL, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} became optional` });
    if (bp.allowEmptyValue && !hp.allowEmptyValue) ctx.report(REQUEST_PARAMETER_EMPTY_VALUE_DISALLOWED, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} no longer allows an empty value` });
    if (!bp.allowEmptyValue && hp.allowEmptyValue) ctx.report(REQUEST_PARAMETER_EMPTY_VALUE_ALLOWED, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} now allows an empty value` });
    if (!bp.deprecated && hp.deprecated) ctx.report(REQUEST_PARAMETER_DEPRECATED, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} deprecated` });
    // style/explode only change the wire format of arrays and objects
    if (bp.serialization !== hp.serialization && (isStructured(ctx.base.deref(bp.schema).node) || isStructured(ctx.head.deref(hp.schema).node))) ctx.report(REQUEST_PARAMETER_SERIALIZATION_CHANGED, s, { base: bp.loc, head: hp.loc, message: `${describe(hp)} serialization changed from ${bp.serialization} to ${hp.serialization}` });
    schemas.compare({ ...s, direction, label: describe(hp) }, bp.schema, hp.schema);
  }
}
