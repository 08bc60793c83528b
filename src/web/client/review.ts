/// <reference lib="dom" />
import { v7 as uuidV7 } from 'uuid';
import { signInHint } from './sign-in-hint';
import type { reviewStatusQuery } from '../../readmodels/queries/review-status';
import type { verdictQuery } from '../../readmodels/queries/verdict';
import type { nodeStatusQuery } from '../../readmodels/queries/node-status';
import type { reportingGroupsQuery } from '../../readmodels/queries/reporting-groups';
import type { reReviewDeltaQuery } from '../../readmodels/queries/re-review-delta';
import type { cohortsQuery } from '../../readmodels/queries/cohorts';
import type { cohortProgressQuery } from '../../readmodels/queries/cohort-progress';
import type { apiContractQuery } from '../../readmodels/queries/api-contract';
import type { visualQuery } from '../../readmodels/queries/visual';
import type { dependencyDiffsQuery } from '../../readmodels/queries/dependency-diffs';
import type { publishPreviewQuery } from '../../readmodels/queries/publish-preview';
import type { ciSignalsQuery } from '../../readmodels/queries/ci-signals';
import type { ProgressUpdate } from '../../job-progress/hub';
import { visibleJobs } from './job-bars';
import type { cohortsView } from '../../readmodels/queries/cohorts';
import type { nodeStatusView } from '../../readmodels/queries/node-status';
import type { reviewStatusView } from '../../readmodels/queries/review-status';
import type { ProgressView } from '../../review-progress/progress';
import { roleAtLeast, type Role } from '../../events/roles';
import { CodeView, FIRST_PAGE_BYTES, type NodeRow } from './code-view';
import { details, fill, h, lazyDetails, markdown } from './dom';
import { LiveConnection } from './live';

/**
 * The Review page: one view in two states (the review running, then the finished review with its
 * actions). Every value on it arrives through a watch* subscription; actions are commands over POST /rpc,
 * and their effect comes back through the same subscriptions — to this page and to every other one open.
 */

const body = document.body;
const target = { workspaceId: body.dataset.workspace!, repoId: body.dataset.repo!, prNumber: Number(body.dataset.pr) };
const reviewTarget = { repoId: target.repoId, prNumber: target.prNumber };
const TOKEN_KEY = `review-ledger.token.${target.workspaceId}`;

interface Me {
  principal: string;
  role: Role;
  /** How this page is authenticated, as the audit records its acts: `sign-in`, `admin-provisioned` or `agent-token`. */
  authn?: string;
  signIn?: { issuer: string; subject: string } | null;
}

/** What a query answers: the return type of its definition's view. */
type ViewOf<Q> = Q extends { view(...args: never[]): infer R } ? R : never;

/** What each subscription holds, keyed by query name: the server's own view types (a page never re-declares them). */
interface Views {
  reviewStatus: ViewOf<typeof reviewStatusQuery>;
  verdict: ViewOf<typeof verdictQuery>;
  nodeStatus: ViewOf<typeof nodeStatusQuery>;
  reportingGroups: ViewOf<typeof reportingGroupsQuery>;
  reReviewDelta: ViewOf<typeof reReviewDeltaQuery>;
  cohorts: ViewOf<typeof cohortsQuery>;
  cohortProgress: ViewOf<typeof cohortProgressQuery>;
  apiContract: ViewOf<typeof apiContractQuery>;
  visual: ViewOf<typeof visualQuery>;
  dependencyDiffs: ViewOf<typeof dependencyDiffsQuery>;
  publishPreview: ViewOf<typeof publishPreviewQuery>;
  ciSignals: ViewOf<typeof ciSignalsQuery>;
  /** watchProgress: the jobs of this workspace (not a query of the log). */
  progress: { jobs: ProgressUpdate[] };
}
type Cohort = Views['cohorts']['cohorts'][number];

let token: string | null = null;
let me: Me | null = null;
let live: LiveConnection | null = null;
let selection: 'all_open' | 'consensus' = 'all_open';
const notices: string[] = [];
const openDismiss = new Set<string>();
const imageUrls = new Map<string, string>();

let code: CodeView | null = null;
/** The finding the keyboard acts on, and the cohort `n`/`p`/`r` act on. */
let selected: string | null = null;
let currentCohort: string | null = null;
const openInlineDismiss = new Set<string>();
const canAct = () => !!me && roleAtLeast(me.role, 'member');
const isHuman = () => !!me && me.principal.startsWith('user:');
/** Contract decisions, visual approvals and the Publish button are human steps (SPEC §0, §11, §12, §14). */
const canDecide = () => canAct() && isHuman();

/** Subscribes to a read model under its query name: `review_studio.<name>` is watched as `watch<Name>`. */
function watchQuery(name: string, params: Record<string, unknown>): void {
  live?.watch(name, `watch${name[0].toUpperCase()}${name.slice(1)}`, params);
}

function v<K extends keyof Views>(key: K): Views[K] | null {
  return (live?.subs.get(key)?.value as Views[K] | undefined) ?? null;
}

// ---- authorization -------------------------------------------------------------------------------

/**
 * Signed in through the identity provider: the HttpOnly session cookie authenticates (the page never
 * sees it); calls carry the CSRF header the server asks of cookie-authenticated calls instead.
 */
let session = false;

/** The headers that authenticate a call: the bearer token, or (signed in) the CSRF header beside the cookie. */
function auth(bearer: string | null = token): Record<string, string> {
  return bearer ? { authorization: `Bearer ${bearer}` } : { 'x-review-ledger-csrf': '1' };
}

/** 200: the sign-in session of this browser; 404 `sign_in_unavailable`: the server has no identity provider. */
async function sessionState(): Promise<{ me: Me | null; provider: boolean }> {
  const res = await fetch(`/auth/session?workspace=${encodeURIComponent(target.workspaceId)}`).catch(() => null);
  if (!res) return { me: null, provider: false };
  if (res.ok) return { me: (await res.json()) as Me, provider: true };
  const err = await res.json().catch(() => null);
  return { me: null, provider: err?.error?.data?.code !== 'sign_in_unavailable' };
}

let providerConfigured = false;

async function start(): Promise<void> {
  const fromHash = /(?:^#|&)token=([^&]+)/.exec(location.hash)?.[1];
  if (fromHash) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(fromHash));
    // The token never stays in the address bar (or in the history, or in a copied link).
    history.replaceState(null, '', location.pathname + location.search);
  }
  const stored = sessionStorage.getItem(TOKEN_KEY) ?? localStorage.getItem(TOKEN_KEY);
  if (stored) return signIn(stored, false);
  const state = await sessionState();
  providerConfigured = state.provider;
  if (!state.me) return showLogin(null);
  session = true;
  token = null;
  me = state.me;
  const firstPage = readWith(null, 'review_studio.reviewDiff', { ...reviewTarget, maxBytes: FIRST_PAGE_BYTES });
  firstPage.catch(() => undefined);
  mountReview(firstPage);
}

async function signIn(candidate: string, remember: boolean): Promise<void> {
  // The code's first page is asked for alongside "who am I" (one round trip less before the first paint);
  // it is used only if the token is accepted, and the server checks the token on it anyway.
  const firstPage = readWith(candidate, 'review_studio.reviewDiff', { ...reviewTarget, maxBytes: FIRST_PAGE_BYTES });
  firstPage.catch(() => undefined);
  const res = await fetch(`/workspaces/${encodeURIComponent(target.workspaceId)}/review-page/me`, { headers: { authorization: `Bearer ${candidate}` } });
  if (!res.ok) {
    sessionStorage.removeItem(TOKEN_KEY);
    localStorage.removeItem(TOKEN_KEY);
    const err = await res.json().catch(() => null);
    return showLogin(err?.error?.message ?? `HTTP ${res.status}`);
  }
  token = candidate;
  me = (await res.json()) as Me;
  sessionStorage.setItem(TOKEN_KEY, candidate);
  if (remember) localStorage.setItem(TOKEN_KEY, candidate);
  mountReview(firstPage);
}

