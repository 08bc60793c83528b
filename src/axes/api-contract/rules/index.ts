import { componentRules } from './components';
import { attachOasdiff } from './oasdiff';
import { operationRules } from './operations';
import { parameterRules } from './parameters';
import { requestBodyRules } from './request-body';
import { responseRules } from './responses';
import type { ContractRule } from '../rule';
import { schemaArrayRules } from './schema-arrays';
import { schemaCompositionRules } from './schema-composition';
import { schemaConstraintRules } from './schema-constraints';
import { schemaObjectRules } from './schema-objects';
import { schemaTypeRules } from './schema-types';
import { securityRules } from './security';
import { webhookRules } from './webhooks';

/** Every contract rule, in documentation order. docs/contract-rules.md is generated from this list. */
export const CONTRACT_RULES: readonly ContractRule[] = attachOasdiff([
  ...operationRules,
  ...parameterRules,
  ...requestBodyRules,
  ...responseRules,
  ...schemaTypeRules,
  ...schemaConstraintRules,
  ...schemaObjectRules,
  ...schemaArrayRules,
  ...schemaCompositionRules,
  ...securityRules,
  ...webhookRules,
  ...componentRules,
]);

export const RULES_BY_ID: ReadonlyMap<string, ContractRule> = new Map(CONTRACT_RULES.map((r) => [r.id, r]));

export type { ContractRule } from '../rule';
