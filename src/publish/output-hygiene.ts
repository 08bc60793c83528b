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
