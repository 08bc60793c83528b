import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { newUuidV7 } from '../../src/events/ids';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { GitFixture } from '../support/git-fixture';
import { ARTIFACTS, axeSeriousViolations, buildWebBundle, launchChromium, rpcClient } from './support';

const RLO = '\u202e';
/** A line highlight.js would take seconds over (quadratic on a long identifier): shown plain. */
const LONG_LINE = `export const ${'a'.repeat(30_000)} = 1;`;
const ESC = '\u001b';

/**
 * The code under review on the Review page (issue 16), in Debian chromium against a real server and a
 * real git repository: hunks per cohort in reading order, findings at their lines on both sides, actions
 * inline, keyboard navigation, viewers without actions, hostile characters shown escaped.
 */
describe('Review page: the code, findings inline (browser)', () => {
  let server: RunningServer;
  let dataDir: string;
  let repo: GitFixture;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let owner: string;
  let bob: string;
  let carol: string;
  let viewer: string;
  let rev1: string;
  let rev2: string;
  const ws = 'default';
  const target = { repoId: 'shop', prNumber: 7 };
  const ids: Record<string, string> = {};
  let cohortKey = '';

  const { rpc, command } = rpcClient(() => server.url, ws, target);
  const tokenFor = async (principal: string, role: string) => {
    await rpc(owner, 'addMember', { idempotencyKey: newUuidV7(), principal, role });
    return (await rpc(owner, 'issueToken', { idempotencyKey: newUuidV7(), principal, role })).result.token as string;
  };
  const fileNode = async (token: string, brief: string, node: Record<string, unknown>) =>
    (await command(token, 'addReviewNode', { node: { triage: { category: 'correctness', severity: 'medium', effort: 'small' }, confidence: 0.8, body: 'details', brief, ...node } })).result.nodeId as string;
  const openPage = async (token: string): Promise<Page> => {
    const ctx = await browser.newContext({ viewport: { width: 1360, height: 1000 } });
    contexts.push(ctx);
    const page = await ctx.newPage();
    page.on('pageerror', (err) => console.error('page error:', err));
    await page.goto(`${server.url}/workspaces/${ws}/repos/${target.repoId}/prs/${target.prNumber}#token=${encodeURIComponent(token)}`);
    await page.waitForSelector('section.file .row.add');
    return page;
  };
  const inline = (id: string) => `#cohorts .inline-finding[data-inline-node="${id}"]`;
  /** The diff row just above a finding's card (cards follow the row they annotate). */
  const rowAbove = (page: Page, id: string) =>
    page.$eval(inline(id), (el) => {
      let r = el.previousElementSibling;
      while (r && !r.classList.contains('row')) r = r.previousElementSibling;
      return { old: r?.getAttribute('data-old'), new: r?.getAttribute('data-new'), cls: r?.className, path: el.closest('section.file')?.getAttribute('data-path') };
    });

  beforeAll(async () => {
    buildWebBundle();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-e2e-code-'));
    repo = new GitFixture('rl-e2e-code-', path.join(dataDir, 'repos', 'default'));
    repo.git('remote', 'add', 'origin', 'git@github.com:acme/shop.git');
    repo.write('src/price.ts', 'export function price(qty: number, unit: number): number {\n  return qty * unit;\n}\n');
    repo.write('src/cart.ts', ["import { price } from './price';", '', 'export function total(lines: Array<[number, number]>): number {', '  let sum = 0;', '  for (const [q, u] of lines) sum += price(q, u);', `  console.log('${ESC}[31mtotal${ESC}[0m', sum);`, '  return sum;', '}', ''].join('\n'));
    const base = repo.commit('base');
    repo.git('checkout', '-q', '-b', 'pr');
    repo.write('src/price.ts', `export function price(qty: number, unit: number): number {\n  // rounded to cents ${RLO}stnec\n  return Math.round(qty * unit * 100) / 100;\n}\n`);
    repo.write('src/cart.ts', ["import { price } from './price';", '', 'export function total(lines: Array<[number, number]>): number {', '  let sum = 0;', '  for (const [q, u] of lines) sum += price(q, u) * 2;', '  return sum;', '}', LONG_LINE, ''].join('\n'));
    const head = repo.commit('pr');
    server = await startServer({ dataDir, port: 0 });
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    [bob, carol, viewer, rev1, rev2] = await Promise.all([tokenFor('user:bob', 'member'), tokenFor('user:carol', 'member'), tokenFor('user:vera', 'viewer'), tokenFor('agent:rev1', 'member'), tokenFor('agent:rev2', 'member')]);
    await rpc(owner, 'registerRepo', { idempotencyKey: newUuidV7(), repoId: target.repoId, path: repo.dir });
    await command(rev1, 'requestReview', { baseSha: base, headSha: head });
    const computed = (await command(rev1, 'computeReview', {})).result;
    cohortKey = computed.cohorts[0].key;
    // RIGHT: the new return line of price.ts (head line 3); LEFT: the deleted console.log of cart.ts (base line 6).
    ids.right = await fileNode(rev1, 'engineer', { kind: 'bug', priority: 'P0', title: 'rounding loses half-cents', anchor: { path: 'src/price.ts', startLine: 3, endLine: 3, side: 'RIGHT' } });
    ids.dup = await fileNode(rev2, 'qa', { kind: 'bug', priority: 'P0', title: 'rounding loses half-cents', anchor: { path: 'src/price.ts', startLine: 3, endLine: 3, side: 'RIGHT' }, confidence: 0.7 });
    ids.left = await fileNode(rev2, 'qa', { kind: 'question', priority: 'P2', title: `why drop the log? ${ESC}[2J${RLO}evil`, anchor: { path: 'src/cart.ts', startLine: 6, endLine: 6, side: 'LEFT' } });
    ids.outside = await fileNode(rev1, 'engineer', { kind: 'suggestion', priority: 'P3', title: 'import order', anchor: { path: 'src/cart.ts', startLine: 1, endLine: 1 } });
    browser = await launchChromium();
  });

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    repo?.cleanup();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows each cohort\'s hunks in reading order (callee price before caller total), highlighted by highlight.js', async () => {
    const page = await openPage(bob);
    const files = await page.$$eval('#cohorts section.file', (els) => els.map((e) => e.getAttribute('data-path')));
    expect(files.indexOf('src/price.ts')).toBeGreaterThanOrEqual(0);
    expect(files.indexOf('src/price.ts')).toBeLessThan(files.indexOf('src/cart.ts'));
    expect(await page.$$eval('section.file[data-path="src/price.ts"] .row.add code.src', (els) => els.map((e) => e.textContent))).toContain('  return Math.round(qty * unit * 100) / 100;');
    // The highlighter is a lazily imported chunk: the rows are redrawn with its classes once it arrives.
    await page.waitForSelector('section.file .row code.src .hljs-keyword');
    // A line over 1,000 characters stays plain (highlight.js would hold the tab for seconds), whole.
    const long = await page.waitForFunction(
      (text) => {
        const cell = [...document.querySelectorAll<HTMLElement>('section.file[data-path="src/cart.ts"] .row.add code.src')].find((c) => c.textContent === text);
        return cell && !cell.hasAttribute('data-t') ? { spans: cell.querySelectorAll('[class^="hljs-"]').length } : null;
      },
      LONG_LINE,
    );
    expect(await long.jsonValue()).toEqual({ spans: 0 });
  });

  it('places findings at their anchored lines on both sides, folds duplicates, lists the unplaceable at the cohort head', async () => {
    const page = await openPage(bob);
    await page.waitForSelector(inline(ids.right));
    expect(await rowAbove(page, ids.right)).toMatchObject({ new: '3', path: 'src/price.ts', cls: 'row add' });
    expect(await rowAbove(page, ids.left)).toMatchObject({ old: '6', new: '', path: 'src/cart.ts', cls: 'row del' });
    expect(await page.$(inline(ids.dup))).toBeNull();
    expect(await page.textContent(`${inline(ids.right)} .dups summary`)).toContain('1 duplicate(s) folded');
    expect(await page.textContent(`${inline(ids.right)} .node-head`)).toMatch(/P0.*0 confirmation\(s\).*open/);
    const unplaced = `article.cohort .unplaced [data-inline-node="${ids.outside}"]`;
    await page.waitForSelector(unplaced);
    expect(await page.textContent(`${unplaced} .unplaced-reason`)).toBe("src/cart.ts:1 (RIGHT) is outside the diff's hunks");
    // Split view keeps each finding under its line.
    await page.click('#mode-split');
    await page.waitForSelector('.row.split');
    expect(await rowAbove(page, ids.right)).toMatchObject({ new: '3', path: 'src/price.ts' });
    expect(await rowAbove(page, ids.left)).toMatchObject({ old: '6', path: 'src/cart.ts' });
    await page.click('#mode-unified');
    // Sidebar → inline: clicking a finding in the sidebar selects and scrolls to its card, and back.
    await page.click(`#nodes li.node[data-node-id="${ids.left}"] .node-title`);
    await page.waitForSelector(`${inline(ids.left)}.selected`);
    await page.click(`${inline(ids.right)} .node-title`);
    await page.waitForSelector(`#nodes li.node.selected[data-node-id="${ids.right}"]`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'review-page-code.png'), fullPage: false });
  });

  it('shows bidi overrides and ANSI escapes in code and in finding text visibly escaped, never raw', async () => {
    const page = await openPage(bob);
    await page.waitForSelector(inline(ids.left));
    const codeRow = await page.$eval('section.file[data-path="src/price.ts"] .row.add[data-new="2"] code.src', (e) => ({ text: e.textContent, esc: e.querySelector('.esc')?.textContent }));
    expect(codeRow.esc).toBe('\\u202e');
    expect(codeRow.text).not.toContain(RLO);
    const title = await page.$eval(`${inline(ids.left)} .node-title`, (e) => ({ text: e.textContent, esc: [...e.querySelectorAll('.esc')].map((x) => x.textContent) }));
    expect(title.esc).toEqual(['\\u001b', '\\u202e']);
    expect(title.text).toBe('why drop the log? \\u001b[2J\\u202eevil');
    const sidebar = await page.textContent(`#nodes li.node[data-node-id="${ids.left}"] .node-title`);
    expect(sidebar).toBe('why drop the log? \\u001b[2J\\u202eevil');
    const body = await page.evaluate(() => document.body.innerText);
    expect(body).not.toContain(RLO);
    expect(body).not.toContain(ESC);
  });

  it('confirm from the inline view flips the finding to consensus-ready live in every page; closing the blocking finding inline flips the verdict bar Block → Hold', async () => {
    const page = await openPage(bob);
    const other = await openPage(carol);
    await page.waitForSelector(`${inline(ids.right)} button.confirm`);
    await page.waitForSelector('#verdict-bar[data-verdict]:not([data-verdict="none"])');
    const before = await page.getAttribute('#verdict-bar', 'data-verdict');
    // A P0 at confidence ≥ 0.7 blocks (rules v1); a confirmation does not change that, closing it does.
    expect(before).toBe('Block');
    await page.click(`${inline(ids.right)} button.confirm`);
    await other.waitForSelector(`${inline(ids.right)} .finding-card[data-status="consensus-ready"]`);
    await other.waitForSelector(`#nodes li.node[data-node-id="${ids.right}"][data-status="consensus-ready"]`);
    expect(await other.textContent(`${inline(ids.right)} .confirmations`)).toBe('1 confirmation(s)');
    // Bob confirmed: the confirm button is gone from his own card.
    await page.waitForSelector(`${inline(ids.right)} .finding-card[data-status="consensus-ready"]`);
    expect(await page.$(`${inline(ids.right)} button.confirm`)).toBeNull();
    // Dismissing the P0 (with a reason) from the inline view, then resolving its duplicate: Block → Hold, live on the other page.
    await page.click(`${inline(ids.right)} button.dismiss`);
    await page.fill(`${inline(ids.right)} input.reason`, 'half-cents are rounded by the ledger');
    await page.click(`${inline(ids.right)} .dismiss-form button[type=submit]`);
    await other.waitForSelector(`${inline(ids.right)} .finding-card[data-status="dismissed"]`);
    // Its duplicate was folded under it; with the canonical finding closed it stands on its own line, and still holds.
    await page.waitForSelector(`${inline(ids.dup)} button.resolve`);
    expect(await rowAbove(page, ids.dup)).toMatchObject({ new: '3', path: 'src/price.ts' });
    await other.waitForSelector('#verdict-bar[data-verdict]:not([data-verdict="none"])');
    expect(await other.getAttribute('#verdict-bar', 'data-verdict')).toBe('Block');
    await page.click(`${inline(ids.dup)} button.resolve`);
    // Hold, not Ship: an unfinalized round is provisional, and a provisional verdict is never Ship.
    await other.waitForSelector('#verdict-bar[data-verdict="Hold"]');
  });

  it('keyboard: j/k walk the findings in reading order, n/p the cohorts, c confirms, r marks the cohort reviewed, ? opens the help', async () => {
    const page = await openPage(carol);
    await page.waitForSelector(`article.cohort .unplaced [data-inline-node="${ids.outside}"]`);
    const selectedId = () => page.evaluate(() => document.querySelector('#cohorts .inline-finding.selected')?.getAttribute('data-inline-node') ?? null);
    const order = await page.evaluate(() => (window as any).__reviewPage.code.order([...document.querySelectorAll('article.cohort')].map((e) => e.getAttribute('data-cohort-key'))));
    // The unplaceable finding at the cohort head comes first, then the inline ones in reading order.
    // (The closed finding and its former duplicate share head line 3.)
    expect(order).toEqual([ids.outside, ids.right, ids.dup, ids.left]);
    await page.keyboard.press('j');
    expect(await selectedId()).toBe(ids.outside);
    await page.keyboard.press('j');
    expect(await selectedId()).toBe(ids.right);
    await page.keyboard.press('j');
    expect(await selectedId()).toBe(ids.dup);
    await page.keyboard.press('j');
    expect(await selectedId()).toBe(ids.left);
    await page.keyboard.press('k');
    expect(await selectedId()).toBe(ids.dup);
    await page.keyboard.press('j');
    // c confirms the selected finding (filed by an agent; carol is a human member).
    await page.keyboard.press('c');
    await page.waitForSelector(`${inline(ids.left)} .finding-card[data-status="consensus-ready"]`);
    // n focuses the first cohort; r marks it reviewed for the brief in its selector.
    await page.keyboard.press('n');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-cohort-key'))).toBe(cohortKey);
    const progressBefore = await page.textContent('#pr-progress');
    await page.keyboard.press('r');
    await page.waitForSelector(`article.cohort[data-cohort-key="${cohortKey}"] .tag.progress:is([data-progress="partial"], [data-progress="complete"])`);
    expect(await page.textContent(`article.cohort[data-cohort-key="${cohortKey}"] .tag.progress`)).toMatch(/1\/\d brief\(s\)/);
    expect(await page.textContent('#pr-progress')).not.toBe(progressBefore);
    await page.keyboard.press('p');
    await page.keyboard.press('?');
    await page.waitForSelector('#help:not([hidden])');
    expect(await page.textContent('#help')).toContain('next / previous finding');
    await page.keyboard.press('Escape');
    await page.waitForSelector('#help', { state: 'hidden' });
  });

  it('a viewer reads the code and the findings but is offered no action, by button or key', async () => {
    const page = await openPage(viewer);
    await page.waitForSelector(inline(ids.left));
    expect(await page.$$('#cohorts button.act')).toHaveLength(0);
    expect(await page.$$('#nodes button.act')).toHaveLength(0);
    expect(await page.$('.mark-reviewed')).toBeNull();
    const status = await page.getAttribute(`${inline(ids.outside)} .finding-card`, 'data-status');
    await page.keyboard.press('j');
    await page.keyboard.press('c');
    await page.waitForTimeout(300);
    expect(await page.getAttribute(`${inline(ids.outside)} .finding-card`, 'data-status')).toBe(status);
  });

  it('expands unchanged context from the ledger', async () => {
    const page = await openPage(bob);
    const rows = await page.$$eval('section.file[data-path="src/cart.ts"] .row', (els) => els.length);
    const expand = await page.$('section.file[data-path="src/cart.ts"] button.expand');
    expect(expand).not.toBeNull();
    await expand!.click();
    await page.waitForFunction((n) => document.querySelectorAll('section.file[data-path="src/cart.ts"] .row').length > n, rows);
  });

  it('has no serious or critical accessibility violation (axe-core)', async () => {
    const page = await openPage(bob);
    await page.waitForSelector('section.file .row code.src .hljs-keyword');
    const violations = await axeSeriousViolations(page);
    expect(violations).toEqual([]);
  });

  // How fast is bench:review-page's to measure: a 1 s bound here failed under load.
  it('a finding an agent files while the page is open appears at its line (watchNodeStatus, no reload)', async () => {
    const page = await openPage(bob);
    await page.waitForSelector(inline(ids.left));
    const id = await fileNode(rev2, 'qa', { kind: 'question', priority: 'P2', title: 'is the comment still true?', anchor: { path: 'src/price.ts', startLine: 2, endLine: 2, side: 'RIGHT' } });
    await page.waitForSelector(inline(id));
    expect(await rowAbove(page, id)).toMatchObject({ new: '2', path: 'src/price.ts', cls: 'row add' });
  });
});
