import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { newUuidV7 } from '../../src/events/ids';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { GitFixture } from '../support/git-fixture';
import { buildWebBundle, launchChromium, png, rpcClient } from './support';

/**
 * Stored markup against the Review page, in Debian chromium: a member (an agent's token, say) writes HTML
 * and script into everything the page shows — a file's name and its code, a finding's title, body and
 * reasoning (its category must be a lowercase word), a cohort's summary — and an owner opens the page. Every
 * piece must arrive as text: no element the payloads describe exists in the document, none of their
 * handlers ran, and the payload text is on the page, visibly, as written. The page's CSP (script-src
 * 'self') is a second wall; this checks the first one, the escaping, so the CSP is never what stands.
 */
const MARK = 'window.__pwned';
const payload = (where: string) => `<img src=x onerror="${MARK}='${where}'"><svg onload="${MARK}='${where}'"></svg><script>${MARK}='${where}'</script>`;
const FILE = 'src/a"><img src=x onerror=window.__pwned=1>.ts';
const GOLDEN = 'goldens/b"><img src=x onerror=window.__pwned=2>.png';
const EVIL_PATH = '/evil<img src=x onerror=window.__pwned=3>';
/** A spec whose second path (markup in its name) the PR removes: a breaking change naming it. */
const spec = (withEvil: boolean) => `openapi: 3.0.3
info: { title: shop, version: 1.0.0 }
paths:
  /items:
    get:
      responses:
        '200': { description: items }
${withEvil ? `  "${EVIL_PATH}":
    get:
      responses:
        '200': { description: "<script>window.__pwned=4</script>" }
` : ''}`;

describe('Review page: stored markup is shown as text, never run (browser)', () => {
  let server: RunningServer;
  let dataDir: string;
  let repo: GitFixture;
  let browser: Browser;
  let owner: string;
  const ws = 'default';
  const target = { repoId: 'shop', prNumber: 3 };

  const { rpc, command } = rpcClient(() => server.url, ws, target);

  beforeAll(async () => {
    buildWebBundle();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-e2e-markup-'));
    repo = new GitFixture('rl-e2e-markup-', path.join(dataDir, 'repos', 'default'));
    repo.git('remote', 'add', 'origin', 'git@github.com:acme/shop.git');
    repo.write('src/price.ts', 'export function price(qty: number): number {\n  return qty;\n}\n');
    repo.write(FILE, 'export const a = 1;\n');
    repo.write('openapi.yaml', spec(true));
    repo.write(GOLDEN, png(24, 16, [200, 40, 40]));
    const base = repo.commit('base');
    repo.write('src/price.ts', `export function price(qty: number): number {\n  const note = "${payload('code').replace(/"/g, "'")}";\n  return qty * 2;\n}\n`);
    repo.write(FILE, `export const a = 2; // ${payload('code2')}\n`);
    repo.write('openapi.yaml', spec(false));
    repo.write(GOLDEN, png(24, 16, [200, 40, 40], { x: 4, y: 4, w: 8, h: 6, rgb: [40, 40, 200] }));
    const head = repo.commit('head');
    server = await startServer({ dataDir, port: 0 });
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    await rpc(owner, 'addMember', { idempotencyKey: newUuidV7(), principal: 'agent:mallory', role: 'member' });
    const mallory = (await rpc(owner, 'issueToken', { idempotencyKey: newUuidV7(), principal: 'agent:mallory', role: 'member' })).result.token as string;
    await rpc(owner, 'registerRepo', { idempotencyKey: newUuidV7(), repoId: target.repoId, path: repo.dir });
    await command(mallory, 'requestReview', { baseSha: base, headSha: head });
    const computed = (await command(mallory, 'computeReview', {})).result;
    const node = (title: string, anchor: Record<string, unknown>) => ({ kind: 'bug', priority: 'P1', triage: { category: 'correctness', severity: 'medium', effort: 'small' }, confidence: 0.8, brief: 'engineer', title, body: payload('body'), reasoning: payload('reasoning'), anchor });
    await command(mallory, 'addReviewNode', { node: node(payload('title').slice(0, 200), { path: 'src/price.ts', startLine: 2, endLine: 2, side: 'RIGHT' }) });
    await command(mallory, 'addReviewNode', { node: node('on the odd file', { path: FILE, startLine: 1, endLine: 1, side: 'RIGHT' }) });
    for (const c of computed.cohorts) await command(mallory, 'setCohortSummary', { cohortKey: c.key, markdown: `**summary** ${payload('summary')}` });
    // A CI check named with markup, linking to a script URL: shown as text, never as a live javascript: link.
    await command(mallory, 'recordCiSignal', { name: `<img src=x onerror=window.__pwned=5>`, status: 'completed', conclusion: 'failure', url: 'javascript:window.__pwned=6', headSha: head });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    repo?.cleanup();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('renders every payload as text: no injected element, no handler run, the text visible as written', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1360, height: 1000 } });
    const page: Page = await ctx.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    // A CSP report means markup reached the DOM and only the policy stopped it: that is a failure too.
    await page.addInitScript(() => document.addEventListener('securitypolicyviolation', (e) => ((window as unknown as { __csp: string[] }).__csp ??= []).push(`${e.violatedDirective} ${e.sample}`)));
    await page.goto(`${server.url}/workspaces/${ws}/repos/${target.repoId}/prs/${target.prNumber}#token=${encodeURIComponent(owner)}`);
    await page.waitForSelector('#cohorts .inline-finding');
    await page.waitForSelector('section.file .row code.src .hljs-keyword');
    // Open every collapsed section so lazily built content (summaries, lists) is drawn too.
    await page.$$eval('details:not([open])', (els) => els.forEach((el) => ((el as HTMLDetailsElement).open = true)));
    await page.waitForTimeout(300);
    const found = await page.evaluate(() => ({
      pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? null,
      csp: (window as unknown as { __csp?: string[] }).__csp ?? [],
      injected: document.querySelectorAll('img[src="x"], svg[onload], [onerror], [onload], a[href^="javascript:" i], [src^="javascript:" i]').length,
      scripts: [...document.scripts].filter((s) => s.textContent?.includes('__pwned')).length,
      text: document.body.innerText,
    }));
    expect({ pwned: found.pwned, csp: found.csp, injected: found.injected, scripts: found.scripts, dialogs }).toEqual({ pwned: null, csp: [], injected: 0, scripts: 0, dialogs: [] });
    // Shown as written, where a reader looks for it.
    expect(found.text).toContain(`<img src=x onerror="window.__pwned='title'">`);
    expect(found.text).toContain('a"><img src=x onerror=window.__pwned=1>.ts');
    expect(found.text).toContain(`<script>window.__pwned='summary'</script>`);
    expect(found.text).toContain(`<svg onload=\"window.__pwned='code2'\"></svg>`);
    expect(found.text).toContain(EVIL_PATH);
    expect(found.text).toContain('<img src=x onerror=window.__pwned=5>');
    expect(found.text).toContain('b"><img src=x onerror=window.__pwned=2>.png');
    await ctx.close();
  });
});