function showLogin(error: string | null): void {
  live?.close();
  live = null;
  const input = h('input', { id: 'token-input', type: 'password', autocomplete: 'off', placeholder: 'rl_…', 'aria-label': 'API token' }) as HTMLInputElement;
  const remember = h('input', { id: 'remember', type: 'checkbox' }) as HTMLInputElement;
  fill(
    'app',
    h(
      'form',
      {
        id: 'login',
        class: 'login',
        onsubmit: (ev: Event) => {
          ev.preventDefault();
          if (input.value.trim()) void signIn(input.value.trim(), remember.checked);
        },
      },
      h('h1', null, 'Review ', h('span', { class: 'muted' }, `${target.repoId}#${target.prNumber}`)),
      providerConfigured
        ? h('p', null, h('a', { id: 'idp-sign-in', href: `/auth/login?workspace=${encodeURIComponent(target.workspaceId)}&return=${encodeURIComponent(location.pathname)}` }, 'Sign in with your organisation'), ' or use an API token:')
        : null,
      h('p', { id: 'sign-in-hint' }, ...signInHint(target.workspaceId).map((part) => (part.code ? h('code', null, part.text) : part.text))),
      error ? h('p', { class: 'error', id: 'login-error' }, error) : null,
      input,
      h('label', null, remember, ' remember on this browser'),
      h('button', { type: 'submit' }, 'Sign in'),
    ),
  );
}

// ---- layout and subscriptions ---------------------------------------------------------------------

function mountReview(firstPage: Promise<unknown> | null): void {
  fill(
    'app',
    h(
      'header',
      { class: 'top' },
      h('div', { class: 'title' }, h('strong', null, `${target.repoId}#${target.prNumber}`), h('span', { id: 'ladder', class: 'pill' }, '…'), h('span', { id: 'heads', class: 'muted' }), h('span', { id: 'audit-chain', class: 'pill', title: 'hash chain and signed checkpoints (docs/audit.md)' }, 'log …')),
      h('div', { class: 'who' }, h('span', { id: 'conn', class: 'conn' }), ' ', h('span', { class: 'muted' }, `${me!.principal} · ${me!.role}`), ' ', authnBadge(me!), ' ', h('button', { class: 'link', onclick: signOut }, 'sign out')),
    ),
    h('div', { id: 'verdict-bar', class: 'verdict-bar' }),
    h('div', { id: 'stale-banner', class: 'stale-banner', hidden: true }),
    h('div', { id: 'notices' }),
    h('div', { id: 'progress', class: 'progress' }),
    h(
      'div',
      { class: 'layout' },
      h(
        'main',
        null,
        h(
          'section',
          { id: 'cohorts-section', 'aria-labelledby': 'cohorts-title' },
          h(
            'div',
            { class: 'code-toolbar' },
            h('h2', { id: 'cohorts-title' }, 'Code by cohort'),
            h('span', { id: 'pr-progress', class: 'pill' }),
            h('span', { class: 'toggle', role: 'group', 'aria-label': 'diff layout' }, h('button', { id: 'mode-unified', 'aria-pressed': 'true', onclick: () => setMode('unified') }, 'unified'), h('button', { id: 'mode-split', 'aria-pressed': 'false', onclick: () => setMode('split') }, 'split')),
            h('button', { id: 'help-button', 'aria-haspopup': 'dialog', onclick: () => toggleHelp(true) }, 'keys ?'),
          ),
          h('div', { id: 'unplaced-global' }),
          h('div', { id: 'cohorts' }),
        ),
        h('section', { id: 'axes-section' }, h('h2', null, 'Axes'), h('div', { id: 'axes' }), h('div', { id: 'ci' })),
        h('section', { id: 'contract-section' }, h('h2', null, 'API contract'), h('div', { id: 'contract' })),
        h('section', { id: 'visual-section' }, h('h2', null, 'Visual snapshots'), h('div', { id: 'visual' })),
        h('section', { id: 'deps-section' }, h('h2', null, 'Dependencies'), h('div', { id: 'deps' })),
        h('section', { id: 'publish-section' }, h('h2', null, 'Publish to GitHub'), h('div', { id: 'publish' })),
      ),
      h('aside', { id: 'findings', class: 'findings', 'aria-labelledby': 'findings-title' }, h('h2', { id: 'findings-title' }, 'Findings'), h('div', { id: 'nodes' })),
    ),
    h(
      'div',
      { id: 'help', class: 'help', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'help-title', hidden: true },
      h(
        'div',
        { class: 'help-box' },
        h('h2', { id: 'help-title' }, 'Keyboard'),
        h('dl', null, KEYS.map(([k, what]) => [h('dt', null, h('kbd', null, k)), h('dd', null, what)])),
        h('button', { id: 'help-close', onclick: () => toggleHelp(false) }, 'close (Esc)'),
      ),
    ),
  );
  live = new LiveConnection(target.workspaceId, session ? null : token, (key) => render(key), (message) => showLogin(message));
  // Each subscription is keyed by its query's one name (src/readmodels/queries/queries.ts), watched as watch<Name>.
  for (const name of ['reviewStatus', 'verdict', 'nodeStatus', 'reportingGroups', 'reReviewDelta', 'cohorts', 'cohortProgress', 'apiContract', 'visual', 'dependencyDiffs', 'ciSignals']) watchQuery(name, reviewTarget);
  watchQuery('publishPreview', { ...reviewTarget, selection });
  // Index/compute progress is ephemeral (not in the log): subscribed afresh after a reconnect.
  live.watch('progress', 'watchProgress', {}, true);
  code = new CodeView({ read, card: inlineCard, onSelect: (id) => select(id, 'inline') }, reviewTarget, () => renderCode(), firstPage);
  // The code first: its first page is asked for before the subscriptions' snapshots queue up behind it.
  code.follow('latest');
  // The subscriptions' snapshots (the cohorts' alone is ~3 KB a cohort) are asked for once the first code is
  // on screen — at most 1.5 s on; until then the page's main thread and the server serve the first screen.
  const conn = live;
  void Promise.race([code.firstPaint, new Promise((r) => setTimeout(r, 1500))]).then(() => conn.connect());
  void refreshAuditChain();
  setInterval(() => void refreshAuditChain(), 30_000);
  (window as unknown as { __reviewPage: unknown }).__reviewPage = { live, code, stats: live.stats, drop: () => live?.drop(), hold: (on: boolean) => live?.hold(on) };
  render(null);
}

/** Whether the person signed in themselves or acts with a token someone else minted (the audit says the same). */
function authnBadge(m: Me): HTMLElement {
  const signedIn = m.authn === 'sign-in';
  return h('span', { id: 'authn', class: 'pill', 'data-authn': m.authn ?? 'unknown', title: signedIn && m.signIn ? `signed in at ${m.signIn.issuer} as ${m.signIn.subject}` : 'acts with a token an admin minted; the audit marks these acts admin-provisioned' }, signedIn ? 'signed in' : (m.authn ?? 'token'));
}

function signOut(): void {
  if (session) void fetch(`/auth/logout?workspace=${encodeURIComponent(target.workspaceId)}`, { method: 'POST', headers: auth(null) });
  session = false;
  sessionStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(TOKEN_KEY);
  token = null;
  me = null;
  showLogin(null);
}

// ---- commands ------------------------------------------------------------------------------------

async function command(method: string, payload: Record<string, unknown>): Promise<boolean> {
  const res = await fetch('/rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { workspace_id: target.workspaceId, idempotencyKey: uuidV7(), ...reviewTarget, ...payload } }),
  });
  const reply = await res.json().catch(() => null);
  if (!reply || reply.error) {
    notices.unshift(`${method}: ${reply?.error?.message ?? `HTTP ${res.status}`}`);
    notices.length = Math.min(notices.length, 3);
    renderNotices();
    return false;
  }
  return true;
}

