import { sha256Hex } from '../events/canonical-json';
import type { ReviewNodeBody, Verdict } from '../events/catalogue/review';
import type { FoldReason, InlinePlacement } from './diff-anchors';
import { defuseProse, hasUnsafeCharacters, neutralize } from './output-hygiene';

/**
 * What a published review says, as text. Pure: the same findings, placements and verdict always give
 * the same bytes, so a re-send after a failure carries the same hidden marker as the first attempt.
 */

export const FOOTER = '— review-ledger AI review';
const MARKER_PREFIX = '<!-- review-ledger:';

export const publishMarker = (key: string): string => `${MARKER_PREFIX}publish=${key} -->`;
export const fingerprintMarker = (fingerprint: string): string => `${MARKER_PREFIX}fp=${fingerprint} -->`;

/**
 * The fingerprints whose markers `text` holds, read in one pass: asking `text.includes(marker)` for each
 * of k findings over each of the comments was k² × 64 KiB (400 findings: 0.9 s on the server's thread).
 */
export function markedFingerprints(texts: Iterable<string>): Set<string> {
  const found = new Set<string>();
  const marker = /<!-- review-ledger:fp=([^\s>]{1,128}) -->/g;
  for (const t of texts) for (const m of t.matchAll(marker)) found.add(m[1]);
  return found;
}

/**
 * The identity of one publication: the PR, the head the anchors were verified against, the selected
 * findings (by fingerprint, order-free) and the verdict. The same request at the same head always has
 * the same key, so the marker on GitHub answers "was this already posted?" even after a crash.
 */
export function publishKeyOf(input: { owner: string; repo: string; prNumber: number; headSha: string; fingerprints: readonly string[]; verdict: Verdict }): string {
  const fps = [...new Set(input.fingerprints)].sort();
  return `rl1-${sha256Hex(['publish-v1', `${input.owner.toLowerCase()}/${input.repo.toLowerCase()}#${input.prNumber}`, input.headSha, input.verdict, ...fps].join('\n')).slice(0, 40)}`;
}

export function hasPublishMarker(body: string | null | undefined, key: string): boolean {
  return !!body && body.includes(publishMarker(key));
}

/**
 * A finding's text may quote a marker (or forge one): neutralize it so only what we add is ever found. And
 * control characters, ANSI escapes and bidi overrides become visible `\uXXXX` text (src/publish/output-hygiene.ts).
 */
function defuse(text: string): string {
  return neutralize(text.split(MARKER_PREFIX).join('<!-- review-ledger (quoted):'));
}

/** Agent-written prose (titles, bodies, walkthroughs): `defuse`, and no mention or HTML outside code (output-hygiene.ts `defuseProse`). */
const prose = (text: string): string => defuseProse(defuse(text));

