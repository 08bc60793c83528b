/// <reference lib="dom" />
import type { DiffEntryView, DiffHunkView, readReviewDiff, readReviewFileLines } from '../../readmodels/queries/review-diff';
import type { nodeStatusView } from '../../readmodels/queries/node-status';
import { h, safeHtml } from './dom';

type Highlighter = typeof import('./highlight.js');

/**
 * The code under review (issue 16): per cohort, its hunks in reading order from `review_studio.reviewDiff`,
 * findings inline at their anchored lines, actions where the code is. Rendering is virtualized: every
 * file block is a placeholder of its estimated height until it nears the viewport, and goes back to one
 * when it is far away, so a 300-file PR costs the DOM of the few screens around the reader.
 */

export type NodeRow = ReturnType<typeof nodeStatusView>['nodes'][number];
type DiffPage = Awaited<ReturnType<typeof readReviewDiff>>;
type FileLines = Awaited<ReturnType<typeof readReviewFileLines>>;

export interface CodeContext {
  read(method: string, params: Record<string, unknown>): Promise<unknown>;
  /** Builds the inline card of a finding (actions included, per the caller's role). */
  card(n: NodeRow, duplicates: NodeRow[]): HTMLElement;
  onSelect(nodeId: string): void;
}

interface Row {
  kind: 'ctx' | 'add' | 'del' | 'meta';
  old: number | null;
  new: number | null;
  text: string;
}

interface LoadedEntry {
  cohortKey: string;
  index: number;
  entry: DiffEntryView;
  el: HTMLElement;
  body: HTMLElement;
  materialized: boolean;
  height: number;
  /** The code of each drawn cell still waiting for the highlighter (its `data-t` indexes this). */
  texts: string[];
}

export interface Placement {
  cohortKey: string;
  entry: number;
  side: 'old' | 'new';
  line: number;
}

const ROW_PX = 19;
/** Highlighting waits until the page has not scrolled for this long (see scheduleHighlight). */
const SCROLL_QUIET_MS = 150;
let lastScrollAt = -Infinity;
if (typeof window !== 'undefined') window.addEventListener('scroll', () => (lastScrollAt = performance.now()), { passive: true, capture: true });
/** The first page is small (it is all the first paint waits for); the rest come in larger pages behind it. */
export const FIRST_PAGE_BYTES = 32 * 1024;
const NEXT_PAGE_BYTES = 512 * 1024;
/** An empty gap between hunks, and one holding the "expand" button (fixed in review.css). */
const GAP_PX = 2;
const EXPANDER_PX = 22;
const EXPANDED = new Map<string, FileLines>();

export class CodeView {
  mode: 'unified' | 'split' = 'unified';
  headSha: string | null = null;
  readonly entries = new Map<string, LoadedEntry[]>();
  readonly complete = new Set<string>();
  /** Rank and title of each cohort the diff named (until the cohorts subscription brings the rest). */
  readonly cohortMeta = new Map<string, { rank: number; title: string }>();
  loading = false;
  error: string | null = null;
  firstCodeAt: number | null = null;
  private resolveFirstPaint!: () => void;
  /**
   * Settles once the first code is painted (Element Timing), or 1 s after the first page arrived, or at once
   * when that page has nothing to draw. The rest of the diff — and the page's subscriptions — wait for it,
   * so the first screen never shares the main thread (or the two cores) with what is below it.
   */
  readonly firstPaint = new Promise<void>((resolve) => (this.resolveFirstPaint = resolve));
  placements = new Map<string, Placement>();
  unplaced = new Map<string, Array<{ node: NodeRow; reason: string }>>();
  private nodes: NodeRow[] = [];
  private dupsOf = new Map<string, NodeRow[]>();
  private highlighter: Highlighter | null = null;
  private highlighterAsked = false;
  /** Drawn entries whose cells are highlighted in idle time, nearest first. */
  private readonly toHighlight = new Set<LoadedEntry>();
  private highlightScheduled = false;
  private observer: IntersectionObserver;
  private generation = 0;
  private loadedHead: string | null = null;
  private expectHead: string | null = null;
  /** The first page of the latest computation, asked for before the page knew who signed in (see review.ts). */
  private prefetched: Promise<unknown> | null;
  private firstEntry: LoadedEntry | null = null;