/** A read over POST /rpc (the code under review is a read, not a fold: no watch). */
function read(method: string, params: Record<string, unknown>): Promise<unknown> {
  return readWith(token, method, params);
}

async function readWith(bearer: string | null, method: string, params: Record<string, unknown>): Promise<unknown> {
  const res = await fetch('/rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(bearer) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { workspace_id: target.workspaceId, ...params } }),
  });
  const reply = await res.json().catch(() => null);
  if (!reply || reply.error) throw new Error(`${method}: ${reply?.error?.message ?? `HTTP ${res.status}`}`);
  return reply.result.value;
}

/** Whether the log behind this page verifies (review_studio.auditChain): not a fold, so polled, not watched. */
async function refreshAuditChain(): Promise<void> {
  const el = document.getElementById('audit-chain');
  if (!el) return;
  const res = await fetch('/rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'review_studio.auditChain', params: { workspace_id: target.workspaceId } }),
  }).catch(() => null);
  const s = (await res?.json().catch(() => null))?.result?.value;
  if (!s) return;
  const cp = s.verifiedCheckpoint;
  el.dataset.status = !s.supported ? 'none' : s.ok ? 'verified' : 'broken';
  el.textContent = !s.supported ? 'log not chained' : s.ok ? `log verified${cp ? ` · checkpoint #${cp.seq} @${cp.position}` : ' · no checkpoint yet'}` : `log BROKEN at ${s.firstBroken}`;
  el.title = s.ok ? `hash chain verifies through position ${s.headPosition}${cp ? `; signed checkpoint #${cp.seq} covers 1..${cp.position} (${cp.time})` : ''}${s.chainedFrom ? `; chained from position ${s.chainedFrom}` : ''}` : s.problems?.[0]?.message ?? '';
}

function renderNotices(): void {
  fill('notices', notices.map((n, i) => h('div', { class: 'notice' }, n, ' ', h('button', { class: 'link', onclick: () => (notices.splice(i, 1), renderNotices()) }, 'close'))));
}

// ---- rendering -----------------------------------------------------------------------------------

const RENDERERS: Record<string, Array<() => void>> = {
  reviewStatus: [renderHeader, renderStale, renderProgress],
  verdict: [renderVerdict, renderAxes],
  reportingGroups: [renderNodes],
  reReviewDelta: [renderNodes],
  cohorts: [renderCohorts, renderProgress],
  cohortProgress: [renderProgress, renderCohorts],
  // The inline findings follow the same subscription as the sidebar.
  nodeStatus: [renderNodes, renderProgress, rerenderInline],
  apiContract: [renderContract],
  visual: [renderVisual],
  dependencyDiffs: [renderDeps],
  publishPreview: [renderPublish],
  progress: [renderProgress],
  ciSignals: [renderCi],
};

function render(key: string | null): void {
  if (!live) return;
  renderConnection();
  const fns = key ? RENDERERS[key] ?? [] : [...new Set(Object.values(RENDERERS).flat())];
  for (const fn of fns) fn();
}

function renderConnection(): void {
  const el = document.getElementById('conn');
  if (!el || !live) return;
  el.textContent = live.connected ? '● live' : '○ reconnecting…';
  el.className = live.connected ? 'conn live' : 'conn down';
  el.dataset.connected = String(live.connected);
}

const LADDER: Record<string, string> = { requested: 'requested', in_progress: 'in progress', awaiting_approval: 'awaiting approval', completed: 'completed' };
const short = (sha: string | null | undefined) => (sha ? sha.slice(0, 8) : '—');

function renderHeader(): void {
  const s = v('reviewStatus');
  const ladder = document.getElementById('ladder');
  if (ladder) {
    ladder.textContent = s?.exists && s.status ? LADDER[s.status] ?? s.status : 'no review';
    ladder.dataset.status = s?.status ?? 'none';
  }
  fill('heads', s?.exists ? ` round ${s.round} · reviewed head ${short(s.reviewedHead)} · level ${s.level}` : '');
}

function renderStale(): void {
  const s = v('reviewStatus');
  const el = document.getElementById('stale-banner');
  if (!el) return;
  el.hidden = !s?.stale;
  fill(
    'stale-banner',
    s?.stale
      ? [
          'The PR head moved to ', h('code', null, short(s.observedHead)), ' after the reviewed head ', h('code', null, short(s.reviewedHead)), ': this review is stale. Request or compute a review of the new head.',
          // A computation at the new head starts the next round (findings carried over, SPEC §5).
          canAct() && s.observedHead ? [' ', h('button', { id: 'new-round', class: 'act', onclick: () => void command('computeReview', { headSha: s.observedHead }) }, 'Review the new head')] : null,
        ]
      : [],
  );
}

function renderVerdict(): void {
  const d = v('verdict');
  const el = document.getElementById('verdict-bar');
  if (!el) return;
  if (!d?.exists) {
    el.className = 'verdict-bar pending';
    el.dataset.verdict = 'none';
    return fill('verdict-bar', d === null ? 'Loading…' : 'No review has been requested for this PR yet.');
  }
  const provisional = d.state === 'provisional';
  el.className = `verdict-bar v-${d.verdict.toLowerCase()}${provisional ? ' provisional' : ''}`;
  el.dataset.verdict = d.verdict;
  el.dataset.state = d.state ?? 'final';
  // When the axes made the verdict stricter than the findings did, the axes decided it: say which.
  const raisingAxes = d.verdict !== d.findingsVerdict ? d.axes.filter((a) => a.gated && ['fail', 'partial', 'unavailable'].includes(a.status)) : [];
  const decidedBy = raisingAxes.length
    ? `decided by ${raisingAxes.map((a) => `${a.axis} ${a.status}${a.reason ? ` (${a.reason})` : ''}`).join('; ')}`
    : (d.reasons?.[0] ?? (d.verdict === 'Ship' ? 'nothing blocking' : ''));
  fill(
    'verdict-bar',
    h('span', { class: 'verdict', id: 'verdict-value' }, d.verdict),
    // SPEC §7.1: a provisional verdict is flagged, with the last finalized one and whether it is stale.
    provisional
      ? h('span', { class: 'state', id: 'verdict-state', title: d.provisionalReason ?? '' }, 'provisional', d.previous ? ` · last finalized ${d.previous.verdict} at ${short(d.previous.headSha)}${d.previousStale ? ' (stale)' : ''}` : '')
      : null,
    h('span', { class: 'confidence', title: 'aggregate confidence' }, `confidence ${Number(d.confidence).toFixed(2)}`),
    h('span', { class: 'decided', id: 'verdict-reason', title: decidedBy }, decidedBy),
    d.reasons?.length > 1 ? details('verdict-reasons', { class: 'more' }, `+${d.reasons.length - 1} more`, h('ul', null, d.reasons.slice(1).map((r: string) => h('li', null, r)))) : null,
    d.finalized ? h('span', { class: 'muted' }, `finalized ${d.finalized.verdict} by ${d.finalized.by}`) : null,
  );
}

function renderProgress(): void {
  const s = v('reviewStatus');
  const c = v('cohorts');
  const p = v('cohortProgress');
  const n = v('nodeStatus');
  const running = s?.exists && (s.status === 'requested' || s.status === 'in_progress');
  const el = document.getElementById('progress');
  if (!el) return;
  el.hidden = !running;
  if (!running) return fill('progress');
  const cohorts = p?.cohorts ?? [];
  const done = cohorts.filter((x) => x.status === 'complete').length;
  fill(
    'progress',
    h('strong', null, 'Review in progress'),
    ' · ',
    c?.computed ? `computed at ${short(c.headSha)}: ${c.cohorts.length} cohort(s), ${c.changedFiles.length} changed file(s)` : 'waiting for the computation (cohorts, axes)…',
    ' · ',
    h('span', { id: 'progress-nodes' }, `${n?.nodes?.length ?? 0} finding(s) filed`),
    cohorts.length ? [' · ', `${done}/${cohorts.length} cohort(s) reviewed by every brief`] : null,
    jobsOfThisPr().map((j) =>
      h(
        'div',
        { class: `job ${j.status}`, 'data-job-kind': j.kind, 'data-job-status': j.status },
        `${j.kind === 'computeReview' ? 'computing the review' : 'indexing'}${j.phase ? ` (${j.phase})` : ''}: `,
        h('progress', { max: 1, value: j.fraction }),
        ` ${Math.round(j.fraction * 100)}%`,
        j.total ? ` · ${j.done}/${j.total} files` : '',
        j.status !== 'running' ? ` · ${j.status}${j.error ? `: ${j.error}` : ''}` : '',
      ),
    ),
    cohorts.length ? h('div', { class: 'bars' }, cohorts.map((x) => h('span', { class: `bar ${x.status}`, title: `${x.title}: ${x.briefs.map((b) => `${b.brief} ${b.status}`).join(', ')}` }))) : null,
  );
}