/** A code fence longer than any run of backticks inside `content`, so the content cannot close it. */
export function fenceFor(content: string): string {
  let longest = 0;
  for (const run of content.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function fenced(info: string, content: string): string {
  const fence = fenceFor(content);
  return `${fence}${info}\n${content}${content.endsWith('\n') || content === '' ? '' : '\n'}${fence}`;
}

export interface PublishedFinding {
  nodeId: string;
  fingerprint: string;
  node: ReviewNodeBody;
  /** Other reviewers who filed the same defect (same fingerprint): published once, credited here. */
  alsoFoundBy: Array<{ nodeId: string; principal: string; brief: string }>;
  /** Every node folded into this one (same fingerprint), credited or not. */
  duplicateNodeIds: string[];
}

export interface RenderOptions {
  /** True when the comment is posted on a RIGHT-side range inside one hunk: only then a suggestion applies. */
  suggestionApplies: boolean;
  /** The body section puts the title in its heading. */
  omitTitle?: boolean;
}

const location = (n: ReviewNodeBody): string => {
  const a = n.anchor;
  if (!a) return '';
  const lines = a.startLine === a.endLine ? `L${a.startLine}` : `L${a.startLine}-L${a.endLine}`;
  return `\`${neutralize(a.path)}:${lines}${a.side === 'LEFT' ? ' (base)' : ''}\``;
};

/** One finding as markdown: title, triage, body, fix, suggestion (when it applies), confidence, footer. */
export function renderFinding(f: PublishedFinding, opts: RenderOptions): string {
  const n = f.node;
  const parts: string[] = [];
  if (!opts.omitTitle) parts.push(`**${prose(n.title)}**`);
  parts.push(`${n.kind} · ${n.priority} · ${n.triage.category} · ${n.triage.severity} · effort ${n.triage.effort}`);
  if (n.body.trim() !== '') parts.push(prose(n.body));
  const replacement = n.fix?.replacementLines;
  // A one-click suggestion commits its lines verbatim: lines holding control or bidi characters are shown
  // (escaped) but never offered for one click.
  if (replacement && opts.suggestionApplies && !replacement.some(hasUnsafeCharacters)) {
    parts.push(fenced('suggestion', defuse(replacement.join('\n'))));
  } else if (replacement) {
    // Not one-click here (body or LEFT side), but the exact lines are still the reviewer's fix.
    parts.push(`Proposed replacement for the anchored lines:\n\n${fenced('', defuse(replacement.join('\n')))}`);
  }
  if (n.fix?.unifiedDiff) parts.push(`<details><summary>Proposed fix</summary>\n\n${fenced('diff', defuse(n.fix.unifiedDiff))}\n\n</details>`);
  if (n.fix?.prompt) parts.push(`<details><summary>Fix prompt</summary>\n\n${fenced('text', defuse(n.fix.prompt))}\n\n</details>`);
  if (f.alsoFoundBy.length > 0) parts.push(`Also found by ${f.alsoFoundBy.map((d) => `${prose(d.principal)} (${prose(d.brief)})`).join(', ')}.`);
  parts.push(`Confidence: ${n.confidence.toFixed(2)}`);
  parts.push(FOOTER);
  return parts.join('\n\n');
}

export function renderInlineComment(f: PublishedFinding, placement: InlinePlacement): string {
  const marker = fingerprintMarker(f.fingerprint);
  const full = renderFinding(f, { suggestionApplies: placement.side === 'RIGHT' });
  // A cut suggestion could be applied half-way: a finding too long for GitHub loses its one-click block first.
  return clampComment(full.length + marker.length < GITHUB_BODY_LIMIT ? full : renderFinding(f, { suggestionApplies: false }), marker);
}

const FOLD_REASON_TEXT: Record<FoldReason, string> = {
  no_anchor: 'no line anchor',
  not_in_diff: 'file not in the current diff',
  file_has_no_patch: 'file has no diff GitHub can comment on',
  line_outside_diff: 'lines outside the diff hunks',
  range_spans_hunks: 'range spans two hunks',
  head_moved_since_review: 'the PR head moved since the review',
  github_rejected_anchors: 'GitHub refused the inline anchors',
};

export interface BodyInput {
  key: string;
  verdict: Verdict;
  confidence: number | null;
  walkthrough: string;
  /** The head the review was made at, when the PR has moved on since. */
  movedFrom?: { reviewedHead: string; currentHead: string };
  inlineCount: number;
  folded: Array<{ finding: PublishedFinding; reason: FoldReason }>;
  /** GitHub refused the verdict event: say so (SPEC §14). */
  eventRefusal?: { requested: string; message: string };
}

/** GitHub refuses a review or comment body longer than this ("Body is too long (maximum is 65536 characters)"). */
export const GITHUB_BODY_LIMIT = 65_536;
const MAX_WALKTHROUGH = 20_000;

function foldedItem(finding: PublishedFinding, reason: FoldReason): string {
  const where = location(finding.node);
  return `#### ${where ? `${where} — ` : ''}${prose(finding.node.title).replace(/\s+/g, ' ')}\n_${FOLD_REASON_TEXT[reason]}_\n\n${renderFinding(finding, { suggestionApplies: false, omitTitle: true })}\n${fingerprintMarker(finding.fingerprint)}`;
}

/** One line per finding: what the body falls back to when the full items do not fit GitHub's limit. */
function compactItem(finding: PublishedFinding, reason: FoldReason): string {
  const n = finding.node;
  const where = location(n);
  return `- ${where ? `${where} — ` : ''}**${prose(n.title).replace(/\s+/g, ' ')}** (${n.kind} · ${n.priority} · ${n.triage.category}; ${FOLD_REASON_TEXT[reason]}) ${FOOTER} ${fingerprintMarker(finding.fingerprint)}`;
}

/**
 * The folded findings within `room` characters: in full when they fit, else one line each, else as
 * many lines as fit and an explicit count of the rest — never a silent cut.
 */
function foldedSection(folded: BodyInput['folded'], room: number): string {
  const full = folded.map(({ finding, reason }) => foldedItem(finding, reason)).join('\n\n---\n\n');
  if (full.length <= room) return full;
  const lines = folded.map(({ finding, reason }) => compactItem(finding, reason));
  const compact = `_Shown one line each: the full text does not fit GitHub's ${GITHUB_BODY_LIMIT}-character limit; every finding is in the ledger._\n\n${lines.join('\n')}`;
  if (compact.length <= room) return compact;
  const kept: string[] = [];
  let used = 300;
  for (const line of lines) {
    if (used + line.length + 1 > room) break;
    kept.push(line);
    used += line.length + 1;
  }
  return `_Shown one line each, and only ${kept.length} of ${folded.length}: GitHub limits a review body to ${GITHUB_BODY_LIMIT} characters. The other ${folded.length - kept.length} findings are recorded in the ledger._\n\n${kept.join('\n')}`;
}

/** An inline comment within GitHub's limit: the long parts of a finding are cut with a note, the marker kept. */
function clampComment(text: string, marker: string): string {
  if (text.length + marker.length + 1 <= GITHUB_BODY_LIMIT) return `${text}\n${marker}`;
  const note = `\n\n_(shortened to fit GitHub's ${GITHUB_BODY_LIMIT}-character limit; the full finding is in the ledger)_\n${FOOTER}\n`;
  return `${text.slice(0, GITHUB_BODY_LIMIT - note.length - marker.length - 16)}${note}${marker}`;
}

/** The review body: verdict, walkthrough, "Findings not tied to a line", the hidden publish marker. */
export function renderBody(b: BodyInput): string {
  const marker = publishMarker(b.key);
  const refusal = b.eventRefusal
    ? `> GitHub refused to post this review as ${b.eventRefusal.requested} ("${prose(b.eventRefusal.message)}"), so it is posted as COMMENT. The verdict is still **${b.verdict}**.`
    : null;
  if (b.verdict === 'Ship' && b.inlineCount === 0 && b.folded.length === 0 && !refusal && !b.movedFrom) {
    // A clean Ship is one line.
    return `**Ship** — no open findings. ${FOOTER} ${marker}`;
  }
  const parts: string[] = [];
  parts.push(`## Verdict: ${b.verdict}${b.confidence !== null ? ` (confidence ${b.confidence.toFixed(2)})` : ''}`);
  if (refusal) parts.push(refusal);
  if (b.movedFrom) {
    parts.push(`> This review was made at \`${b.movedFrom.reviewedHead.slice(0, 12)}\`; the PR has moved to \`${b.movedFrom.currentHead.slice(0, 12)}\`, so no finding is pinned to a line.`);
  }
  const walkthrough = b.walkthrough.trim();
  if (walkthrough !== '') parts.push(walkthrough.length > MAX_WALKTHROUGH ? `${prose(walkthrough.slice(0, MAX_WALKTHROUGH))}\n\n_(walkthrough shortened: the full text is in the ledger)_` : prose(walkthrough));
  parts.push(`${b.inlineCount} inline finding${b.inlineCount === 1 ? '' : 's'}, ${b.folded.length} below.`);
  if (b.folded.length > 0) {
    const head = parts.join('\n\n');
    const room = GITHUB_BODY_LIMIT - head.length - marker.length - 200;
    parts.push(`### Findings not tied to a line\n\n${foldedSection(b.folded, room)}`);
  }
  parts.push(marker);
  return parts.join('\n\n');
}
