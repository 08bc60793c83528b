import { z } from 'zod';
import { principalSchema } from '../envelope';
import { roleSchema } from '../roles';
import { defineEvent } from './define';

export const reviewLevelSchema = z.enum(['light', 'balanced', 'thorough']);
export type ReviewLevel = z.infer<typeof reviewLevelSchema>;

export const workspaceIdSchema = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'must be 1–63 characters of a-z, 0-9 and "-", starting with a letter or digit');

export const workspaceEvents = [
  /** v2: `name` + `defaultLevel` (v1 had `{ id, title }`; see upcasters.ts). */
  defineEvent('WorkspaceCreated', 'workspace', 2, z.object({ workspaceId: workspaceIdSchema, name: z.string().min(1).max(200), defaultLevel: reviewLevelSchema })),
  defineEvent('MemberAdded', 'workspace', 1, z.object({ principal: principalSchema, role: roleSchema })),
  defineEvent('MemberRoleChanged', 'workspace', 1, z.object({ principal: principalSchema, from: roleSchema, to: roleSchema })),
  defineEvent('MemberRemoved', 'workspace', 1, z.object({ principal: principalSchema })),
  /** Only the token's sha256 is stored; the secret is shown once to whoever issued it. */
  defineEvent(
    'ApiTokenIssued',
    'workspace',
    1,
    z.object({
      tokenId: z.string().max(100),
      tokenHash: z.string().regex(/^[0-9a-f]{64}$/),
      principal: principalSchema,
      role: roleSchema,
      label: z.string().max(200).optional(),
      /**
       * Present on a session or CLI sign-in token: minted by the person's own sign-in at the identity
       * provider `issuer` as `subject` (the first one binds the principal to that identity), valid until
       * `expiresAt` (ISO-8601). `method`: `code` (the Review page) or `device` (`review-ledger login`).
       */
      signIn: z.object({ issuer: z.string().max(2000), subject: z.string().max(500), expiresAt: z.string().max(40), method: z.enum(['code', 'device']) }).optional(),
    }),
  ),
  defineEvent('ApiTokenRevoked', 'workspace', 1, z.object({ tokenId: z.string().max(100) })),
  defineEvent('ReviewLevelSet', 'workspace', 1, z.object({ level: reviewLevelSchema })),
  defineEvent('RulesVersionActivated', 'workspace', 1, z.object({ rulesVersion: z.string().max(100), document: z.record(z.string(), z.unknown()) })),
  defineEvent(
    'SuppressionFactRecorded',
    'workspace',
    1,
    z.object({
      fingerprint: z.string().max(128),
      repoId: z.string().max(100).optional(),
      nodeId: z.string().max(100),
      prNumber: z.number().int().positive().optional(),
      reason: z.string().max(10_000),
      confidence: z.literal('low'),
    }),
  ),
];