/** Jobs of this PR (its compute) and of its repo (indexing) still running or failed; the subscription covers the workspace. */
function jobsOfThisPr(): ProgressUpdate[] {
  return visibleJobs(v('progress')?.jobs ?? [], target);
}

const PRIORITY_ORDER: Record<string, number> = { P0: 0, P1: 1, P2: 2, P3: 3 };

function renderNodes(): void {
  const d = v('nodeStatus');
  if (!d) return fill('nodes', h('p', { class: 'muted' }, 'Loading…'));
  const groups = v('reportingGroups');
  const delta = v('reReviewDelta');
  const deltaOf = new Map<string, string>();
  for (const e of delta?.entries ?? []) if (e.state !== 'gone') for (const id of e.nodeIds) deltaOf.set(id, e.state);
  const below = new Set<string>(groups?.belowThreshold ?? []);
  const all = d.nodes;
  const dupsOf = new Map<string, NodeRow[]>();
  for (const n of all) if (n.duplicateOf) (dupsOf.get(n.duplicateOf) ?? dupsOf.set(n.duplicateOf, []).get(n.duplicateOf)!).push(n);
  const canonical = all.filter((n) => !n.duplicateOf);
  const order = (a: NodeRow, b: NodeRow) => Number(b.inDisagreement) - Number(a.inDisagreement) || PRIORITY_ORDER[a.priority] - PRIORITY_ORDER[b.priority] || a.filedAt - b.filedAt;
  const main = canonical.filter((n) => !below.has(n.nodeId)).sort(order);
  const rest = canonical.filter((n) => below.has(n.nodeId)).sort(order);
  const byLevel = new Map<string, NodeRow[]>();
  for (const n of rest) (byLevel.get(n.priority) ?? byLevel.set(n.priority, []).get(n.priority)!).push(n);
  const gone = (delta?.entries ?? []).filter((e) => e.state === 'gone');
  // Only the outdated findings still live ask for a re-review (issue 38: a resolved one was counted too).
  const reReview = delta?.reReview ?? [];
  fill(
    'nodes',
    d.disagreements?.length ? h('div', { class: 'disagreements', id: 'disagreements' }, `${d.disagreements.length} disagreement(s) between reviewers — shown first`) : null,
    // SPEC §5: findings whose anchored code changed since round N−1 still hold; they need a re-review.
    reReview.length ? h('div', { class: 're-review', id: 're-review' }, `${reReview.length} finding(s) outdated since round ${delta?.previousRound}: their code changed — re-review them`) : null,
    main.length === 0 && rest.length === 0 ? h('p', { class: 'muted', id: 'no-nodes' }, 'No findings yet.') : null,
    h('ol', { class: 'node-list', id: 'main-nodes' }, main.map((n) => nodeItem(n, dupsOf.get(n.nodeId) ?? [], deltaOf))),
    rest.length
      ? details(
          'below-threshold',
          { class: 'below', id: 'below-threshold' },
          `${rest.length} below the ${groups?.level ?? ''} threshold`,
          [...byLevel.entries()].sort(([a], [b]) => PRIORITY_ORDER[a] - PRIORITY_ORDER[b]).map(([level, ns]) => h('div', null, h('h4', null, level), h('ol', { class: 'node-list' }, ns.map((n) => nodeItem(n, dupsOf.get(n.nodeId) ?? [], deltaOf))))),
        )
      : null,
    gone.length ? details('gone', { class: 'gone' }, `${gone.length} gone since round ${delta?.previousRound}`, h('ul', null, gone.map((e) => h('li', null, `${e.priority} ${e.title}${e.reason ? ` — ${e.reason}` : ''}`)))) : null,
  );
}

function nodeItem(n: NodeRow, duplicates: NodeRow[], deltaOf: Map<string, string>): HTMLElement {
  const liveNode = n.status === 'open' || n.status === 'consensus-ready';
  const own = me?.principal === n.author;
  const badge = deltaOf.get(n.nodeId);
  const actions: HTMLElement[] = [];
  if (liveNode && canAct()) {
    if (!own && !n.confirmedBy.includes(me!.principal)) actions.push(h('button', { class: 'act confirm', onclick: () => void command('confirmNode', { nodeId: n.nodeId }) }, 'Confirm'));
    actions.push(h('button', { class: 'act dismiss', onclick: () => (openDismiss.has(n.nodeId) ? openDismiss.delete(n.nodeId) : openDismiss.add(`${n.nodeId}`), renderNodes()) }, 'Dismiss…'));
    actions.push(h('button', { class: 'act resolve', onclick: () => void command('resolveNode', { nodeId: n.nodeId, reason: `resolved by ${me!.principal} from the review page` }) }, 'Resolve'));
  }
  let dismissForm: HTMLElement | null = null;
  if (openDismiss.has(n.nodeId) && liveNode) {
    const reason = h('input', { class: 'reason', placeholder: 'why dismiss?', 'aria-label': 'dismiss reason' }) as HTMLInputElement;
    dismissForm = h(
      'form',
      {
        class: 'dismiss-form',
        onsubmit: (ev: Event) => {
          ev.preventDefault();
          if (!reason.value.trim()) return;
          openDismiss.delete(n.nodeId);
          void command('dismissNode', { nodeId: n.nodeId, reason: reason.value.trim() });
        },
      },
      reason,
      h('button', { type: 'submit' }, 'Dismiss'),
    );
  }
  return h(
    'li',
    {
      class: `node st-${n.status}${n.inDisagreement ? ' disagree' : ''}${selected === n.nodeId ? ' selected' : ''}`,
      'data-node-id': n.nodeId,
      'data-status': n.status,
      onclick: (ev: Event) => (ev.target as HTMLElement).closest('button, input, form, summary') || select(n.nodeId, 'sidebar'),
    },
    h(
      'div',
      { class: 'node-head' },
      h('span', { class: `prio ${n.priority}` }, n.priority),
      h('span', { class: 'kind' }, n.kind),
      badge ? h('span', { class: `delta ${badge}`, title: n.carry?.reason ?? '' }, badge) : null,
      n.inDisagreement ? h('span', { class: 'tag disagree' }, 'disagreement') : null,
      n.previouslyDismissed ? h('span', { class: 'tag', title: 'a node with this fingerprint was dismissed before (a preference, not a rule)' }, 'previously dismissed') : null,
      h('span', { class: `status ${n.status}` }, n.status),
    ),
    h('div', { class: 'node-title' }, n.title),
    h(
      'div',
      { class: 'node-meta muted' },
      n.anchor ? `${n.anchor.path}:${n.anchor.startLine}${n.anchor.endLine !== n.anchor.startLine ? `-${n.anchor.endLine}` : ''} · ` : '',
      `${n.brief} · ${n.author} · conf ${Number(n.confidence).toFixed(2)}`,
      n.confirmedBy.length ? ` · confirmed by ${n.confirmedBy.join(', ')}` : '',
      n.closed ? ` · ${n.status} by ${n.closed.by}: ${n.closed.reason}` : '',
    ),
    duplicates.length ? details(`dups-${n.nodeId}`, { class: 'dups' }, `${duplicates.length} duplicate(s) folded`, h('ul', null, duplicates.map((x) => h('li', { 'data-node-id': x.nodeId }, `${x.priority} ${x.title} — ${x.author}`)))) : null,
    actions.length ? h('div', { class: 'actions' }, actions) : null,
    dismissForm,
  );
}

