import { sha256Hex } from '../events/canonical-json';
import type { NodeKind } from '../events/catalogue/review';

export interface FingerprintInput {
  path?: string;
  /** Stable id of the enclosing symbol, when known: preferred over the anchored text. */
  symbolId?: string;
  /** The anchored lines as they read at the node's head (used only when no symbol id is known). */
  anchoredText?: string;
  kind: NodeKind;
  category: string;
  title: string;
}

/**
 * The identity of a finding across rounds and rebases (SPEC §5): a hash of the normalized path, the
 * enclosing symbol id (else the whitespace-free text of the anchored lines), kind, category and the
 * normalized title. Line numbers never enter it, so code moving down 40 lines keeps the fingerprint;
 * whitespace never enters it, so a reformat keeps it too.
 */
export function fingerprintOf(input: FingerprintInput): string {
  const locus = input.symbolId ? `symbol:${input.symbolId}` : input.anchoredText !== undefined ? `text:${normalizeCode(input.anchoredText)}` : 'none';
  return sha256Hex(['fp1', input.path ?? '', locus, input.kind, input.category.toLowerCase(), normalizeTitle(input.title)].join('\u0000'));
}

/** Code with every whitespace run removed: indentation, wrapping and trailing spaces do not change meaning here. */
export function normalizeCode(text: string): string {
  return text.replace(/\s+/g, '');
}

/** Lowercased words: punctuation, case and spacing differences between two reviewers' titles are noise. */
export function normalizeTitle(title: string): string {
  return title
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Lines startLine..endLine (1-based, inclusive) of a file's text; null when the range is outside the file. */
export function anchoredLines(fileText: string, startLine: number, endLine: number): string | null {
  return linesInRange(fileText.split('\n'), startLine, endLine);
}

/** anchoredLines of a file already split into lines. */
export function linesInRange(lines: readonly string[], startLine: number, endLine: number): string | null {
  if (startLine > lines.length) return null;
  return lines.slice(startLine - 1, Math.min(endLine, lines.length)).join('\n');
}
