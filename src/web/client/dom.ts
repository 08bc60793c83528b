/// <reference lib="dom" />
/** A tiny element builder: text is always set as text (never parsed as HTML), so event data cannot inject markup. */

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
    else el.append(typeof c === 'string' || typeof c === 'number' ? String(c) : c);
  }
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