  constructor(
    private readonly ctx: CodeContext,
    private readonly target: { repoId: string; prNumber: number },
    private readonly onLoaded: () => void,
    prefetched: Promise<unknown> | null = null,
  ) {
    this.prefetched = prefetched;
    this.observer = new IntersectionObserver((items) => {
      for (const it of items) {
        const le = (it.target as HTMLElement & { __entry?: LoadedEntry }).__entry;
        if (!le) continue;
        if (it.isIntersecting) this.materialize(le);
        else this.dematerialize(le, it.boundingClientRect.height);
      }
    }, { rootMargin: '1200px 0px' });
  }

  /**
   * highlight.js is a chunk of its own, imported once the first rows are on screen and the browser is
   * idle: nothing of it is on the way to the first paint. Drawn cells are then highlighted in place, in
   * idle time (see highlightSome), never by redrawing an entry.
   */
  private askHighlighter(): void {
    if (this.highlighterAsked) return;
    this.highlighterAsked = true;
    idle(() =>
      void import('./highlight.js').then((m) => {
        this.highlighter = m;
        for (const list of this.entries.values()) for (const le of list) if (le.materialized) this.toHighlight.add(le);
        this.scheduleHighlight();
      }),
    );
  }

  private scheduleHighlight(): void {
    if (this.highlightScheduled || !this.highlighter || this.toHighlight.size === 0) return;
    this.highlightScheduled = true;
    idle((budgetMs) => {
      const quietFor = performance.now() - lastScrollAt;
      if (quietFor < SCROLL_QUIET_MS) {
        // Scrolling: a highlighted cell is a restyle, relayout and repaint of its block in the next frame.
        // Wait until the page has been still for a moment.
        setTimeout(() => {
          this.highlightScheduled = false;
          this.scheduleHighlight();
        }, SCROLL_QUIET_MS - quietFor);
        return;
      }
      this.highlightScheduled = false;
      this.highlightSome(performance.now() + budgetMs);
      this.scheduleHighlight();
    });
  }

  /** Highlights waiting cells of drawn entries until the idle period ends; lines are cached by language and text. */
  private highlightSome(until: number): void {
    const hl = this.highlighter!;
    for (const le of this.toHighlight) {
      if (performance.now() - lastScrollAt < SCROLL_QUIET_MS) return;
      if (!le.materialized) {
        this.toHighlight.delete(le);
        continue;
      }
      const lang = hl.languageOf(le.entry.path, le.entry.language);
      for (const cell of le.body.querySelectorAll<HTMLElement>('code.src[data-t]')) {
        if (performance.now() > until) return;
        const text = le.texts[Number(cell.dataset.t)];
        cell.removeAttribute('data-t');
        if (lang && text !== undefined) {
          cell.innerHTML = highlighted(hl, text, lang);
          cell.classList.add('hl');
        }
      }
      this.toHighlight.delete(le);
    }
  }

  /**
   * Follows the computed head: a new computation reloads the diff from the first page. 'latest' loads
   * whatever is computed now (at sign-in, before the cohorts snapshot names the head).
   */
  follow(headSha: string | null): void {
    if (headSha === this.headSha) return;
    if (headSha !== null && this.headSha === 'latest' && this.loadedHead === headSha) {
      this.headSha = headSha;
      return;
    }
    if (headSha !== null && this.headSha === 'latest' && this.loadedHead === null && this.loading) {
      // The first page is on its way: it will say which head it is; keep it unless it differs.
      this.expectHead = headSha;
      return;
    }
    this.headSha = headSha;
    this.loadedHead = null;
    this.expectHead = null;
    this.generation++;
    for (const list of this.entries.values()) for (const le of list) this.observer.unobserve(le.body);
    this.entries.clear();
    this.complete.clear();
    this.error = null;
    if (headSha) void this.load(this.generation);
  }