/** One article per cohort, kept across renders: its head is redrawn, its code belongs to the CodeView. */
const cohortEls = new Map<string, { article: HTMLElement; head: HTMLElement; unplaced: HTMLElement; code: HTMLElement }>();
let renderedKeys = '';
/** The heads of the first cohorts are built with the cohorts; the others' once they near the viewport. */
const EAGER_HEADS = 6;
const HEAD_MARGIN_PX = 1200;
/** Per cohort head: whether it is near the viewport, and whether it shows the current values. */
const headState = new Map<string, { near: boolean; built: boolean }>();
let headObserver: IntersectionObserver | null = null;

function observeHead(key: string, head: HTMLElement): void {
  headObserver ??= new IntersectionObserver(
    (items) => {
      for (const it of items) {
        const k = (it.target as HTMLElement).dataset.headOf!;
        const st = headState.get(k);
        if (!st) continue;
        st.near = it.isIntersecting;
        if (st.near && !st.built) buildHead(k);
      }
    },
    { rootMargin: `${HEAD_MARGIN_PX}px 0px` },
  );
  head.dataset.headOf = key;
  headObserver.observe(head);
}

/** Draws a cohort's head from the current cohorts and progress values (at once, wherever it is). */
function buildHead(key: string): void {
  const co = v('cohorts')?.cohorts.find((x) => x.key === key);
  const el = cohortEls.get(key);
  const st = headState.get(key);
  if (!co || !el || !st) return;
  st.built = true;
  delete el.head.dataset.placeholder;
  // Drawn: no longer watched (the next cohorts or progress value turns it back into a watched placeholder).
  headObserver?.unobserve(el.head);
  el.head.classList.add('built');
  el.head.replaceChildren(cohortHead(co, v('cohortProgress')?.cohorts.find((p) => p.cohortKey === key)));
}

function renderCohorts(): void {
  const c = v('cohorts');
  const reset = (msg: string) => {
    cohortEls.clear();
    headState.clear();
    headObserver?.disconnect();
    renderedKeys = '';
    code?.follow(null);
    fill('cohorts', h('p', { class: 'muted' }, msg));
  };
  // Not known yet: the diff's first page (asked for at sign-in) may already be drawing; leave it be.
  if (!c) {
    if (!cohortEls.size) fill('cohorts', h('p', { class: 'muted' }, 'Loading…'));
    return;
  }
  if (!c.computed) return reset('Not computed yet: cohorts appear when the review computation lands.');
  if (c.cohorts.length === 0) return reset('No source file changed: no cohort to review.');
  performance.mark('review-page:cohorts');
  code?.follow(c.headSha);
  const keys = `${c.headSha}|${c.cohorts.map((co) => co.key).join(',')}`;
  if (keys !== renderedKeys) {
    renderedKeys = keys;
    const kept = code?.headSha === c.headSha ? new Map(cohortEls) : new Map();
    cohortEls.clear();
    headObserver?.disconnect();
    const states = new Map(headState);
    headState.clear();
    const root = document.getElementById('cohorts');
    root?.replaceChildren();
    for (const co of c.cohorts) {
      // Articles the diff already drew code into (same head) are kept: only their head is redrawn.
      const old = kept.get(co.key);
      const head = old?.head ?? h('div', { class: 'cohort-head' });
      const unplaced = old?.unplaced ?? h('div', { class: 'unplaced' });
      const codeEl = old?.code ?? h('div', { class: 'cohort-code' });
      const article = old?.article ?? h('article', { class: 'cohort', 'data-cohort-key': co.key, tabindex: -1 }, head, unplaced, codeEl);
      article.setAttribute('aria-label', `cohort ${co.rank}: ${co.title}`);
      cohortEls.set(co.key, { article, head, unplaced, code: codeEl });
      headState.set(co.key, { near: states.get(co.key)?.near ?? false, built: false });
      observeHead(co.key, head);
      root?.append(article);
    }
  }
  // 300 cohorts' heads cost what the few near the reader cost: the rest show rank and title until seen.
  // A drawn head is not watched: whether it is near the reader is read from the layout, all reads before any write.
  for (const co of c.cohorts) {
    const st = headState.get(co.key)!;
    if (!st.built) continue;
    const r = cohortEls.get(co.key)!.head.getBoundingClientRect();
    st.near = r.bottom > -HEAD_MARGIN_PX && r.top < innerHeight + HEAD_MARGIN_PX;
  }
  c.cohorts.forEach((co, i) => {
    const st = headState.get(co.key)!;
    const el = cohortEls.get(co.key)!;
    if (i < EAGER_HEADS || st.near) buildHead(co.key);
    else {
      const shown = `${co.rank}\0${co.title}`;
      if (!st.built && el.head.dataset.placeholder === shown) return;
      if (st.built) headObserver?.observe(el.head);
      st.built = false;
      el.head.classList.remove('built');
      el.head.dataset.placeholder = shown;
      el.head.replaceChildren(h('div', null, h('header', null, h('span', { class: 'rank' }, `#${co.rank}`), h('strong', null, co.title))));
    }
  });
  renderPrProgress();
  renderCode();
}

/** The head of a cohort about to be acted on by key (`n`/`p`/`r`), drawn now if it was still a placeholder. */
function ensureHead(key: string): void {
  if (headState.get(key)?.built === false) buildHead(key);
}

function cohortHead(co: Cohort, p: ProgressView['cohorts'][number] | undefined): HTMLElement {
  const br = co.blastRadius;
  const open = p?.briefs.filter((b) => b.status !== 'complete') ?? [];
  const briefSelect = h('select', { class: 'brief', 'aria-label': `brief marking cohort ${co.rank} reviewed` }, open.map((b) => h('option', { value: b.brief }, b.brief))) as HTMLSelectElement;
  return h(
    'div',
    null,
    h(
      'header',
      null,
      h('span', { class: 'rank' }, `#${co.rank}`),
      h('strong', null, co.title),
      h('span', { class: `tag grouping ${co.grouping}`, title: co.groupingReason ?? '' }, `${co.grouping} grouping`),
      p ? h('span', { class: `tag progress ${p.status}`, 'data-progress': p.status, title: p.briefs.map((b) => `${b.brief} ${b.status}${b.by ? ` (${b.by})` : ''}`).join(', ') }, `review ${p.status} · ${p.briefs.filter((b) => b.status === 'complete').length}/${p.briefs.length} brief(s)`) : null,
      canAct() && open.length
        ? h('span', { class: 'mark' }, briefSelect, h('button', { class: 'act mark-reviewed', onclick: () => void markReviewed(co.key, briefSelect.value) }, 'Mark reviewed'))
        : null,
    ),
    co.groupingReason ? h('div', { class: 'muted reason' }, co.groupingReason) : null,
    h(
      'div',
      { class: 'blast' },
      h('span', null, `blast radius ${br.score}`),
      h('span', null, `${br.dependents.files.length} dependent file(s)${br.dependents.truncated ? '+' : ''}`),
      h('span', null, `${br.publicApi.length} public symbol(s)`),
      h('span', null, `${br.tests.length} test file(s) reach it`),
    ),
    br.dependents.files.length || br.publicApi.length || br.tests.length
      ? lazyDetails(`impact-${co.key}`, { class: 'impact' }, 'who depends on it', () => [
          br.publicApi.length ? h('div', null, 'public API: ', br.publicApi.map((x) => h('code', null, x))) : null,
          br.dependents.symbols.length ? h('div', null, `dependent symbols (depth ${br.dependents.depth}): `, br.dependents.symbols.map((x) => h('code', null, x))) : null,
          br.dependents.files.length ? h('div', null, 'dependent files: ', br.dependents.files.map((x) => h('code', null, x))) : null,
          br.tests.length ? h('div', null, 'tests: ', br.tests.map((x) => h('code', null, x))) : null,
        ])
      : null,
    h('div', { class: 'files' }, co.files.map((f) => h('code', null, f))),
    co.readingOrder?.steps?.length
      ? lazyDetails(`reading-${co.key}`, { class: 'reading' }, `reading order (${co.readingOrder.order})`, () => [h('ol', null, co.readingOrder.steps.map((st) => h('li', null, h('code', null, st.symbolId ?? st.path), ' — ', st.why)))])
      : null,
    co.summary ? h('div', { class: 'summary' }, markdown(co.summary.markdown), h('div', { class: 'muted' }, `summary by ${co.summary.by}`)) : h('div', { class: 'muted summary' }, 'No summary yet.'),
    co.diagrams.map((d) => diagramView(d)),
    co.clues?.length ? h('div', { class: 'clues muted' }, 'clues: ', co.clues.map((x) => `${x.kind} ${x.path}`).join(', ')) : null,
  );
}

