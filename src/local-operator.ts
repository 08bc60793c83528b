import type { Principal } from './events/envelope';

/**
 * The principal the local CLI acts as (it has filesystem access to the data dir, so it is the owner).
 * In a module of its own, importing nothing at run time, so that the CLI can name it in option
 * defaults without loading the ledger (see src/cli/commands/index.ts).
 */
export const LOCAL_OPERATOR: { principal: Principal; role: 'owner' } = { principal: 'user:local-operator', role: 'owner' };