  private async load(gen: number): Promise<void> {
    this.loading = true;
    let cursor: string | null = null;
    try {
      do {
        const early = !cursor && this.headSha === 'latest' ? this.prefetched : null;
        this.prefetched = null;
        const page = (await (early ?? this.ctx.read('review_studio.reviewDiff', { ...this.target, ...(cursor ? { cursor, maxBytes: NEXT_PAGE_BYTES } : { maxBytes: FIRST_PAGE_BYTES }) }))) as DiffPage;
        if (gen !== this.generation) return;
        performance.mark('review-page:diff-page');
        if (!page.computed) break;
        if (this.loadedHead === null) {
          setTimeout(() => this.resolveFirstPaint(), 1000);
          if (!page.cohorts.some((c) => c.entries.some((e) => !e.collapsed))) this.resolveFirstPaint();
          this.loadedHead = page.headSha;
          if (this.headSha === 'latest' && this.expectHead && this.expectHead !== page.headSha) {
            // The cohorts snapshot names another head than this page: start over for that head.
            const want = this.expectHead;
            this.loading = false;
            this.follow(want);
            return;
          }
          if (this.expectHead === page.headSha) this.headSha = page.headSha;
        }
        for (const c of page.cohorts) {
          this.cohortMeta.set(c.key, { rank: c.rank, title: c.title });
          const list = this.entries.get(c.key) ?? [];
          this.entries.set(c.key, list);
          c.entries.forEach((entry, i) => list.push(this.makeEntry(c.key, c.from + i, entry)));
        }
        // A cohort is complete when the page after it no longer names it.
        const last = page.cohorts[page.cohorts.length - 1]?.key;
        for (const c of page.cohorts) if (c.key !== last || !page.nextCursor) this.complete.add(c.key);
        cursor = page.nextCursor;
        this.place();
        this.onLoaded();
        // Let the browser paint what it has before the next page is parsed and laid out.
        if (cursor) {
          await this.firstPaint;
          await new Promise<void>((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        }
      } while (cursor);
    } catch (err) {
      if (gen === this.generation) this.error = err instanceof Error ? err.message : String(err);
    } finally {
      if (this.firstCodeAt === null) this.resolveFirstPaint();
      if (gen === this.generation) {
        this.loading = false;
        this.place();
        this.onLoaded();
      }
    }
  }

  private makeEntry(cohortKey: string, index: number, entry: DiffEntryView): LoadedEntry {
    const height = entry.collapsed ? 0 : this.drawnHeight(entry);
    const body = h('div', { class: 'file-body' });
    // Through the CSSOM: the page's CSP (style-src 'self') drops a style attribute, and with it the height.
    body.style.height = `${height}px`;
    const el = h(
      'section',
      { class: `file${entry.collapsed ? ' collapsed' : ''}`, 'data-path': entry.path, 'data-entry': `${cohortKey}:${index}`, 'aria-label': `${entry.path}${entry.symbolId ? ` ${entry.symbolId}` : ''}` },
      h(
        'header',
        { class: 'file-head' },
        h('code', { class: 'path' }, entry.oldPath ? `${entry.oldPath} → ${entry.path}` : entry.path),
        entry.symbolId ? h('span', { class: 'sym' }, `${entry.kind ?? ''} ${entry.symbolId.split('#').pop()}`) : h('span', { class: 'sym muted' }, entry.fragmentId ? entry.kind ?? '' : 'rest of the file'),
        entry.change ? h('span', { class: `tag change-${entry.change}` }, entry.change) : null,
        entry.why ? h('span', { class: 'why muted' }, entry.why) : null,
        entry.truncated ? h('span', { class: 'tag' }, 'cut at the page budget') : null,
      ),
      entry.collapsed ? h('div', { class: 'collapsed-reason muted' }, `collapsed: ${entry.collapsed.reason} (+${entry.collapsed.added} −${entry.collapsed.deleted})`) : body,
    );
    const le: LoadedEntry = { cohortKey, index, entry, el, body, materialized: false, height, texts: [] };
    body.addEventListener('click', (ev) => {
      const btn = (ev.target as HTMLElement).closest<HTMLElement>('button.expand');
      if (btn) this.expand(le, Number(btn.dataset.expand));
    });
    (body as HTMLElement & { __entry?: LoadedEntry }).__entry = le;
    // The body is what is observed: its own height is what a placeholder keeps (see dematerialize).
    if (!entry.collapsed) this.observer.observe(body);
    return le;
  }

  /** The findings to place: canonical nodes of the current round; duplicates fold under them. */
  setNodes(nodes: NodeRow[]): void {
    this.dupsOf.clear();
    for (const n of nodes) if (n.duplicateOf) (this.dupsOf.get(n.duplicateOf) ?? this.dupsOf.set(n.duplicateOf, []).get(n.duplicateOf)!).push(n);
    this.nodes = nodes.filter((n) => !n.duplicateOf);
    this.place();
    for (const list of this.entries.values()) for (const le of list) if (le.materialized) this.draw(le);
  }

  /**
   * Where each finding goes: the first entry (in reading order) whose shown lines hold the anchor's end
   * line on its side (RIGHT = head = new, LEFT = base = old). The rest is listed at its cohort's head
   * with the reason, once that cohort is fully loaded.
   */
  private place(): void {
    this.placements.clear();
    this.unplaced.clear();
    const pathCohort = new Map<string, string>();
    for (const [key, list] of this.entries) for (const le of list) if (!pathCohort.has(le.entry.path)) pathCohort.set(le.entry.path, key);
    const note = (key: string, node: NodeRow, reason: string) => (this.unplaced.get(key) ?? this.unplaced.set(key, []).get(key)!).push({ node, reason });
    for (const n of this.nodes) {
      if (!n.anchor) {
        note('', n, 'no anchor: filed without a file and line');
        continue;
      }
      const a = n.anchor;
      const side = a.side === 'LEFT' ? 'old' : 'new';
      const key = pathCohort.get(a.path);
      if (!key) {
        if (!this.loading) note('', n, `${a.path} is in no cohort of this diff`);
        continue;
      }
      let placed: Placement | null = null;
      let collapsed: string | null = null;
      for (const le of this.entries.get(key)!) {
        if (le.entry.path !== a.path) continue;
        if (le.entry.collapsed) collapsed = le.entry.collapsed.reason;
        const line = lastShownLine(rowsOf(le), side, a.startLine, a.endLine);
        if (line !== null) {
          placed = { cohortKey: key, entry: le.index, side, line };
          break;
        }
      }
      if (placed) this.placements.set(n.nodeId, placed);
      else if (this.complete.has(key)) note(key, n, collapsed ? `${a.path} is collapsed (${collapsed})` : `${a.path}:${a.startLine}${a.endLine !== a.startLine ? `-${a.endLine}` : ''} (${a.side ?? 'RIGHT'}) is outside the diff's hunks`);
    }
  }

  /** Findings in reading order: cohort by cohort (as listed), unplaced ones at the cohort head first. */
  order(cohortKeys: string[]): string[] {
    const out: string[] = (this.unplaced.get('') ?? []).map((u) => u.node.nodeId);
    for (const key of cohortKeys) {
      out.push(...(this.unplaced.get(key) ?? []).map((u) => u.node.nodeId));
      const here = [...this.placements.entries()].filter(([, p]) => p.cohortKey === key);
      here.sort(([, a], [, b]) => a.entry - b.entry || a.line - b.line);
      out.push(...here.map(([id]) => id));
    }
    return out;
  }

  /** Scrolls a finding into view (drawing its file first); false when it is not in the code view. */
  reveal(nodeId: string): HTMLElement | null {
    const p = this.placements.get(nodeId);
    if (p) {
      const le = this.entries.get(p.cohortKey)?.find((x) => x.index === p.entry);
      if (le) this.materialize(le);
    }
    const sel = CSS.escape(nodeId);
    const el = document.querySelector<HTMLElement>(`#cohorts [data-inline-node="${sel}"], #unplaced-global [data-inline-node="${sel}"]`);
    el?.scrollIntoView({ block: 'center' });
    return el;
  }

  setMode(mode: 'unified' | 'split'): void {
    this.mode = mode;
    for (const list of this.entries.values())
      for (const le of list) {
        if (le.materialized) this.draw(le);
        else if (!le.entry.collapsed) {
          le.height = this.drawnHeight(le.entry);
          le.body.style.height = `${le.height}px`;
        }
      }
  }

  private materialize(le: LoadedEntry): void {
    if (le.materialized) return;
    le.materialized = true;
    le.el.classList.add('live');
    this.draw(le);
    if (this.firstCodeAt === null) {
      this.firstCodeAt = performance.now();
      performance.mark('review-page:first-code');
      this.firstEntry = le;
      this.markFirstCode(le);
      whenPainted('first-code', () => this.resolveFirstPaint());
    }
    this.askHighlighter();
  }

  private dematerialize(le: LoadedEntry, bodyHeight: number): void {
    if (!le.materialized) return;
    // Keep the measured height (from the observer: no forced layout) so the page does not jump when the rows go.
    le.height = Math.max(le.height, bodyHeight);
    le.materialized = false;
    le.el.classList.remove('live');
    le.texts = [];
    le.body.replaceChildren();
    le.body.style.height = `${le.height}px`;
  }

  /**
   * Draws an entry's rows as one HTML string (escaped, output hygiene applied: no markup of the code's
   * own, controls shown as marked escapes), then puts the finding cards under their rows. Cells whose
   * highlighted line is cached are drawn highlighted; the others plain, queued for the idle highlighter.
   */
  /** Element Timing reports when this line is painted (the browser suite's first meaningful paint). */
  private markFirstCode(le: LoadedEntry): void {
    // On the row: Element Timing reports text for its nearest block ancestor, and a unified row's code cell is inline.
    if (le === this.firstEntry) le.body.querySelector('.row code.src')?.closest('.row')?.setAttribute('elementtiming', 'first-code');
  }

  private draw(le: LoadedEntry): void {
    if (le.entry.collapsed) return;
    const hl = this.highlighter;
    const lang = hl?.languageOf(le.entry.path, le.entry.language) ?? null;
    const texts: string[] = [];
    const code = (text: string, kind?: Row['kind']): string => {
      const s = kind ? ` data-s="${SIGN[kind]}"` : '';
      const cached = hl && lang ? HIGHLIGHTED.get(`${lang}\0${text}`) : undefined;
      if (cached !== undefined) return `<code class="src hl"${s}>${cached}</code>`;
      texts.push(text);
      return `<code class="src"${s} data-t="${texts.length - 1}">${plainHtml(text)}</code>`;
    };
    const ln = (n: number | null) => `<span class="ln" aria-hidden="true">${n ?? ''}</span>`;
    let html = '';
    le.entry.hunks.forEach((hk, i) => {
      html += this.expanderHtml(le, i);
      html += `<div class="row meta"><span class="hunk-head">${plainHtml(hk.header)}</span></div>`;
      const hunkRows = rowsOfHunk(hk);
      if (this.mode === 'unified') {
        for (const r of hunkRows) html += unifiedRowHtml(r.kind, r.old, r.new, code(r.text, r.kind));
      } else {
        for (const [l, r] of pairRows(hunkRows)) {
          const half = (x: Row | null) => `<span class="half ${x ? x.kind : 'empty'}">${x ? code(x.text) : ''}</span>`;
          html += `<div class="row split" data-old="${l?.old ?? ''}" data-new="${r?.new ?? ''}">${ln(l?.old ?? null)}${half(l)}${ln(r?.new ?? null)}${half(r)}</div>`;
        }
      }
      // Expanded context after the last hunk is drawn by the next expander.
      if (i === le.entry.hunks.length - 1) html += this.expanderHtml(le, i + 1);
    });
    le.texts = texts;
    le.body.style.height = '';
    le.body.innerHTML = html;
    // Redrawn (findings arrived) before it was painted: the new first line is the one to time.
    this.markFirstCode(le);
    // The findings, each right under the row of its line (head lines first, then base lines).
    const at = new Map<Element, NodeRow[]>();
    for (const side of ['new', 'old'] as const) {
      for (const n of this.nodes) {
        const p = this.placements.get(n.nodeId);
        if (!p || p.cohortKey !== le.cohortKey || p.entry !== le.index || p.side !== side) continue;
        const row = le.body.querySelector(`:scope > .row[data-${side}="${p.line}"]`);
        if (row) (at.get(row) ?? at.set(row, []).get(row)!).push(n);
      }
    }
    for (const [row, ns] of at) {
      row.after(...ns.map((n) => h('div', { class: 'inline-finding', 'data-inline-node': n.nodeId, tabindex: -1, onclick: (ev: Event) => (ev.target as HTMLElement).closest('button, input, form') || this.ctx.onSelect(n.nodeId) }, this.ctx.card(n, this.dupsOf.get(n.nodeId) ?? []))));
    }
    if (texts.length && hl) {
      this.toHighlight.add(le);
      this.scheduleHighlight();
    }
  }

  /**
   * The height of an entry's drawn rows, exactly (fixed-height rows and gaps, review.css), without its
   * findings' cards: a placeholder of this height is replaced by its rows without moving anything below
   * it — a block drawn or dropped during a scroll then costs the frame its own rows, not a new layout,
   * pre-paint and scroll anchoring of every block after it.
   */
  private drawnHeight(entry: DiffEntryView): number {
    let px = 0;
    entry.hunks.forEach((hk, i) => {
      const rows = this.mode === 'unified' ? hk.lines.length : pairRows(rowsOfHunk(hk)).length;
      px += this.gapHeight(entry, i) + (rows + 1) * ROW_PX;
      if (i === entry.hunks.length - 1) px += this.gapHeight(entry, i + 1);
    });
    return Math.max(ROW_PX, px);
  }

  private gapHeight(entry: DiffEntryView, i: number): number {
    const { from, to, next, key } = this.gapOf({ entry }, i);
    const got = EXPANDED.get(key);
    if (got) return got.lines.length * ROW_PX;
    return to < from || (!next && entry.status === 'deleted') ? GAP_PX : EXPANDER_PX;
  }

  /** Between hunks (i-1) and i of an entry: the unchanged head lines, or the button that fetches them. */
  private gapOf(le: Pick<LoadedEntry, 'entry'>, i: number) {
    const hunks = le.entry.hunks;
    const prev = hunks[i - 1];
    const next = hunks[i];
    const from = prev ? prev.newStart + prev.newCount : 1;
    const to = next ? next.newStart - 1 : from + 19;
    const offset = next ? next.oldStart - next.newStart : prev ? prev.oldStart + prev.oldCount - (prev.newStart + prev.newCount) : 0;
    return { from, to, offset, next, key: `${this.headSha}:${le.entry.path}:${from}` };
  }

  private expanderHtml(le: LoadedEntry, i: number): string {
    const { from, to, offset, next, key } = this.gapOf(le, i);
    const got = EXPANDED.get(key);
    if (got) {
      const rows = got.lines.map((text, k) => {
        const o = got.startLine + k + offset;
        const n = got.startLine + k;
        return unifiedRowHtml('ctx', o, n, `<code class="src" data-s=" ">${plainHtml(text)}</code>`);
      });
      return `<div class="expanded">${rows.join('')}</div>`;
    }
    if (to < from || (!next && le.entry.status === 'deleted')) return '<div class="gap"></div>';
    const label = next ? `↕ ${to - from + 1} unchanged line(s)` : '↓ more lines';
    return `<div class="gap more"><button class="link expand" data-expand="${i}" title="${plainHtml(`expand unchanged lines ${from}–${to} of ${le.entry.path}`)}">${label}</button></div>`;
  }

  /** "Expand": unchanged head lines from `reviewFileLines`, drawn as context. */
  private expand(le: LoadedEntry, i: number): void {
    const { from, to, key } = this.gapOf(le, i);
    void this.ctx.read('review_studio.reviewFileLines', { ...this.target, path: le.entry.path, side: 'head', startLine: from, endLine: Math.min(to, from + 499) }).then((r) => {
      EXPANDED.set(key, r as FileLines);
      if (le.materialized) this.draw(le);
    });
  }
}

/**
 * A unified row is two elements: the row and its code cell. The line numbers and the sign are generated
 * content (the row's `data-g`, the cell's `data-s`: review.css), so a drawn block costs the browser a third of the
 * boxes it did with a span per column — what a block coming into view costs to style, lay out, pre-paint
 * and paint during a scroll.
 */
function unifiedRowHtml(kind: Row['kind'], old: number | null, nw: number | null, codeHtml: string): string {
  const g = `${old ?? ''}`.padStart(5) + ' ' + `${nw ?? ''}`.padStart(5);
  return `<div class="row ${kind}" data-old="${old ?? ''}" data-new="${nw ?? ''}" data-g="${g}">${codeHtml}</div>`;
}
const SIGN: Record<Row['kind'], string> = { add: '+', del: '−', ctx: ' ', meta: ' ' };

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
/** Text as HTML: markup escaped, then the output hygiene's marked escapes for controls and bidi characters. */
function plainHtml(text: string): string {
  return safeHtml(text.replace(/[&<>"]/g, (c) => HTML_ESCAPES[c]));
}

/** Highlighted lines by language and text: a line drawn again (scrolled back to, another mode) costs nothing. */
const HIGHLIGHTED = new Map<string, string>();
const MAX_HIGHLIGHTED = 50_000;
/**
 * Longer lines stay plain. highlight.js is quadratic on a long run of word characters in most grammars
 * (a 16,000-character identifier took 1.2–2.6 s in Java, TypeScript, JavaScript; 100 KB, minutes), and a
 * line cannot be interrupted: a PR's author could hold the reviewer's tab. At 1,000 characters the worst
 * line measured takes ~8 ms, under one idle slice.
 */
export const MAX_HIGHLIGHT_CHARS = 1_000;
function highlighted(hl: Highlighter, text: string, lang: string): string {
  if (text.length > MAX_HIGHLIGHT_CHARS) return plainHtml(text);
  const key = `${lang}\0${text}`;
  let html = HIGHLIGHTED.get(key);
  if (html === undefined) {
    html = safeHtml(hl.highlightLine(text, lang));
    if (HIGHLIGHTED.size >= MAX_HIGHLIGHTED) HIGHLIGHTED.clear();
    HIGHLIGHTED.set(key, html);
  }
  return html;
}

/** `fn` once an element with this `elementtiming` identifier was painted (or two frames on, without Element Timing). */
function whenPainted(identifier: string, fn: () => void): void {
  if (!PerformanceObserver.supportedEntryTypes?.includes('element')) {
    requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(fn, 0)));
    return;
  }
  const obs = new PerformanceObserver((list) => {
    if (!list.getEntries().some((e) => (e as PerformanceEntry & { identifier?: string }).identifier === identifier)) return;
    obs.disconnect();
    fn();
  });
  obs.observe({ type: 'element', buffered: true });
}

/** `fn` when the browser is idle (or after 500 ms at the latest), with the milliseconds it may take. */
function idle(fn: (budgetMs: number) => void): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback((d) => fn(d.didTimeout ? 4 : Math.max(1, d.timeRemaining())), { timeout: 500 });
  else setTimeout(() => fn(4), 16);
}

/** The rows of a hunk with their base/head line numbers. */
export function rowsOfHunk(hk: DiffHunkView): Row[] {
  let o = hk.oldStart;
  let n = hk.newStart;
  const rows: Row[] = [];
  for (const line of hk.lines) {
    const c = line[0];
    const text = line.slice(1);
    if (c === '+') rows.push({ kind: 'add', old: null, new: n++, text });
    else if (c === '-') rows.push({ kind: 'del', old: o++, new: null, text });
    else if (c === '\\') rows.push({ kind: 'meta', old: null, new: null, text: line });
    else rows.push({ kind: 'ctx', old: o++, new: n++, text });
  }
  return rows;
}

function rowsOf(le: LoadedEntry): Row[] {
  return le.entry.hunks.flatMap(rowsOfHunk);
}

function lastShownLine(rows: Row[], side: 'old' | 'new', start: number, end: number): number | null {
  let best: number | null = null;
  for (const r of rows) {
    const l = r[side];
    if (l !== null && l >= start && l <= end && (best === null || l > best)) best = l;
  }
  return best;
}

/** Split view: each run of deletions beside the additions that replace it. */
function pairRows(rows: Row[]): Array<[Row | null, Row | null]> {
  const out: Array<[Row | null, Row | null]> = [];
  for (let i = 0; i < rows.length; ) {
    const r = rows[i];
    if (r.kind === 'ctx' || r.kind === 'meta') {
      out.push([r, r]);
      i++;
      continue;
    }
    const dels: Row[] = [];
    const adds: Row[] = [];
    while (i < rows.length && rows[i].kind === 'del') dels.push(rows[i++]);
    while (i < rows.length && rows[i].kind === 'add') adds.push(rows[i++]);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) out.push([dels[k] ?? null, adds[k] ?? null]);
  }
  return out;
}