function renderPrProgress(): void {
  const p = v('cohortProgress');
  const el = document.getElementById('pr-progress');
  if (!el) return;
  el.textContent = p?.exists && p.totals.cohorts ? `${p.totals.complete}/${p.totals.cohorts} cohort(s) reviewed${p.totals.partial ? ` · ${p.totals.partial} partial` : ''}` : 'no cohort progress yet';
  el.dataset.complete = String(p?.totals.complete ?? 0);
}

async function markReviewed(cohortKey: string, brief: string | undefined): Promise<void> {
  if (!brief) return;
  await command('markCohortReviewed', { cohortKey, brief, status: 'complete' });
}

/** Appends the loaded file blocks under their cohorts and lists the findings that have no line there. */
function renderCode(): void {
  if (!code) return;
  for (const [key, list] of code.entries) {
    const el = cohortEls.get(key) ?? provisionalCohort(key);
    for (const le of list) if (le.el.parentElement !== el.code) el.code.append(le.el);
    const unplaced = code.unplaced.get(key) ?? [];
    el.unplaced.replaceChildren(
      ...(unplaced.length ? [h('h3', { class: 'unplaced-title' }, `${unplaced.length} finding(s) not placed on a line`), ...unplaced.map((u) => unplacedItem(u.node, u.reason))] : []),
      ...(code.complete.has(key) || code.error ? [] : [h('p', { class: 'muted loading-code' }, 'loading the code…')]),
    );
  }
  const global = code.unplaced.get('') ?? [];
  fill('unplaced-global', code.error ? h('p', { class: 'error' }, code.error) : null, global.length ? [h('h3', { class: 'unplaced-title' }, `${global.length} finding(s) outside every cohort's code`), global.map((u) => unplacedItem(u.node, u.reason))] : null);
}

/**
 * The diff is asked for at sign-in, alongside the subscriptions: when its first page arrives before the
 * cohorts snapshot, the code is drawn under a bare cohort article that the snapshot then completes.
 */
function provisionalCohort(key: string): { article: HTMLElement; head: HTMLElement; unplaced: HTMLElement; code: HTMLElement } {
  const meta = code?.cohortMeta.get(key);
  const head = h('div', { class: 'cohort-head' }, h('header', null, h('span', { class: 'rank' }, `#${meta?.rank ?? ''}`), h('strong', null, meta?.title ?? key)));
  const el = { article: h('article', { class: 'cohort', 'data-cohort-key': key, 'aria-label': `cohort ${meta?.rank ?? ''}: ${meta?.title ?? key}`, tabindex: -1 }), head, unplaced: h('div', { class: 'unplaced' }), code: h('div', { class: 'cohort-code' }) };
  el.article.append(el.head, el.unplaced, el.code);
  const root = document.getElementById('cohorts');
  if (!cohortEls.size) root?.replaceChildren();
  root?.append(el.article);
  cohortEls.set(key, el);
  return el;
}

function unplacedItem(n: NodeRow, reason: string): HTMLElement {
  return h('div', { class: 'inline-finding unplaced-finding', 'data-inline-node': n.nodeId, tabindex: -1, onclick: (ev: Event) => (ev.target as HTMLElement).closest('button, input, form') || select(n.nodeId, 'inline') }, h('div', { class: 'unplaced-reason muted' }, reason), inlineCard(n, []));
}

/** A finding where the code is: priority, status, confirmations, carried / outdated, folded duplicates, actions. */
function inlineCard(n: NodeRow, duplicates: NodeRow[]): HTMLElement {
  const liveNode = n.status === 'open' || n.status === 'consensus-ready';
  const own = me?.principal === n.author;
  const actions: HTMLElement[] = [];
  if (liveNode && canAct()) {
    if (!own && !n.confirmedBy.includes(me!.principal)) actions.push(h('button', { class: 'act confirm', onclick: () => void command('confirmNode', { nodeId: n.nodeId }) }, 'Confirm'));
    actions.push(h('button', { class: 'act dismiss', onclick: () => (openInlineDismiss.has(n.nodeId) ? openInlineDismiss.delete(n.nodeId) : openInlineDismiss.add(n.nodeId), rerenderInline()) }, 'Dismiss…'));
    actions.push(h('button', { class: 'act resolve', onclick: () => void command('resolveNode', { nodeId: n.nodeId, reason: `resolved by ${me!.principal} from the review page` }) }, 'Resolve'));
  }
  let form: HTMLElement | null = null;
  if (openInlineDismiss.has(n.nodeId) && liveNode) {
    const reason = h('input', { class: 'reason', placeholder: 'why dismiss?', 'aria-label': 'dismiss reason' }) as HTMLInputElement;
    form = h('form', { class: 'dismiss-form', onsubmit: (ev: Event) => (ev.preventDefault(), reason.value.trim() && (openInlineDismiss.delete(n.nodeId), void command('dismissNode', { nodeId: n.nodeId, reason: reason.value.trim() }))) }, reason, h('button', { type: 'submit' }, 'Dismiss'));
  }
  const fate = n.carry?.fate;
  return h(
    'div',
    { class: `finding-card st-${n.status}${selected === n.nodeId ? ' selected' : ''}`, 'data-node-id': n.nodeId, 'data-status': n.status },
    h(
      'div',
      { class: 'node-head' },
      h('span', { class: `prio ${n.priority}` }, n.priority),
      h('span', { class: 'kind' }, n.kind),
      fate ? h('span', { class: `delta ${fate}`, title: n.carry?.reason ?? '' }, fate === 'outdated' ? `outdated since round ${n.carry!.fromRound}` : `carried from round ${n.carry!.fromRound}`) : null,
      n.inDisagreement ? h('span', { class: 'tag disagree' }, 'disagreement') : null,
      h('span', { class: 'confirmations', title: n.confirmedBy.join(', ') }, `${n.confirmedBy.length} confirmation(s)`),
      h('span', { class: `status ${n.status}` }, n.status),
    ),
    h('div', { class: 'node-title' }, n.title),
    h('div', { class: 'node-meta muted' }, `${n.brief} · ${n.author}`, n.anchor ? ` · ${n.anchor.side ?? 'RIGHT'} ${n.anchor.startLine}${n.anchor.endLine !== n.anchor.startLine ? `-${n.anchor.endLine}` : ''}` : '', n.closed ? ` · ${n.status} by ${n.closed.by}: ${n.closed.reason}` : ''),
    duplicates.length ? details(`inline-dups-${n.nodeId}`, { class: 'dups' }, `${duplicates.length} duplicate(s) folded`, h('ul', null, duplicates.map((x) => h('li', null, `${x.priority} ${x.title} — ${x.author}`)))) : null,
    actions.length ? h('div', { class: 'actions' }, actions) : null,
    form,
  );
}

