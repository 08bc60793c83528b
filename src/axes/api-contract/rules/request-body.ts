import type { DiffContext, Site } from '../context';
import type { OperationView } from '../model';
import type { SchemaDiff } from './schema-diff';
import { defineRule } from '../rule';

const F = 'request bodies';

export const REQUEST_BODY_ADDED_REQUIRED = defineRule(F, 'request-body-added-required', 'request', 'breaking', 'A required request body was added to an operation that had none.', 'no `requestBody` → `requestBody: {required: true, …}`');
export const REQUEST_BODY_ADDED = defineRule(F, 'request-body-added', 'request', 'non-breaking', 'An optional request body was added.', 'no `requestBody` → `requestBody: {…}`');
export const REQUEST_BODY_REMOVED = defineRule(F, 'request-body-removed', 'request', 'breaking', 'The request body was removed: what clients send is no longer read.', '`requestBody: {…}` → none');
export const REQUEST_BODY_BECAME_REQUIRED = defineRule(F, 'request-body-became-required', 'request', 'breaking', 'An optional request body became required.', '`required: false` → `required: true`');
export const REQUEST_BODY_BECAME_OPTIONAL = defineRule(F, 'request-body-became-optional', 'request', 'non-breaking', 'A required request body became optional.', '`required: true` → `required: false`');
export const REQUEST_MEDIA_TYPE_REMOVED = defineRule(F, 'request-media-type-removed', 'request', 'breaking', 'A request media type is no longer accepted.', '`content: {application/json, application/xml}` → `content: {application/json}`');
export const REQUEST_MEDIA_TYPE_ADDED = defineRule(F, 'request-media-type-added', 'request', 'non-breaking', 'A request media type is newly accepted.', '`content: {application/json}` → `content: {application/json, application/xml}`');

export const requestBodyRules = [
  REQUEST_BODY_ADDED_REQUIRED,
  REQUEST_BODY_ADDED,
  REQUEST_BODY_REMOVED,
  REQUEST_BODY_BECAME_REQUIRED,
  REQUEST_BODY_BECAME_OPTIONAL,
  REQUEST_MEDIA_TYPE_REMOVED,
  REQUEST_MEDIA_TYPE_ADDED,
];

/** `direction` is 'response' for webhooks: their request body is what the API sends to the subscriber. */
export function checkRequestBody(ctx: DiffContext, schemas: SchemaDiff, b: OperationView, h: OperationView, direction: Site['direction']): void {
  const s = { operation: h.key, display: h.display };
  const bb = b.requestBody;
  const hb = h.requestBody;
  const noun = h.webhook ? 'payload' : 'request body';
  if (!bb && !hb) return;
  if (!bb && hb) {
    ctx.report(hb.required ? REQUEST_BODY_ADDED_REQUIRED : REQUEST_BODY_ADDED, s, { base: b.loc, head: hb.loc, message: `${hb.required ? 'required' : 'optional'} ${noun} added` });
    return;
  }
  if (bb && !hb) {
    ctx.report(REQUEST_BODY_REMOVED, s, { base: bb.loc, head: h.loc, message: `${noun} removed` });
    return;
  }
  if (!bb || !hb) return;
  if (!bb.required && hb.required) ctx.report(REQUEST_BODY_BECAME_REQUIRED, s, { base: bb.loc, head: hb.loc, message: `${noun} became required` });
  if (bb.required && !hb.required) ctx.report(REQUEST_BODY_BECAME_OPTIONAL, s, { base: bb.loc, head: hb.loc, message: `${noun} became optional` });
  for (const media of [...new Set([...bb.content.keys(), ...hb.content.keys()])].sort()) {
    const bs = bb.content.get(media);
    const hs = hb.content.get(media);
    if (bs && !hs) ctx.report(REQUEST_MEDIA_TYPE_REMOVED, s, { base: bs, head: hb.loc, subject: media, message: `${noun} media type ${media} removed` });
    else if (!bs && hs) ctx.report(REQUEST_MEDIA_TYPE_ADDED, s, { base: bb.loc, head: hs, subject: media, message: `${noun} media type ${media} added` });
    else if (bs && hs) {
      const label = `${noun} (${media})`;
      schemas.compare({ ...s, direction, label, where: { area: direction === 'request' ? 'request-body' : 'response-body', root: label } }, bs, hs);
    }
  }
}
