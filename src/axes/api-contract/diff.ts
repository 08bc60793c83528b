import type { ContractChange } from '../types';
import { DiffContext, type DiffOptions } from './context';
import { SpecDocuments, type LoadedSpec } from './document';
import type { OasdiffFinding } from './oasdiff-id';
import { buildModel, type OperationView, type SpecModel } from './model';
import { checkUnreachableComponents } from './rules/components';
import { checkDocument, checkOperationAdded, checkOperationMetadata, checkOperationRemoved, isUnstable } from './rules/operations';
import { checkParameters } from './rules/parameters';
import { checkRequestBody } from './rules/request-body';
import { checkResponses } from './rules/responses';
import { checkSecurity, checkSecuritySchemes } from './rules/security';
import { checkWebhookAdded, checkWebhookRemoved } from './rules/webhooks';
import { SchemaDiff } from './rules/schema-diff';

export interface SpecDiff {
  changes: ContractChange[];
  /** `$ref`s that resolved to nothing, per side: the diff around them is incomplete. */
  unresolvedRefs: string[];
  /** changeId → the change as oasdiff names it (its exact twin id and default level), where oasdiff has one. */
  oasdiff?: ReadonlyMap<string, OasdiffFinding>;
}

/** An added or deleted spec is compared against a document with no operations. */
function emptySide(file: string, like: LoadedSpec): LoadedSpec {
  return { docs: new SpecDocuments(file, new Map([[file, {}]])), flavor: like.flavor };
}

/**
 * Compares two loaded specs (either may be null: spec added or deleted) and classifies every change.
 * Pure: no clock (the sunset rules use `options.asOf`), no I/O; deterministic order (operations sorted
 * by their normalized key).
 */
export function diffSpecs(base: LoadedSpec | null, head: LoadedSpec | null, specPath: string, options: DiffOptions = {}): SpecDiff {
  if (!base && !head) return { changes: [], unresolvedRefs: [] };
  const b = base ?? emptySide(head!.docs.rootFile, head!);
  const h = head ?? emptySide(base!.docs.rootFile, base!);
  const bm = buildModel(b.docs, b.flavor);
  const hm = buildModel(h.docs, h.flavor);
  const ctx = new DiffContext(b.docs, h.docs, specPath, options);
  const schemas = new SchemaDiff(ctx);
  checkDocument(ctx, bm, hm);
  checkSecuritySchemes(ctx, bm, hm);
  // Operations marked alpha/draft come last: a change inside a schema they share with a stable operation
  // is recorded once, at the first operation reaching it, and must be recorded with the stable one's grade.
  const keys = [...new Set([...bm.operations.keys(), ...hm.operations.keys()])].sort();
  const unstableHead = (k: string) => {
    const ho = hm.operations.get(k);
    return ho !== undefined && bm.operations.has(k) && isUnstable(ho);
  };
  const pathOfKey = (k: string) => k.slice(k.indexOf(' ') + 1);
  const headPaths = new Set([...hm.operations.values()].filter((o) => !o.webhook).map((o) => pathOfKey(o.key)));
  for (const key of [...keys.filter((k) => !unstableHead(k)), ...keys.filter(unstableHead)]) {
    const bo = bm.operations.get(key);
    const ho = hm.operations.get(key);
    // a callback comes and goes with its operation: only report it on its own when the operation stays
    const callbackOwner = (bo ?? ho)!.owner;
    if (callbackOwner && (!bm.operations.has(callbackOwner) || !hm.operations.has(callbackOwner)) && !(bo && ho)) continue;
    if (bo && !ho) {
      if (bo.webhook) checkWebhookRemoved(ctx, bo);
      else checkOperationRemoved(ctx, bo, !headPaths.has(pathOfKey(key)));
    } else if (!bo && ho) {
      if (ho.webhook) checkWebhookAdded(ctx, ho);
      else checkOperationAdded(ctx, ho);
    } else if (bo && ho) {
      checkOperationMetadata(ctx, bo, ho);
      ctx.exempt = isUnstable(ho) ? ho.stability : undefined;
      compareOperation(ctx, schemas, bo, ho);
      ctx.exempt = undefined;
    }
  }
  checkUnreachableComponents(ctx, bm, hm);
  const unresolvedRefs = [...[...b.docs.unresolved].map((r) => `base ${r}`), ...[...h.docs.unresolved].map((r) => `head ${r}`)];
  return { changes: ctx.changes, unresolvedRefs, oasdiff: ctx.oasdiff };
}

function compareOperation(ctx: DiffContext, schemas: SchemaDiff, b: OperationView, h: OperationView): void {
  // Webhook data flows from the API to the subscriber: its payload is read by the client like a response.
  const requestDirection = h.webhook ? 'response' : 'request';
  const responseDirection = h.webhook ? 'request' : 'response';
  checkParameters(ctx, schemas, b, h, requestDirection);
  checkRequestBody(ctx, schemas, b, h, requestDirection);
  checkResponses(ctx, schemas, b, h, responseDirection);
  checkSecurity(ctx, b, h);
}

export type { SpecModel };
