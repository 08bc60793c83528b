import { execFileSync } from 'node:child_process';

/**
 * Mutation of the tutorial's checks (issue 38: a check that passes whatever the output is proves
 * nothing). A check is `check '<jq expression>' [jq options or files]`; its expected values are the
 * literals of the expression and the values it passes with `--arg`. Each mutant changes one of them
 * so that the recorded (correct) output no longer satisfies it — a check that still passes is vacuous
 * in that place.
 */
export interface Mutant {
  label: string;
  expr: string;
  args: string[];
}

const TOKEN = /"(?:[^"\\]|\\.)*"|\$\w+|(?<![\w.$])\d+(?:\.\d+)?(?![\w.])|\btrue\b|\bfalse\b|==|!=|>=|<=|>|</g;
const NEGATED: Record<string, string> = { '==': '!=', '!=': '==', '>=': '<', '<=': '>', '>': '<=', '<': '>=' };
const INEQUALITY = /(>=|<=|>|<)\s*$/;

export function mutantsOf(expr: string, args: string[]): Mutant[] {
  const out: Mutant[] = [];
  const replace = (at: number, length: number, by: string) => expr.slice(0, at) + by + expr.slice(at + length);
  for (const m of expr.matchAll(TOKEN)) {
    const token = m[0];
    const at = m.index!;
    if (token.startsWith('"')) {
      // Inside a string interpolation or an error message there is nothing to expect; every other string is.
      out.push({ label: `${token} → ${token.slice(0, -1)}~"`, expr: replace(at, token.length, `${token.slice(0, -1)}~"`), args });
    } else if (token.startsWith('$')) {
      const i = args.findIndex((a, k) => (a === '--arg' || a === '--argjson') && args[k + 1] === token.slice(1));
      if (i < 0) continue;
      const mutated = [...args];
      mutated[i + 2] = args[i] === '--arg' ? `${args[i + 2]}~` : JSON.stringify([JSON.parse(args[i + 2])]);
      out.push({ label: `${token} = ${mutated[i + 2]}`, expr, args: mutated });
    } else if (token === 'true' || token === 'false') {
      out.push({ label: `${token} → ${token === 'true' ? 'false' : 'true'}`, expr: replace(at, token.length, token === 'true' ? 'false' : 'true'), args });
    } else if (NEGATED[token]) {
      out.push({ label: `${token} → ${NEGATED[token]}`, expr: replace(at, token.length, NEGATED[token]), args });
    } else if (!INEQUALITY.test(expr.slice(0, at))) {
      // A bound (`length > 50`) is mutated by negating its comparison; an expected number or an index by one more.
      out.push({ label: `${token} → ${Number(token) + 1}`, expr: replace(at, token.length, String(Number(token) + 1)), args });
    }
  }
  return out;
}

/** Whether the page's `check` (its definition line) passes on `stdin` with this expression and these arguments. */
export function runCheck(definition: string, expr: string, args: string[], stdin: string): boolean {
  try {
    execFileSync('bash', ['-c', `${definition}\ncheck "$@"`, 'bash', expr, ...args], { input: stdin, stdio: ['pipe', 'pipe', 'pipe'] });
    return true;
  } catch {
    return false;
  }
}
