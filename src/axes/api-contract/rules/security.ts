import type { DiffContext } from '../context';
import { isObject } from '../document';
import type { OperationView, SecurityRequirementView, SpecModel } from '../model';
import { defineRule } from '../rule';

const F = 'security';

export const API_SECURITY_ADDED = defineRule(F, 'api-security-added', 'request', 'breaking', 'A public operation now requires authentication.', 'no `security` → `security: [{oauth: []}]`');
export const API_SECURITY_REMOVED = defineRule(F, 'api-security-removed', 'request', 'non-breaking', 'An operation no longer requires authentication.', '`security: [{oauth: []}]` → `security: []`');
export const API_SECURITY_REQUIREMENT_ADDED = defineRule(F, 'api-security-requirement-added', 'request', 'non-breaking', 'A new alternative way to authenticate (one more entry in the OR-list).', '`[{oauth: []}]` → `[{oauth: []}, {apiKey: []}]`');
export const API_SECURITY_REQUIREMENT_REMOVED = defineRule(F, 'api-security-requirement-removed', 'request', 'breaking', 'A way to authenticate was removed: clients using it are refused.', '`[{oauth: []}, {apiKey: []}]` → `[{oauth: []}]`');
export const API_SECURITY_SCOPE_ADDED = defineRule(F, 'api-security-scope-added', 'request', 'breaking', 'A security requirement needs an extra scope: existing tokens may lack it.', '`[{oauth: [read]}]` → `[{oauth: [read, write]}]`');
export const API_SECURITY_SCOPE_REMOVED = defineRule(F, 'api-security-scope-removed', 'request', 'non-breaking', 'A security requirement needs one scope fewer.', '`[{oauth: [read, write]}]` → `[{oauth: [read]}]`');
export const SECURITY_SCHEME_CHANGED = defineRule(F, 'security-scheme-changed', 'request', 'breaking', 'A security scheme changed how credentials are passed (type, http scheme, API key name or location, OAuth flow URLs).', '`{type: apiKey, in: header, name: X-Key}` → `{type: apiKey, in: query, name: key}`');

export const securityRules = [
  API_SECURITY_ADDED,
  API_SECURITY_REMOVED,
  API_SECURITY_REQUIREMENT_ADDED,
  API_SECURITY_REQUIREMENT_REMOVED,
  API_SECURITY_SCOPE_ADDED,
  API_SECURITY_SCOPE_REMOVED,
  SECURITY_SCHEME_CHANGED,
];

/** An empty requirement list, or an empty requirement `{}` in it, means anonymous access is allowed. */
const isPublic = (reqs: SecurityRequirementView[]) => reqs.length === 0 || reqs.some((r) => r.key === '');

export function checkSecurity(ctx: DiffContext, b: OperationView, h: OperationView): void {
  const s = { operation: h.key, display: h.display };
  const at = { base: b.securityLoc, head: h.securityLoc };
  const bPublic = isPublic(b.security);
  const hPublic = isPublic(h.security);
  if (bPublic && !hPublic) {
    ctx.report(API_SECURITY_ADDED, s, { ...at, message: `authentication now required (${h.security.map((r) => r.key).join(' or ')})` });
    return;
  }
  if (!bPublic && hPublic) {
    ctx.report(API_SECURITY_REMOVED, s, { ...at, message: 'authentication no longer required' });
    return;
  }
  const bReqs = new Map(b.security.map((r) => [r.key, r]));
  const hReqs = new Map(h.security.map((r) => [r.key, r]));
  for (const key of [...new Set([...bReqs.keys(), ...hReqs.keys()])].sort()) {
    const br = bReqs.get(key);
    const hr = hReqs.get(key);
    if (br && !hr) ctx.report(API_SECURITY_REQUIREMENT_REMOVED, s, { ...at, subject: key, message: `security requirement ${key} removed` });
    else if (!br && hr) ctx.report(API_SECURITY_REQUIREMENT_ADDED, s, { ...at, subject: key, message: `security requirement ${key} added` });
    else if (br && hr) {
      for (const [scheme, scopes] of hr.scopes) {
        const before = new Set(br.scopes.get(scheme) ?? []);
        for (const scope of scopes) if (!before.has(scope)) ctx.report(API_SECURITY_SCOPE_ADDED, s, { ...at, subject: `${scheme}:${scope}`, message: `${scheme} now needs scope ${scope}` });
      }
      for (const [scheme, scopes] of br.scopes) {
        const after = new Set(hr.scopes.get(scheme) ?? []);
        for (const scope of scopes) if (!after.has(scope)) ctx.report(API_SECURITY_SCOPE_REMOVED, s, { ...at, subject: `${scheme}:${scope}`, message: `${scheme} no longer needs scope ${scope}` });
      }
    }
  }
}

const SCHEME_FIELDS = ['type', 'scheme', 'in', 'name', 'flow', 'authorizationUrl', 'tokenUrl', 'openIdConnectUrl'];

function schemeShape(node: unknown): string {
  if (!isObject(node)) return '';
  const parts = SCHEME_FIELDS.map((f) => `${f}=${String(node[f] ?? '')}`);
  if (isObject(node.flows)) {
    for (const flow of Object.keys(node.flows).sort()) {
      const f = node.flows[flow];
      if (isObject(f)) parts.push(`${flow}:${String(f.authorizationUrl ?? '')}|${String(f.tokenUrl ?? '')}`);
    }
  }
  return parts.join(';');
}

export function checkSecuritySchemes(ctx: DiffContext, base: SpecModel, head: SpecModel): void {
  for (const [name, bl] of [...base.securitySchemes].sort(([a], [b]) => a.localeCompare(b))) {
    const hl = head.securitySchemes.get(name);
    if (!hl) continue; // removal shows up as removed requirements on the operations that used it
    const before = schemeShape(bl.node);
    const after = schemeShape(hl.node);
    if (before !== after) ctx.report(SECURITY_SCHEME_CHANGED, { operation: '', display: '' }, { base: bl, head: hl, message: `security scheme ${name} changed` });
  }
}
