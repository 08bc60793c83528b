import * as fs from 'node:fs';

/**
 * The process's soft `nofile` limit (Linux: /proc/self/limits; elsewhere the common 1024). Open
 * workspaces take at most half of it (workspaces/registry.ts) and client connections at most 3/8
 * (server/connection-guard.ts); the rest is for git, child processes and the files a request opens.
 */
export function softOpenFileLimit(): number {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    if (m) return m[1] === 'unlimited' ? 1 << 20 : Number(m[1]);
  } catch {
    // Not Linux: assume the common 1024.
  }
  return 1024;
}
