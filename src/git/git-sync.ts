import { execFileSync } from 'node:child_process';

/**
 * `git <args>` in `cwd`, synchronously, its trimmed stdout. For building a repository the server owns
 * (the demo's); reading a registered repository goes through GitRepo, which bounds and confines it.
 */
export function gitSync(cwd: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env }).trim();
}
