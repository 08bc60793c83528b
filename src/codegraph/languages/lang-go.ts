/** Parses `module <path>` out of a go.mod text. */
export function goModulePath(goMod: string): string | undefined {
  return /^\s*module\s+(\S+)/m.exec(goMod)?.[1]?.replace(/^"|"$/g, '');
}
