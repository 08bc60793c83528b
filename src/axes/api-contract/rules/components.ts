import { canonicalJson, type DiffContext } from '../context';
import { childLoc, isObject, type Loc, type SpecDocuments } from '../document';
import type { SpecModel } from '../model';
import { defineRule } from '../rule';

const F = 'components';

/**
 * Schemas no operation reaches are not part of what any client sends or reads, so the operation diff never
 * visits them; a user still wants to see that they changed (a model a later PR will wire in, a leftover).
 * They are reported, once per component, as info.
 */
export const COMPONENT_SCHEMA_ADDED = defineRule(F, 'component-schema-added', 'none', 'info', 'A schema was added to `components/schemas` (or `definitions`) that no operation uses.', 'absent → `components: {schemas: {Draft: …}}`');
export const COMPONENT_SCHEMA_REMOVED = defineRule(F, 'component-schema-removed', 'none', 'info', 'A schema no operation used was removed from `components/schemas` (or `definitions`).', '`components: {schemas: {Legacy: …}}` → absent');
export const COMPONENT_SCHEMA_CHANGED = defineRule(F, 'component-schema-changed', 'none', 'info', 'A schema that no operation uses changed: no client sees it, yet.', '`Draft: {properties: {a}}` → `Draft: {properties: {a, b}}`');

export const componentRules = [COMPONENT_SCHEMA_ADDED, COMPONENT_SCHEMA_REMOVED, COMPONENT_SCHEMA_CHANGED];

/**
 * Every object node reachable from the operations (paths and webhooks), following `$ref`s — or, when the
 * tree shares no objects (no YAML aliases), only those of them that can tell a component is used: the
 * `$ref` nodes, the nodes they lead to, and the nodes of `candidates` met on the way. Walks raw nodes with
 * their file beside them (no location object per node: this visits the whole document).
 */
function reachableNodes(docs: SpecDocuments, candidates: ReadonlySet<object>): Set<object> {
  const seen = new Set<object>();
  // Without shared objects a node is reached twice only through a `$ref`: remembering where the `$ref`s
  // lead is enough to visit each part once (and to stop on a cycle); the rest of the tree needs no set.
  const treeOnly = !docs.sharesObjects;
  const root = docs.root;
  const rootNode = root.node as Record<string, unknown>;
  const nodes: unknown[] = [rootNode?.paths, rootNode?.webhooks];
  const files: string[] = [root.file, root.file];
  while (nodes.length > 0) {
    let node = nodes.pop();
    let file = files.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    let target = false;
    if (!Array.isArray(node) && typeof (node as Record<string, unknown>).$ref === 'string') {
      seen.add(node); // an alias component is used too
      const at = docs.deref({ file, ptr: '', node });
      node = at.node;
      file = at.file;
      if (typeof node !== 'object' || node === null) continue;
      target = true;
    }
    if (!treeOnly || target) {
      if (seen.has(node)) continue;
      seen.add(node);
    } else if (candidates.has(node)) seen.add(node);
    if (Array.isArray(node)) {
      for (const v of node) if (typeof v === 'object' && v !== null) (nodes.push(v), files.push(file));
    } else {
      for (const k in node) {
        const v = (node as Record<string, unknown>)[k];
        if (typeof v === 'object' && v !== null) (nodes.push(v), files.push(file));
      }
    }
  }
  return seen;
}

function componentSchemas(model: SpecModel): { container: Loc; names: string[] } {
  const root = model.docs.root;
  const container = model.flavor === 'swagger-2.0' ? childLoc(root, 'definitions') : childLoc(childLoc(root, 'components'), 'schemas');
  return { container, names: isObject(container.node) ? Object.keys(container.node) : [] };
}

export function checkUnreachableComponents(ctx: DiffContext, base: SpecModel, head: SpecModel): void {
  const b = componentSchemas(base);
  const h = componentSchemas(head);
  if (b.names.length === 0 && h.names.length === 0) return;
  const nodesOf = (c: { container: Loc; names: string[] }) => new Set(c.names.map((n) => (c.container.node as Record<string, unknown>)[n]).filter((v): v is object => typeof v === 'object' && v !== null));
  const reachedB = reachableNodes(base.docs, nodesOf(b));
  const reachedH = reachableNodes(head.docs, nodesOf(h));
  const none = { operation: '', display: '' };
  const bNames = new Set(b.names);
  const hNames = new Set(h.names);
  for (const name of [...new Set([...b.names, ...h.names])].sort()) {
    const bl = bNames.has(name) ? childLoc(b.container, name) : undefined;
    const hl = hNames.has(name) ? childLoc(h.container, name) : undefined;
    const used = (bl && typeof bl.node === 'object' && bl.node !== null && reachedB.has(bl.node)) || (hl && typeof hl.node === 'object' && hl.node !== null && reachedH.has(hl.node));
    if (used) continue;
    if (bl && !hl) ctx.report(COMPONENT_SCHEMA_REMOVED, none, { base: bl, message: `unused schema ${name} removed` });
    else if (!bl && hl) ctx.report(COMPONENT_SCHEMA_ADDED, none, { head: hl, message: `unused schema ${name} added` });
    else if (bl && hl && canonicalJson(bl.node) !== canonicalJson(hl.node)) ctx.report(COMPONENT_SCHEMA_CHANGED, none, { base: bl, head: hl, message: `unused schema ${name} changed` });
  }
}
