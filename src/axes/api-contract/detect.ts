import * as path from 'node:path';

/** The six names SPEC §11 treats as API descriptions wherever they sit in the tree. */
export const DEFAULT_SPEC_NAMES: readonly string[] = ['openapi.yaml', 'openapi.yml', 'openapi.json', 'swagger.yaml', 'swagger.yml', 'swagger.json'];
const SPEC_EXTENSIONS = ['.yaml', '.yml', '.json'];

export type SpecNameMatch = 'default-name' | 'name-contains' | null;

/**
 * How a path qualifies as an explicit spec file (SPEC §11): one of the default names, or a file whose
 * name contains `openapi`/`swagger` and ends in .yaml/.yml/.json. Matching is on the file name only and
 * case-insensitive (`OpenAPI.yaml` is a spec; `docs/openapi/readme.md` is not).
 */
export function matchSpecPath(filePath: string): SpecNameMatch {
  const name = path.posix.basename(filePath).toLowerCase();
  if (DEFAULT_SPEC_NAMES.includes(name)) return 'default-name';
  if (!SPEC_EXTENSIONS.some((ext) => name.endsWith(ext))) return null;
  return name.includes('openapi') || name.includes('swagger') ? 'name-contains' : null;
}

export const isSpecPath = (filePath: string): boolean => matchSpecPath(filePath) !== null;
