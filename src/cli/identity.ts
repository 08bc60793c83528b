import { DomainError } from '../domain-error';
import type { CommandEnvelope } from '../commands/kernel';
import { principalSchema } from '../events/envelope';
import { LOCAL_OPERATOR, type Ledger } from '../ledger';
import { authenticate } from '../security/tokens';

export interface CliIdentityOptions {
  /** A bearer token of the workspace: the CLI then acts as its principal, with its (membership-capped) role. */
  token?: string;
  /** Who the caller means to act as: must be the token's principal, or the local operator without one. */
  as?: string;
}

/**
 * Who a CLI act is recorded as. Acting as a principal needs that principal's token; without one the act is
 * the local operator's (who owns the host and the data dir), marked `via: cli` — never an asserted identity.
 */
export async function cliIdentity(ledger: Ledger, workspaceId: string, opts: CliIdentityOptions): Promise<Omit<CommandEnvelope, 'idempotencyKey'>> {
  const as = opts.as === undefined ? undefined : principalSchema.parse(opts.as);
  const token = opts.token ?? process.env.REVIEW_LEDGER_TOKEN;
  if (token) {
    const caller = await authenticate(ledger, workspaceId, token);
    if (as !== undefined && as !== caller.principal) throw new DomainError('identity_mismatch', `--as: the token belongs to ${caller.principal}, not ${as}`);
    return { principal: caller.principal, role: caller.role, tokenId: caller.tokenId, via: 'cli' };
  }
  if (as !== undefined && as !== LOCAL_OPERATOR.principal) {
    throw new DomainError('identity_unproven', `--as: acting as ${as} needs that principal's token (--token or REVIEW_LEDGER_TOKEN); without one the CLI acts as the local operator (${LOCAL_OPERATOR.principal})`);
  }
  return { ...LOCAL_OPERATOR };
}
