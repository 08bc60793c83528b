/**
 * Output hygiene (SPEC §16, issue 19). What reviewers and agents write is stored exactly as written — the
 * log is evidence, and its digests and hash chain must describe the bytes that were sent — and is
 * neutralized where it is rendered for a human: the CLI's terminal output and the text published to GitHub.
 *
 * Neutralized: C0 controls except tab and newline (NUL, ESC — ANSI sequences start with it —, a lone CR
 * that rewrites a line, …), DEL, C1 controls (CSI 0x9b among them), the bidirectional overrides and
 * isolates behind "Trojan Source" (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C) and the Unicode
 * line separators. Each becomes the visible escape `\uXXXX`: inside a JSON string that is the same
 * string (so JSON output stays exact), anywhere else it is plain, inert text.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with every unsafe character replaced by its visible `\uXXXX` escape. */
export function neutralize(text: string): string {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(text) ? text.replace(UNSAFE, escape) : text;
}

/** True when `text` holds a character `neutralize` would replace. */
export function hasUnsafeCharacters(text: string): boolean {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(text);
}

/**
 * What GitHub would turn into an act of the publisher: an `@user` / `@org/team` mention notifies people
 * (an agent's text could page a whole team in the ledger's name), and raw HTML renders — a tracking
 * `<img>`, a `<!-- -->` hiding text from the reader, a forged `<details>` or link. In agent-written prose
 * published to GitHub, outside code spans, a mention gets a zero-width joiner after its `@` (it reads the
 * same, links to no one) and `<` becomes `&lt;` (shown as typed, never a tag). Code spans and fenced
 * blocks are kept verbatim: GitHub renders neither mentions nor HTML there, and a code sample must stay
 * exact. An e-mail address (a word character before the `@`) is not a mention and is left alone.
 */
const MENTION = /(^|[^A-Za-z0-9_`])@(?=[A-Za-z0-9])/g;

export function defuseProse(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const tick = text.indexOf('`', i);
    if (tick < 0) {
      out += defuseOutsideCode(text.slice(i));
      break;
    }
    out += defuseOutsideCode(text.slice(i, tick));
    let n = 1;
    while (text[tick + n] === '`') n++;
    const close = findBacktickRun(text, tick + n, n);
    const end = close < 0 ? tick + n : close + n;
    // An unmatched run is literal backticks (CommonMark): nothing after it is code.
    out += text.slice(tick, end);
    i = end;
  }
  return out;
}

/** Start of the next run of exactly `n` backticks at or after `from`, or -1. */
function findBacktickRun(text: string, from: number, n: number): number {
  for (let j = text.indexOf('`', from); j >= 0; j = text.indexOf('`', j)) {
    let m = 1;
    while (text[j + m] === '`') m++;
    if (m === n) return j;
    j += m;
  }
  return -1;
}

function defuseOutsideCode(text: string): string {
  MENTION.lastIndex = 0;
  return text.replace(MENTION, '$1@\u200d').replace(/</g, '&lt;');
}
