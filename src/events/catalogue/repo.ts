import { z } from 'zod';
import { defineEvent } from './define';

const sha = z.string().regex(/^[0-9a-f]{7,64}$/, 'must be a hex commit id (7-64 lowercase hex digits)');

export const forgeSchema = z.object({
  kind: z.enum(['github', 'gitlab', 'bitbucket']),
  owner: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  /** Web URL of the repository on the forge (https://host/owner/name). */
  url: z.string().min(1).max(2000),
});
export type Forge = z.infer<typeof forgeSchema>;

export const repoConfigSchema = z.object({
  /** Shell command run in base/head worktrees by the visual axis (SPEC §12). */
  renderCommand: z.string().min(1).max(4000).optional(),
  /** Repo-relative folder the render command writes PNGs to (required for the command to be used). */
  renderOutputDir: z.string().min(1).max(4000).optional(),
  renderTimeoutMs: z.number().int().positive().max(3_600_000).optional(),
  /** Recompute automatically when a new head is observed. */
  autoRecompute: z.boolean().optional(),
});
export type RepoConfig = z.infer<typeof repoConfigSchema>;

/** A local git work tree registered in a workspace; stream `repo-<repoId>`. */
export const RepoRegistered = defineEvent(
  'RepoRegistered',
  'repo',
  1,
  z.object({
    repoId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'repoId must be 1-100 chars of letters, digits, ".", "_" or "-"'),
    /** Absolute path of the work tree's top level; nothing outside it is ever read. */
    path: z.string().min(1).max(4000),
    forge: forgeSchema,
    defaultBranch: z.string().min(1).max(255).optional(),
    config: repoConfigSchema.optional(),
  }),
);

export const languageCountSchema = z.object({ language: z.string().min(1).max(50), files: z.number().int().nonnegative() });

/** The code graph of one commit was built (SPEC §8.1). */
export const RepoIndexed = defineEvent(
  'RepoIndexed',
  'repo',
  1,
  z.object({
    commit: sha,
    engineVersion: z.string().min(1).max(100).optional(),
    /** Files per language that has a grammar (semantic grouping possible). */
    languages: z.array(languageCountSchema).max(100),
    fileCount: z.number().int().nonnegative(),
    symbolCount: z.number().int().nonnegative(),
    /** Blobs parsed by this run vs. served from the blob-SHA cache. */
    parsedBlobs: z.number().int().nonnegative(),
    cachedBlobs: z.number().int().nonnegative(),
    /** Source-looking files in languages without a grammar: never grouped semantically (first 500 listed). */
    unsupportedFiles: z.array(z.string().max(4000)).max(500),
    unsupportedFileCount: z.number().int().nonnegative().optional(),
  }),
);

export const repoEvents = [RepoRegistered, RepoIndexed];
