import { z } from 'zod';
import { defineEvent } from './define';

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * A human approved one visual change (SPEC §12). The approval applies to an image, not to a name:
 * `approvalKey` is the sha256 of the approved head PNG (or `removed:<sha256 of the base PNG>` for an
 * approved removal; see `approvalKeyOf` in src/axes/visual/gate.ts), so it lapses once the image changes.
 */
export const VisualChangeApproved = defineEvent(
  'VisualChangeApproved',
  'pr',
  1,
  z.object({
    snapshotId: z.string().min(1).max(500),
    approvalKey: z
      .string()
      .refine((k) => SHA256.test(k) || (k.startsWith('removed:') && SHA256.test(k.slice('removed:'.length))), {
        message: 'approvalKey must be a sha256 hex digest (64 lowercase hex digits), optionally prefixed "removed:"',
      }),
    /** The approving principal (always a human with member role or above). */
    by: z.string().min(1).max(200),
    /** The head the approval was made on; it keeps applying while the same image reappears. */
    headSha: z.string().regex(/^[0-9a-f]{7,64}$/, 'headSha must be a hex commit id (7-64 lowercase hex digits)'),
  }),
);

export const visualEvents = [VisualChangeApproved];
