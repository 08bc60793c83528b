import type { DiffContext, Site } from '../context';
import type { OperationView } from '../model';
import type { SchemaDiff } from './schema-diff';
import { defineRule } from '../rule';

const F = 'responses';

export const RESPONSE_SUCCESS_STATUS_REMOVED = defineRule(F, 'response-success-status-removed', 'response', 'breaking', 'A 2xx response status was removed: clients expecting it break.', '`responses: {200, 404}` → `responses: {404}`');
// oasdiff grades this INFO, and so do we: a client must handle undocumented statuses anyway (a 404 or 429
// can always come back), so the server documenting fewer errors does not break it. Kept apart from the
// 2xx rule so a workspace that relies on typed error mappings can re-grade it (contractSeverityOverrides).
export const RESPONSE_NON_SUCCESS_STATUS_REMOVED = defineRule(F, 'response-non-success-status-removed', 'response', 'info', 'A documented non-2xx status was removed: clients must handle undocumented statuses anyway, so nothing breaks (a workspace relying on typed error mappings can re-grade it).', '`responses: {200, 404}` → `responses: {200}`');
export const RESPONSE_STATUS_ADDED = defineRule(F, 'response-status-added', 'response', 'non-breaking', 'A response status was added.', '`responses: {200}` → `responses: {200, 409}`');
export const RESPONSE_MEDIA_TYPE_REMOVED = defineRule(F, 'response-media-type-removed', 'response', 'breaking', 'A response media type was removed: clients negotiating it break.', '`content: {application/json, text/csv}` → `content: {application/json}`');
export const RESPONSE_MEDIA_TYPE_ADDED = defineRule(F, 'response-media-type-added', 'response', 'non-breaking', 'A response media type was added.', '`content: {application/json}` → `content: {application/json, text/csv}`');
export const RESPONSE_HEADER_REMOVED = defineRule(F, 'response-header-removed', 'response', 'breaking', 'A response header was removed: clients reading it break.', '`headers: {X-Rate-Limit}` → `headers: {}`');
export const RESPONSE_HEADER_ADDED = defineRule(F, 'response-header-added', 'response', 'non-breaking', 'A response header was added.', '`headers: {}` → `headers: {X-Rate-Limit}`');
export const RESPONSE_HEADER_BECAME_OPTIONAL = defineRule(F, 'response-header-became-optional', 'response', 'breaking', 'A required response header became optional: clients can no longer rely on it.', '`{required: true}` → `{required: false}`');
export const RESPONSE_HEADER_BECAME_REQUIRED = defineRule(F, 'response-header-became-required', 'response', 'non-breaking', 'An optional response header is now always sent.', '`{required: false}` → `{required: true}`');

export const RESPONSE_HEADER_DEPRECATED = defineRule(F, 'response-header-deprecated', 'response', 'info', 'A response header was marked deprecated.', '`{X-Rate-Limit: {}}` → `{X-Rate-Limit: {deprecated: true}}`');

export const responseRules = [
  RESPONSE_HEADER_DEPRECATED,
  RESPONSE_SUCCESS_STATUS_REMOVED,
  RESPONSE_NON_SUCCESS_STATUS_REMOVED,
  RESPONSE_STATUS_ADDED,
  RESPONSE_MEDIA_TYPE_REMOVED,
  RESPONSE_MEDIA_TYPE_ADDED,
  RESPONSE_HEADER_REMOVED,
  RESPONSE_HEADER_ADDED,
  RESPONSE_HEADER_BECAME_OPTIONAL,
  RESPONSE_HEADER_BECAME_REQUIRED,
];

/** `direction` is 'request' for webhooks: their responses are what the subscriber sends back. */
export function checkResponses(ctx: DiffContext, schemas: SchemaDiff, b: OperationView, h: OperationView, direction: Site['direction']): void {
  const s = { operation: h.key, display: h.display };
  for (const status of [...new Set([...b.responses.keys(), ...h.responses.keys()])].sort()) {
    const br = b.responses.get(status);
    const hr = h.responses.get(status);
    if (br && !hr) {
      const rule = status.startsWith('2') ? RESPONSE_SUCCESS_STATUS_REMOVED : RESPONSE_NON_SUCCESS_STATUS_REMOVED;
      ctx.report(rule, s, { base: br.loc, head: h.loc, subject: status, message: `response ${br.status} removed`, oasdiff: { status } });
      continue;
    }
    if (!br && hr) {
      ctx.report(RESPONSE_STATUS_ADDED, s, { base: b.loc, head: hr.loc, subject: status, message: `response ${hr.status} added`, oasdiff: { status } });
      continue;
    }
    if (!br || !hr) continue;
    for (const media of [...new Set([...br.content.keys(), ...hr.content.keys()])].sort()) {
      const bs = br.content.get(media);
      const hs = hr.content.get(media);
      if (bs && !hs) ctx.report(RESPONSE_MEDIA_TYPE_REMOVED, s, { base: bs, head: hr.loc, subject: media, message: `response ${hr.status} media type ${media} removed` });
      else if (!bs && hs) ctx.report(RESPONSE_MEDIA_TYPE_ADDED, s, { base: br.loc, head: hs, subject: media, message: `response ${hr.status} media type ${media} added` });
      else if (bs && hs) {
        const label = `response ${hr.status} (${media})`;
        schemas.compare({ ...s, direction, label, where: { area: direction === 'response' ? 'response-body' : 'request-body', root: label } }, bs, hs);
      }
    }
    for (const name of [...new Set([...br.headers.keys(), ...hr.headers.keys()])].sort()) {
      const bh = br.headers.get(name);
      const hh = hr.headers.get(name);
      if (bh && !hh) ctx.report(RESPONSE_HEADER_REMOVED, s, { base: bh.loc, head: hr.loc, subject: name, message: `response ${hr.status} header ${bh.name} removed`, oasdiff: { required: bh.required } });
      else if (!bh && hh) ctx.report(RESPONSE_HEADER_ADDED, s, { base: br.loc, head: hh.loc, subject: name, message: `response ${hr.status} header ${hh.name} added` });
      else if (bh && hh) {
        if (bh.required && !hh.required) ctx.report(RESPONSE_HEADER_BECAME_OPTIONAL, s, { base: bh.loc, head: hh.loc, message: `response ${hr.status} header ${hh.name} became optional` });
        if (!bh.deprecated && hh.deprecated) ctx.report(RESPONSE_HEADER_DEPRECATED, s, { base: bh.loc, head: hh.loc, message: `response ${hr.status} header ${hh.name} deprecated` });
        if (!bh.required && hh.required) ctx.report(RESPONSE_HEADER_BECAME_REQUIRED, s, { base: bh.loc, head: hh.loc, message: `response ${hr.status} header ${hh.name} became required` });
        const label = `response ${hr.status} header ${hh.name}`;
        schemas.compare({ ...s, direction, label, where: { area: 'response-header', root: label } }, bh.schema, hh.schema);
      }
    }
  }
}
