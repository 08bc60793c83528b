import { z } from 'zod';

/** Workspace roles, strongest first (SPEC §16). */
export const ROLES = ['owner', 'admin', 'member', 'viewer', 'guest'] as const;
// Pure: a bundle that needs only the ranking (the Review page) leaves zod out.
export const roleSchema = /* @__PURE__ */ z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

const rank: Record<Role, number> = { owner: 4, admin: 3, member: 2, viewer: 1, guest: 0 };
export const roleAtLeast = (role: Role, min: Role): boolean => rank[role] >= rank[min];
