import type { Via } from './commands/kernel';
import type { Principal } from './events/envelope';

/**
 * The principal the local CLI acts as (it has filesystem access to the data dir, so it is the owner).
 * Its acts are marked `via: cli` in the log; a CLI act as anyone else needs that principal's token.
 * In a module of its own, importing nothing at run time, so that the CLI can name it in option
 * defaults without loading the ledger (see src/cli/commands/index.ts).
 */
export const LOCAL_OPERATOR: { principal: Principal; role: 'owner'; via: Via } = { principal: 'user:local-operator', role: 'owner', via: 'cli' };
