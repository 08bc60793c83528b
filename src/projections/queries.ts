import type { QueryDefinition } from './query';

/** Every query of the ledger (RPC `review_studio.<name>` + `watch<Name>`). One line each. */
export const QUERIES: QueryDefinition[] = [];

export const queryByName = (name: string): QueryDefinition | undefined => QUERIES.find((q) => q.name === name);