function rerenderInline(): void {
  const nodes = v('nodeStatus');
  if (code && nodes) code.setNodes(nodes.nodes);
  renderCode();
}

/** Selecting a finding on one side scrolls the other to it (sidebar ↔ inline). */
function select(nodeId: string, from: 'inline' | 'sidebar' | 'keys'): void {
  selected = nodeId;
  for (const el of document.querySelectorAll('.selected')) el.classList.remove('selected');
  const side = document.querySelector<HTMLElement>(`#nodes li.node[data-node-id="${CSS.escape(nodeId)}"]`);
  side?.classList.add('selected');
  if (from !== 'sidebar' && side) {
    const aside = document.getElementById('findings')!;
    aside.scrollTop = side.offsetTop - aside.offsetTop - aside.clientHeight / 3;
  }
  const inline = from === 'inline' ? document.querySelector<HTMLElement>(`#cohorts [data-inline-node="${CSS.escape(nodeId)}"], #unplaced-global [data-inline-node="${CSS.escape(nodeId)}"]`) : code?.reveal(nodeId) ?? null;
  inline?.classList.add('selected');
  if (from !== 'inline') inline?.focus({ preventScroll: true });
  const cohort = inline?.closest<HTMLElement>('article.cohort');
  if (cohort) currentCohort = cohort.dataset.cohortKey ?? null;
}

function setMode(mode: 'unified' | 'split'): void {
  code?.setMode(mode);
  document.getElementById('mode-unified')?.setAttribute('aria-pressed', String(mode === 'unified'));
  document.getElementById('mode-split')?.setAttribute('aria-pressed', String(mode === 'split'));
}

const KEYS: Array<[string, string]> = [
  ['j / k', 'next / previous finding'],
  ['n / p', 'next / previous cohort'],
  ['c', 'confirm the selected finding'],
  ['r', 'mark the current cohort reviewed'],
  ['u / s', 'unified / split diff'],
  ['?', 'this help'],
  ['Esc', 'close'],
];

function toggleHelp(on: boolean): void {
  const el = document.getElementById('help');
  if (!el) return;
  el.hidden = !on;
  if (on) document.getElementById('help-close')?.focus();
  else document.getElementById('help-button')?.focus();
}

function onKey(ev: KeyboardEvent): void {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target as HTMLElement | null;
  if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable)) return;
  const help = document.getElementById('help');
  if (ev.key === 'Escape') return toggleHelp(false);
  if (ev.key === '?') return toggleHelp(help?.hidden === true);
  if (!help?.hidden || !code) return;
  const c = v('cohorts');
  const keys = c?.computed ? c.cohorts.map((co) => co.key) : [];
  if (ev.key === 'j' || ev.key === 'k') {
    const order = code.order(keys);
    if (!order.length) return;
    const at = selected ? order.indexOf(selected) : -1;
    const next = ev.key === 'j' ? (at < 0 ? 0 : Math.min(at + 1, order.length - 1)) : at < 0 ? order.length - 1 : Math.max(at - 1, 0);
    select(order[next], 'keys');
  } else if (ev.key === 'n' || ev.key === 'p') {
    if (!keys.length) return;
    const at = currentCohort ? keys.indexOf(currentCohort) : -1;
    const next = ev.key === 'n' ? Math.min(at + 1, keys.length - 1) : Math.max(at - 1, 0);
    currentCohort = keys[next];
    ensureHead(currentCohort);
    const el = cohortEls.get(currentCohort)?.article;
    el?.scrollIntoView({ block: 'start' });
    el?.focus({ preventScroll: true });
  } else if (ev.key === 'c') {
    if (!selected || !canAct()) return;
    const n = v('nodeStatus')?.nodes.find((x) => x.nodeId === selected);
    if (n && (n.status === 'open' || n.status === 'consensus-ready') && n.author !== me!.principal && !n.confirmedBy.includes(me!.principal)) void command('confirmNode', { nodeId: n.nodeId });
  } else if (ev.key === 'r') {
    if (!currentCohort || !canAct()) return;
    ensureHead(currentCohort);
    const select = cohortEls.get(currentCohort)?.head.querySelector<HTMLSelectElement>('select.brief');
    void markReviewed(currentCohort, select?.value);
  } else if (ev.key === 'u') setMode('unified');
  else if (ev.key === 's') setMode('split');
  else return;
  ev.preventDefault();
}
document.addEventListener('keydown', onKey);

// The diagram kinds are a union whose node and edge lists differ; read here field by field.
function diagramView(entry: any): HTMLElement {
  const d = entry.diagram;
  const names = new Map<string, string>();
  const nodes: any[] = d.kind === 'sequence' ? d.participants : d.kind === 'entityRelation' ? d.entities : d.states;
  for (const n of nodes) names.set(n.id, n.label ?? n.id);
  const edges: any[] = d.kind === 'sequence' ? d.messages : d.kind === 'entityRelation' ? d.relations : d.transitions;
  const kindLabel = { sequence: 'sequence', entityRelation: 'entity–relation', stateMachine: 'state machine' }[d.kind as string];
  return h(
    'figure',
    { class: `diagram ${d.kind}` },
    h('figcaption', null, `${kindLabel} diagram${d.title ? `: ${d.title}` : ''}`, entry.unverifiedEdges ? h('span', { class: 'tag unverified' }, `${entry.unverifiedEdges}/${entry.edgeCount} edge(s) unverified`) : h('span', { class: 'tag verified' }, 'all edges verified')),
    h('div', { class: 'diagram-nodes' }, nodes.map((n) => h('span', { class: `dnode${d.initial === n.id ? ' initial' : ''}`, title: n.symbolId ?? '' }, names.get(n.id)!))),
    h(
      'ol',
      { class: 'edges' },
      edges.map((e) =>
        h(
          'li',
          { class: e.verified ? 'edge verified' : 'edge unverified', title: e.verified ? 'confirmed by the code graph' : 'the code graph could not confirm this edge' },
          h('span', null, names.get(e.from) ?? e.from),
          h('span', { class: 'arrow' }, e.verified ? ' ──▶ ' : ' ┄┄▶ '),
          h('span', null, names.get(e.to) ?? e.to),
          e.label ?? e.event ? h('span', { class: 'muted' }, ` : ${e.label ?? e.event}`) : null,
          e.cardinality ? h('span', { class: 'muted' }, ` (${e.cardinality})`) : null,
          e.verified ? null : h('span', { class: 'tag unverified' }, 'unverified'),
        ),
      ),
    ),
  );
}

function renderAxes(): void {
  const d = v('verdict');
  if (!d?.exists) return fill('axes', h('p', { class: 'muted' }, 'No axes yet.'));
  fill(
    'axes',
    h(
      'table',
      { class: 'axes' },
      h('thead', null, h('tr', null, h('th', null, 'axis'), h('th', null, 'state'), h('th', null, 'gated'), h('th', null, 'reason'))),
      h(
        'tbody',
        null,
        d.axes.map((a) => h('tr', { 'data-axis': a.axis }, h('td', null, a.axis), h('td', null, h('span', { class: `ax ${a.status}` }, a.status.replace('_', ' '))), h('td', null, a.gated ? 'yes' : 'no'), h('td', { class: 'muted' }, a.reason ?? (a.source === 'none' ? 'not recorded yet' : '')))),
      ),
    ),
  );
}

function renderCi(): void {
  const c = v('ciSignals');
  if (!c?.signals?.length) return fill('ci');
  fill(
    'ci',
    h('h4', null, `CI checks at ${short(c.headSha)}`),
    h('ul', { class: 'ci' }, c.signals.map((x) => h('li', { 'data-check': x.name }, h('span', { class: `ax ${x.conclusion === 'success' ? 'pass' : x.conclusion === 'failure' ? 'fail' : ''}` }, x.conclusion ?? x.status), ' ', x.name))),
  );
}

