import { z } from 'zod';
import { defineEvent } from './define';

/** A human's decision on one API-contract change (SPEC §11); keyed by the change's stable changeId. */
export const ContractChangeDecided = defineEvent(
  'ContractChangeDecided',
  'pr',
  1,
  z.object({
    changeId: z.string().min(1).max(200),
    decision: z.enum(['approved', 'rejected']),
    /** The deciding principal (always a human with member role or above). */
    by: z.string().min(1).max(200),
    note: z.string().max(4000).optional(),
    /** The head the decision was made on; the decision keeps applying while the changeId reappears. */
    headSha: z.string().regex(/^[0-9a-f]{7,64}$/, 'headSha must be a hex commit id (7-64 lowercase hex digits)'),
  }),
);

export const contractEvents = [ContractChangeDecided];
