const isLineTerminator = (c: string): boolean => c === '\n' || c === '\r' || c === '\u2028' || c === '\u2029';

/**
 * Where the string literal opened by the quote at `open` ends: the index of its closing quote, or, when it
 * does not close, the index its scan stopped at (`closed` false). A backslash escapes the next character
 * but not a line break (the `\\.` of a regex); `spanLines` false also stops at a line break. The scans
 * of the same quote escaped inside it stop at the same place — which is what lets callers skip them.
 */
export function scanString(text: string, open: number, spanLines: boolean): { closed: boolean; end: number } {
  const q = text[open];
  let j = open + 1;
  while (j < text.length && text[j] !== q && (spanLines || text[j] !== '\n')) {
    if (text[j] !== '\\') j++;
    else if (j + 1 < text.length && !isLineTerminator(text[j + 1])) j += 2;
    else break;
  }
  return { closed: text[j] === q, end: j };
}

/**
 * `text` without its `/* … *\/` and `// …` comments, string literals kept whole (a `//` inside a string is
 * not a comment): what the regex /\/\*[\s\S]*?\*\/|("(?:\\.|[^"\\])*")|\/\/[^\n]*\/g → (string or '')
 * gives — with `quotes` the string delimiters, and `stringsSpanLines` false for strings that end at a
 * line break (`[^"\\\n]`) — in one pass. That regex rescanned to the end from every `/*` without a `*\/`
 * and from every quote never closed (quadratic in a build script or tsconfig of the PR). Here a block
 * comment without an end rules out every later one, and a quote that does not close rules out the same
 * quote up to where its scan stopped (those are escaped quotes, whose scans stop there too).
 */
export function stripComments(text: string, quotes: string, stringsSpanLines: boolean): string {
  let out = '';
  let copied = 0;
  let blockCommentsClose = true;
  const failsBefore = new Map<string, number>();
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '*' && blockCommentsClose) {
      const end = text.indexOf('*/', i + 2);
      if (end >= 0) {
        out += text.slice(copied, i);
        i = copied = end + 2;
        continue;
      }
      blockCommentsClose = false;
    }
    if (quotes.includes(c) && i >= (failsBefore.get(c) ?? -1)) {
      const { closed, end } = scanString(text, i, stringsSpanLines);
      if (closed) {
        i = end + 1; // a string, kept
        continue;
      }
      failsBefore.set(c, end);
    }
    if (c === '/' && text[i + 1] === '/') {
      const nl = text.indexOf('\n', i + 2);
      out += text.slice(copied, i);
      i = copied = nl < 0 ? text.length : nl;
      continue;
    }
    i++;
  }
  return out + text.slice(copied);
}
