import { Inject, Injectable, type Type } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { assertKnownFields } from '../commands/payload-keys';
import { DomainError, validationError } from '../domain-error';
import { Ledger } from '../ledger';
import type { QueryDefinition } from '../readmodels/queries/query';
import { QUERIES } from '../readmodels/queries/queries';
import { answerQuery, type QueryAnswer } from '../readmodels/queries/run-query';

/**
 * A read model of the query registry on the QueryBus; answers `{ position, value }` exactly as
 * `review_studio.<name>` does. No role check here: bus callers are server code, and the edges
 * authorize their callers before they ask.
 */
export abstract class LedgerQuery<I = unknown> extends Query<QueryAnswer> {
  static readonly definition: QueryDefinition;

  constructor(
    readonly workspaceId: string,
    readonly input: I,
    /** Answer as of this global position (default: the head). */
    readonly asOf?: number,
  ) {
    super();
  }
}

export type LedgerQueryType = Type<LedgerQuery> & { readonly definition: QueryDefinition };

function queryClass(def: QueryDefinition): LedgerQueryType {
  const name = `${def.name[0].toUpperCase()}${def.name.slice(1)}Query`;
  const cls = { [name]: class extends LedgerQuery {} }[name] as unknown as LedgerQueryType;
  Object.defineProperty(cls, 'definition', { value: def });
  return cls;
}

function handlerClass(cls: LedgerQueryType): Type<IQueryHandler<LedgerQuery, QueryAnswer>> {
  const def = cls.definition;
  const name = `${cls.name}Handler`;
  const handler = {
    [name]: class implements IQueryHandler<LedgerQuery, QueryAnswer> {
      constructor(readonly ledger: Ledger) {}
      async execute(q: LedgerQuery): Promise<QueryAnswer> {
        // The same refusals as review_studio.<name>: unknown fields, then the schema.
        assertKnownFields(def.input, q.input ?? {});
        const parsed = def.input.safeParse(q.input ?? {});
        if (!parsed.success) throw validationError(parsed.error.issues);
        return answerQuery(def, await this.ledger.workspace(q.workspaceId), parsed.data, q.asOf);
      }
    },
  }[name];
  Inject(Ledger)(handler, undefined, 0);
  Injectable()(handler);
  QueryHandler(cls)(handler);
  return handler;
}

const byName = new Map<string, LedgerQueryType>(QUERIES.map((def) => [def.name, queryClass(def)]));

/** One QueryBus class per registry query (`verdict` → `VerdictQuery`). */
export function ledgerQueryClass(name: string): LedgerQueryType {
  const cls = byName.get(name);
  if (!cls) throw new DomainError('unknown_query', `"${name.slice(0, 100)}" is not a registered query`);
  return cls;
}

/** `queryBus.execute(ledgerQuery('verdict', 'default', { repoId, prNumber }))`. */
export function ledgerQuery<I>(name: string, workspaceId: string, input: I, asOf?: number): LedgerQuery<I> {
  const cls = ledgerQueryClass(name) as unknown as new (w: string, i: I, a?: number) => LedgerQuery<I>;
  return new cls(workspaceId, input, asOf);
}

export const LEDGER_QUERY_CLASSES: readonly LedgerQueryType[] = [...byName.values()];
export const LEDGER_QUERY_HANDLERS: readonly Type<unknown>[] = LEDGER_QUERY_CLASSES.map(handlerClass);
