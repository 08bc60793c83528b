import type { CommandOutcome } from '../commands/kernel';

/**
 * How the CLI reports an act to a person (issue 38: it printed the kernel's raw response): one line with
 * what was recorded and where — its positions in the log and its stream — or that nothing needed
 * recording, then the result's fields on a second line. `--json` prints the exact response bytes instead
 * (byte-identical on an idempotent replay), for scripts.
 */
export function actLine(command: string, out: CommandOutcome): string {
  const r = out.response;
  const n = r.eventIds.length;
  const where = r.firstPosition === null ? '' : r.firstPosition === r.lastPosition ? ` at position ${r.firstPosition}` : ` at positions ${r.firstPosition}–${r.lastPosition}`;
  const head = n === 0 ? `${command}: nothing to record (already so), stream ${r.streamId}` : `${command}: recorded ${n} event${n === 1 ? '' : 's'}${where}, stream ${r.streamId}`;
  const replayed = out.replayed ? ' (this idempotency key was used before: the original answer)' : '';
  const result = r.result === null || r.result === undefined ? '' : `\n  ${summarize(r.result)}`;
  return `${head}${replayed}${result}\n`;
}

/** `key: value` pairs of a result object, short values inline (nested ones as compact JSON). */
function summarize(result: unknown): string {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return JSON.stringify(result);
  return Object.entries(result as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' · ');
}

/** The act as the user asked: the exact response with --json, else actLine. */
export function printAct(command: string, out: CommandOutcome, json: boolean | undefined): void {
  process.stdout.write(json ? `${out.json}\n` : actLine(command, out));
}
