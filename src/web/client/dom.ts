/// <reference lib="dom" />
import { hasUnsafeCharacters, neutralize } from '../../publish/output-hygiene';

/**
 * A tiny element builder: text is always set as text (never parsed as HTML), so event data cannot inject
 * markup; and every string passes through the server's own output hygiene, so bidi overrides ("Trojan
 * Source"), ANSI escapes and other controls in user text or in code show as a visible `\uXXXX` escape.
 */

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | ((ev: Event) => void)>;

export function h(tag: string, attrs: Attrs | null, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, '').toLowerCase(), v as EventListener);
    else if (k === 'class') el.className = String(v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el: HTMLElement, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(typeof c === 'string' ? safeText(c) : typeof c === 'number' ? String(c) : c);
  }
}

const ESCAPE = /\\u([0-9a-f]{4})/g;
const isUnsafe = (code: string) => hasUnsafeCharacters(String.fromCharCode(parseInt(code, 16)));
const escapeTitle = (code: string) => `U+${code.toUpperCase()}: a control character, shown escaped`;

/** `text` as nodes: unchanged when safe; otherwise each unsafe character as a marked `\uXXXX` span. */
export function safeText(text: string): Node {
  if (!hasUnsafeCharacters(text)) return document.createTextNode(text);
  const frag = document.createDocumentFragment();
  const shown = neutralize(text);
  let last = 0;
  for (const m of shown.matchAll(ESCAPE)) {
    if (!isUnsafe(m[1])) continue;
    if (m.index! > last) frag.append(shown.slice(last, m.index));
    frag.append(h('span', { class: 'esc', title: escapeTitle(m[1]) }, m[0]));
    last = m.index! + m[0].length;
  }
  if (last < shown.length) frag.append(shown.slice(last));
  return frag;
}

/** The same for HTML produced by the highlighter (which escapes markup but passes controls through). */
export function safeHtml(html: string): string {
  if (!hasUnsafeCharacters(html)) return html;
  return neutralize(html).replace(ESCAPE, (all, code: string) => (isUnsafe(code) ? `<span class="esc" title="${escapeTitle(code)}">${all}</span>` : all));
}

/** Replaces the content of the element with this id (creating nothing if it is absent). */
export function fill(id: string, ...children: Child[]): void {
  const el = document.getElementById(id);
  if (!el) return;
  el.replaceChildren();
  append(el, children);
}

/** Markdown summaries, minimally: paragraphs, `code`, **bold**, list items — rendered as text nodes, never HTML. */
export function markdown(text: string): HTMLElement {
  const root = h('div', { class: 'markdown' });
  for (const block of text.split(/\n{2,}/)) {
    const lines = block.split('\n');
    if (lines.every((l) => /^\s*[-*] /.test(l))) {
      root.append(h('ul', null, lines.map((l) => h('li', null, inline(l.replace(/^\s*[-*] /, ''))))));
    } else if (/^#{1,4} /.test(block)) {
      root.append(h('h4', null, inline(block.replace(/^#{1,4} /, ''))));
    } else root.append(h('p', null, inline(block)));
  }
  return root;
}

function inline(text: string): Child[] {
  const out: Child[] = [];
  const re = /(`[^`]+`|\*\*[^*]+\*\*)/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const tok = m[0];
    out.push(tok.startsWith('`') ? h('code', null, tok.slice(1, -1)) : h('strong', null, tok.slice(2, -2)));
    last = m.index + tok.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Which collapsible sections the reader opened: a re-render from a subscription must not close them. */
const openSections = new Set<string>();

export function details(key: string, attrs: Attrs | null, summary: Child, ...children: Child[]): HTMLElement {
  const el = h('details', { ...(attrs ?? {}), 'data-key': key, open: openSections.has(key) }, h('summary', null, summary), ...children);
  el.addEventListener('toggle', () => ((el as HTMLDetailsElement).open ? openSections.add(key) : openSections.delete(key)));
  return el;
}

/** A collapsible section whose content is built only when it is first opened (300 cohorts' lists cost nothing closed). */
export function lazyDetails(key: string, attrs: Attrs | null, summary: Child, build: () => Child[]): HTMLElement {
  const el = h('details', { ...(attrs ?? {}), 'data-key': key }, h('summary', null, summary)) as HTMLDetailsElement;
  let built = false;
  const fillIn = () => {
    if (built || !el.open) return;
    built = true;
    append(el, build());
  };
  el.addEventListener('toggle', () => {
    if (el.open) openSections.add(key);
    else openSections.delete(key);
    fillIn();
  });
  if (openSections.has(key)) {
    el.open = true;
    fillIn();
  }
  return el;
}