function renderContract(): void {
  const c = v('apiContract');
  if (!c) return fill('contract', h('p', { class: 'muted' }, 'Loading…'));
  if (!c.computed) return fill('contract', h('p', { class: 'muted' }, c.reason));
  fill(
    'contract',
    h('div', { class: 'gate' }, 'gate ', h('span', { class: `ax ${c.status}`, id: 'contract-gate' }, c.status), c.reason ? h('span', { class: 'muted' }, ` ${c.reason}`) : null),
    c.specs.length ? h('div', { class: 'muted' }, 'specs: ', c.specs.map((s) => `${s.path} (${s.change}${s.error ? `: ${s.error}` : ''})`).join(', ')) : null,
    h(
      'ul',
      { class: 'changes' },
      c.changes.map((ch) =>
        h(
          'li',
          { class: `change sev-${ch.severity}`, 'data-change-id': ch.changeId, 'data-decision': ch.decision?.decision ?? 'undecided' },
          h('span', { class: `sev ${ch.severity}` }, ch.severity),
          ch.derived ? h('span', { class: 'tag' }, 'derived (advisory)') : null,
          h('code', { class: 'rule' }, ch.ruleId),
          h('span', { class: 'msg' }, ch.message),
          h('div', { class: 'muted' }, `${ch.operation ?? ''} ${ch.specPath} · ${ch.direction}`),
          ch.decision ? h('div', { class: `decision ${ch.decision.decision}` }, `${ch.decision.decision} by ${ch.decision.by}`) : null,
          canDecide()
            ? h(
                'div',
                { class: 'actions' },
                ch.decision?.decision !== 'approved' ? h('button', { class: 'act approve-change', onclick: () => void command('setContractDecision', { changeId: ch.changeId, decision: 'approved' }) }, 'Approve') : null,
                ch.decision?.decision !== 'rejected' ? h('button', { class: 'act reject-change', onclick: () => void command('setContractDecision', { changeId: ch.changeId, decision: 'rejected' }) }, 'Reject') : null,
              )
            : null,
        ),
      ),
    ),
  );
}

/** Images are data: fetched with the caller's token and shown from a blob URL (an <img src> cannot carry the header). */
function authImage(url: string, alt: string, cls: string): HTMLElement {
  const img = h('img', { alt, class: cls }) as HTMLImageElement;
  const known = imageUrls.get(url);
  if (known) {
    img.src = known;
    return img;
  }
  void fetch(url, { headers: auth() }).then(async (res) => {
    if (!res.ok) {
      const err = await res.json().catch(() => null);
      img.replaceWith(h('div', { class: `noimg ${cls}` }, err?.error?.message ?? `${alt}: HTTP ${res.status}`));
      return;
    }
    const blobUrl = URL.createObjectURL(await res.blob());
    imageUrls.set(url, blobUrl);
    img.src = blobUrl;
  });
  return img;
}

function renderVisual(): void {
  const c = v('visual');
  if (!c) return fill('visual', h('p', { class: 'muted' }, 'Loading…'));
  if (!c.computed) return fill('visual', h('p', { class: 'muted' }, c.reason));
  const ws = encodeURIComponent(target.workspaceId);
  const snapUrl = (side: string, id: string) => `/workspaces/${ws}/repos/${encodeURIComponent(target.repoId)}/prs/${target.prNumber}/snapshots/${side}?id=${encodeURIComponent(id)}`;
  fill(
    'visual',
    h('div', { class: 'gate' }, 'gate ', h('span', { class: `ax ${c.status}`, id: 'visual-gate' }, c.status), c.reason ? h('span', { class: 'muted' }, ` ${c.reason}`) : null),
    c.snapshots.map((s) =>
      h(
        'article',
        { class: `snapshot st-${s.displayState}`, 'data-snapshot-id': s.snapshotId, 'data-state': s.displayState },
        h(
          'header',
          null,
          h('code', null, s.snapshotId),
          h('span', { class: `tag ${s.displayState}` }, s.displayState),
          s.changedRatio !== undefined ? h('span', { class: 'ratio' }, `${(s.changedRatio * 100).toFixed(2)}% of pixels changed${s.changedPixels !== undefined ? ` (${s.changedPixels})` : ''}`) : null,
          s.approval ? h('span', { class: 'muted' }, `approved by ${s.approval.by}`) : null,
          s.needsApproval && canDecide() ? h('button', { class: 'act approve-visual', onclick: () => void command('approveVisual', { snapshotId: s.snapshotId }) }, 'Approve') : null,
        ),
        s.error ? h('div', { class: 'error' }, s.error) : null,
        h(
          'div',
          { class: 'images' },
          s.baseHash ? h('figure', null, authImage(snapUrl('base', s.snapshotId), 'before', 'before'), h('figcaption', null, 'before')) : null,
          s.headHash ? h('figure', null, authImage(snapUrl('head', s.snapshotId), 'after', 'after'), h('figcaption', null, 'after')) : null,
          s.diffHash ? h('figure', null, authImage(`/workspaces/${ws}/visual/${s.diffHash}.png`, 'diff', 'diff'), h('figcaption', null, 'diff')) : null,
        ),
      ),
    ),
  );
}

function renderDeps(): void {
  const d = v('dependencyDiffs');
  if (!d?.computed) return fill('deps', h('p', { class: 'muted' }, 'Not computed yet.'));
  if (!d.diffs.length) return fill('deps', h('p', { class: 'muted' }, 'No manifest or lock file changed.'));
  fill(
    'deps',
    d.diffs.map((m) =>
      h(
        'div',
        { class: 'manifest' },
        h('div', null, h('code', null, m.path), ` (${m.ecosystem})`, m.versionOnly ? ' — version-only bump' : '', m.error ? h('span', { class: 'error' }, ` ${m.error}`) : null),
        h('ul', null, m.changes.map((c) => h('li', { class: c.major ? 'major' : '' }, `${c.change} ${c.name} ${c.from ?? ''}${c.from && c.to ? ' → ' : ''}${c.to ?? ''}`, c.major ? h('span', { class: 'tag major' }, 'major') : null, c.group ? h('span', { class: 'muted' }, ` ${c.group}`) : null))),
      ),
    ),
  );
}

function renderPublish(): void {
  const p = v('publishPreview');
  if (!p) return fill('publish', h('p', { class: 'muted' }, 'Loading…'));
  const radio = (value: 'all_open' | 'consensus', label: string) =>
    h('label', null, h('input', { type: 'radio', name: 'selection', value, checked: selection === value, onchange: () => ((selection = value), watchQuery('publishPreview', { ...reviewTarget, selection })) }), ` ${label}`);
  const allowed = p.enabled && canDecide();
  const why = !p.enabled ? p.blockedBy : !canDecide() ? 'publishing from this page is a human step (member or above)' : null;
  fill(
    'publish',
    h('div', { class: 'selection' }, radio('all_open', 'every open finding'), ' ', radio('consensus', 'peer-confirmed only')),
    h('div', { class: 'preview', id: 'publish-preview' }, p.verdict ? `${p.verdict} → GitHub ${p.event}` : 'not finalized yet', ` · ${p.inline.length} inline, ${p.folded.length} in the body`, p.excluded.length ? ` · ${p.excluded.length} left out` : ''),
    h('div', { class: 'cols' },
      h('div', null, h('h4', null, 'inline comments'), h('ul', { id: 'publish-inline' }, p.inline.map((x) => h('li', null, `${x.priority} ${x.title} — ${x.placement.path}:${x.placement.startLine}`)))),
      h('div', null, h('h4', null, 'folded into the body'), h('ul', { id: 'publish-folded' }, p.folded.map((x) => h('li', null, `${x.priority} ${x.title} — ${(x.placement.reason ?? '').replace(/_/g, ' ')}`)))),
    ),
    h('p', { class: 'muted' }, p.note),
    h('button', { id: 'publish-button', class: 'primary', disabled: !allowed, title: why ?? '', onclick: () => void command('publish', { selection }) }, 'Publish to GitHub'),
    why ? h('span', { class: 'muted' }, ` ${why}`) : null,
  );
}

void start();
