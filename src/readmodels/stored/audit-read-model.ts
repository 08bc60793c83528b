import { parseReviewStream } from '../../events/streams';
import type { RecordedEvent } from '../../events/envelope';
import { catalogued } from '../../events/catalogue/event-types';
import { ACT_TYPES, AFFECTING, authnOf, type AuthnKind, advanceAuditPage, auditCursorPosition, auditLimit, auditOrder, auditPage, decisionAct, AuditAction, AuditInput, AuditPage, AuditRow, IssuerLink } from '../queries/audit';
import type { ApplyTx, ReadModel, Row } from './model';
import type { BulkBuilder, BulkDialect, BulkStatements } from './bulk';
import type { ReadModelStorage, Slot } from './storage';
import { tableName } from './storage';

/** Positions of the rows table's indexes (`<table>_ix<n>`), by the filter each serves. */
export const AUDIT_IX = { actor: 0, action: 1, repoPr: 2, pr: 3, time: 4, actionTime: 5 } as const;

/** Same bound as the fold's (src/readmodels/queries/audit.ts): tokens are issued by earlier tokens. */
const MAX_CHAIN = 32;

/**
 * The audit log as rows: one per decision act, with the role and issuer chain resolved as of the act
 * (from the members and tokens rows this model also keeps), so a position-bounded read is exact.
 * Indexes serve each filter of `audit` (actor, action, PR, time range): those ending in position give
 * rows in log order (either way) without a sort; (action, time) and (time) hold a range's positions.
 */
export const auditReadModel: ReadModel = {
  name: 'audit',
  // v2: the (action, time) index; v3: how each act was authenticated (authn, idp_issuer, idp_subject).
  version: 3,
  tables: [
    {
      name: 'rows',
      columns: { position: 'int', time: 'text', action: 'text', actor: 'text', role: 'text', target: 'text', repo_id: 'text', pr_number: 'int', detail: 'text', event_id: 'text', via: 'text', token_id: 'text', issuer_chain: 'text', authn: 'text', idp_issuer: 'text', idp_subject: 'text' },
      key: ['position'],
      // In AUDIT_IX order (the SQLite index names end in the position here).
      indexes: [['actor', 'position'], ['action', 'position'], ['repo_id', 'pr_number', 'position'], ['pr_number', 'position'], ['time', 'position'], ['action', 'time']],
    },
    { name: 'members', columns: { principal: 'text', role: 'text' }, key: ['principal'] },
    { name: 'tokens', columns: { token_id: 'text', principal: 'text', issuer_token_id: 'text', via: 'text', idp_issuer: 'text', idp_subject: 'text' }, key: ['token_id'] },
  ],
  relevant: (e) => AFFECTING.has(e.type),
  // The acting token's link (the rest of its chain is read link by link, mostly cached: few tokens).
  prefetch: (e) => (e.metadata.tokenId ? [{ table: 'tokens', key: { token_id: e.metadata.tokenId } }] : []),
  async apply(e: RecordedEvent, tx: ApplyTx) {
    const ev = catalogued(e);
    if (ev.type === 'ApiTokenIssued') {
      const signIn = ev.data.signIn;
      tx.put('tokens', { token_id: ev.data.tokenId, principal: e.metadata.principal, issuer_token_id: e.metadata.tokenId ?? null, via: e.metadata.via ?? null, idp_issuer: signIn?.issuer ?? null, idp_subject: signIn?.subject ?? null });
    }
    else if (ev.type === 'MemberAdded') tx.put('members', { principal: ev.data.principal, role: ev.data.role });
    else if (ev.type === 'MemberRoleChanged') tx.put('members', { principal: ev.data.principal, role: ev.data.to });
    else if (ev.type === 'MemberRemoved') tx.delete('members', { principal: ev.data.principal });
    const act = decisionAct(ev);
    if (!act) return;
    const actor = act.actor ?? e.metadata.principal;
    const pr = parseReviewStream(e.streamId);
    let role: string | undefined = ('role' in ev.data ? ev.data.role : undefined) ?? (actor === e.metadata.principal ? e.metadata.role : undefined);
    if (role === undefined) role = ((await tx.get('members', { principal: actor }))?.role as string | undefined) ?? 'unknown';
    const chain: IssuerLink[] = [];
    let acting: Row | undefined;
    for (let id = e.metadata.tokenId; id !== undefined && id !== null && chain.length < MAX_CHAIN; ) {
      const link = await tx.get('tokens', { token_id: id });
      if (!link) break;
      acting ??= link;
      chain.push({ principal: String(link.principal), tokenId: (link.issuer_token_id as string | null) ?? null, via: (link.via as string | null) ?? null });
      id = (link.issuer_token_id as string | null) ?? undefined;
    }
    tx.put('rows', {
      position: e.globalPosition,
      time: e.metadata.occurredAt,
      action: act.action,
      actor,
      role,
      target: act.target,
      repo_id: pr?.repoId ?? null,
      pr_number: pr?.prNumber ?? null,
      detail: act.detail ?? null,
      event_id: e.eventId,
      via: e.metadata.via ?? null,
      token_id: e.metadata.tokenId ?? null,
      issuer_chain: JSON.stringify(chain),
      authn: authnOf(e.metadata.principal, e.metadata.tokenId, acting?.idp_issuer),
      idp_issuer: (acting?.idp_issuer as string | null | undefined) ?? null,
      idp_subject: (acting?.idp_subject as string | null | undefined) ?? null,
    });
  },
  bulk: () => new AuditBulk(),
};

const MEMBER_TYPES = ['MemberAdded', 'MemberRoleChanged', 'MemberRemoved', 'ApiTokenIssued'];

/**
 * The set-based rebuild of `audit` (src/readmodels/stored/bulk.ts): the rows are one `INSERT … SELECT` per chunk
 * of the log. What the statement cannot see — the members' roles and the tokens' issuer chains as of
 * each act — comes from the few member and token events, folded here (and by `apply`, which writes the
 * members and tokens tables): per chunk, two temporary tables hold each principal's role and each
 * token's chain (`JSON.stringify`, as `apply` writes it) from the chunk's start and from each change
 * in it, and the statement looks up the last one before the act.
 */
class AuditBulk implements BulkBuilder {
  readonly js = { types: MEMBER_TYPES };
  readonly sqlTypes = [...ACT_TYPES];
  readonly sqlTables = ['rows'];
  private readonly members = new Map<string, string | null>();
  private readonly tokens = new Map<string, { principal: string; issuer: string | null; via: string | null }>();
  private readonly chains = new Map<string, string>();
  /** tokenId → the identity whose sign-in minted it (null: not a sign-in token), as of the chunk's start. */
  private readonly signIns = new Map<string, { issuer: string; subject: string } | null>();

  /** Whether the chain of `tokenId` (chainOf's walk, link by link) looks up the link of `through`. */
  private walks(tokenId: string, through: string): boolean {
    let n = 0;
    for (let id: string | null | undefined = tokenId; id !== undefined && id !== null && n < MAX_CHAIN; n++) {
      if (id === through) return true;
      const link = this.tokens.get(id);
      if (!link) return false;
      id = link.issuer;
    }
    return false;
  }

  private chainOf(tokenId: string): string {
    const chain: IssuerLink[] = [];
    for (let id: string | undefined = tokenId; id !== undefined && id !== null && chain.length < MAX_CHAIN; ) {
      const link = this.tokens.get(id);
      if (!link) break;
      chain.push({ principal: String(link.principal), tokenId: link.issuer ?? null, via: link.via ?? null });
      id = link.issuer ?? undefined;
    }
    return JSON.stringify(chain);
  }

  statements(d: BulkDialect, from: number, to: number, js: readonly RecordedEvent[]): BulkStatements {
    const roles: unknown[][] = [...this.members].map(([p, r]) => [p, from, r]);
    const chains: unknown[][] = [...this.chains].map(([t, c]) => [t, from, c]);
    const signIns: unknown[][] = [...this.signIns].map(([t, v]) => [t, from, v?.issuer ?? null, v?.subject ?? null]);
    for (const e of js) {
      const ev = catalogued(e);
      const p = e.globalPosition;
      const role = (principal: string, r: string | null): void => {
        roles.push([principal, p, r]);
        this.members.set(principal, r);
      };
      if (ev.type === 'MemberAdded') role(ev.data.principal, ev.data.role);
      else if (ev.type === 'MemberRoleChanged') role(ev.data.principal, ev.data.to);
      else if (ev.type === 'MemberRemoved') role(ev.data.principal, null);
      else if (ev.type === 'ApiTokenIssued') {
        const issued = ev.data.tokenId;
        // Like the tokens row `apply` overwrites: a token id issued again takes its latest issue's identity.
        const signIn = ev.data.signIn ? { issuer: ev.data.signIn.issuer, subject: ev.data.signIn.subject } : null;
        if (signIn || this.signIns.has(issued)) {
          this.signIns.set(issued, signIn);
          signIns.push([issued, p, signIn?.issuer ?? null, signIn?.subject ?? null]);
        }
        this.tokens.set(issued, { principal: e.metadata.principal, issuer: e.metadata.tokenId ?? null, via: e.metadata.via ?? null });
        // A new link changes the chain of every token whose walk looks that link up (the token itself, those
        // issued through it); the others' chains are unchanged and not written again (JSON.stringify of every
        // token's chain per issuance was ~100 ms of a 200k-event build's main thread).
        for (const id of this.tokens.keys()) {
          if (!this.walks(id, issued)) continue;
          const c = this.chainOf(id);
          if (this.chains.get(id) === c) continue;
          chains.push([id, p, c]);
          this.chains.set(id, c);
        }
      }
    }
    const src = d.src([...ACT_TYPES], from, to);
    const str = (f: string): string => d.str('e', [f]);
    const byType = (cases: Record<string, string>): string => `CASE e.type ${Object.entries(cases).map(([t, v]) => `WHEN '${t}' THEN ${v} `).join('')}END`;
    // decisionAct (src/readmodels/queries/audit.ts), case by case.
    const action = byType({ ReviewNodeConfirmed: "'confirm'", ReviewNodeDismissed: "'dismiss'", ReviewNodeResolved: "'resolve'", ContractChangeDecided: "'contract_decision'", VisualChangeApproved: "'visual_approval'", ReviewFinalized: "'finalize'", PublishRequested: "'publish_request'", PublishApproved: "'publish_approval'", ReviewPublished: "'publish'" });
    const target = byType({
      ReviewNodeConfirmed: str('nodeId'),
      ReviewNodeDismissed: str('nodeId'),
      ReviewNodeResolved: str('nodeId'),
      ContractChangeDecided: str('changeId'),
      VisualChangeApproved: str('snapshotId'),
      ReviewFinalized: `'round ' || ${d.num('e', ['round'])}`,
      PublishRequested: str('requestId'),
      PublishApproved: str('requestId'),
      ReviewPublished: str('forgeReviewId'),
    });
    const detail = byType({
      ReviewNodeConfirmed: str('note'),
      ReviewNodeDismissed: str('reason'),
      ReviewNodeResolved: str('reason'),
      ContractChangeDecided: `CASE WHEN coalesce(${str('note')}, '') <> '' THEN ${str('decision')} || ': ' || ${str('note')} ELSE ${str('decision')} END`,
      VisualChangeApproved: str('approvalKey'),
      ReviewFinalized: `${str('verdict')} || ' (' || ${d.num('e', ['confidence'])} || ') under rules ' || ${str('rulesVersion')}`,
      PublishRequested: str('selection'),
      PublishApproved: 'NULL',
      ReviewPublished: `${str('event')} || CASE WHEN ${d.isTrue('e', ['fallbackUsed'])} THEN ' (fallback: folded into the body)' ELSE '' END`,
    });
    const actor = `coalesce(CASE WHEN e.type = 'ReviewPublished' THEN ${str('publishedBy')} ELSE ${str('by')} END, ${d.meta('e', 'principal')})`;
    const inner =
      `SELECT e.position, e.event_id, ${d.meta('e', 'occurredAt')} AS time, ${action} AS action, ${actor} AS actor, ${str('role')} AS drole, ${d.meta('e', 'principal')} AS principal, ${d.meta('e', 'role')} AS mrole, ` +
      `${target} AS target, ${d.reviewRepo('e')} AS repo_id, ${d.reviewPr('e')} AS pr_number, ${detail} AS detail, ${d.meta('e', 'via')} AS via, ${d.meta('e', 'tokenId')} AS token_id FROM ${src.sql} e`;
    // The acting token's sign-in identity as of the act (the last issue of its id before it).
    const signInOf = (col: string): string => `(SELECT s.${col} FROM bulk_signins s WHERE s.token_id = i.token_id AND s.from_pos < i.position ORDER BY s.from_pos DESC LIMIT 1)`;
    const select =
      `SELECT x.position, x.time, x.action, x.actor, coalesce(x.drole, CASE WHEN x.actor = x.principal THEN x.mrole END, (SELECT r.role FROM bulk_roles r WHERE r.principal = x.actor AND r.from_pos < x.position ORDER BY r.from_pos DESC LIMIT 1), 'unknown') AS role, ` +
      `x.target, x.repo_id, x.pr_number, x.detail, x.event_id, x.via, x.token_id, coalesce((SELECT c.chain FROM bulk_chains c WHERE c.token_id = x.token_id AND c.from_pos < x.position ORDER BY c.from_pos DESC LIMIT 1), '[]') AS issuer_chain, ` +
      // authnOf (src/readmodels/queries/audit.ts) in SQL: local without a token, sign-in for a sign-in token, else by the acting principal.
      `CASE WHEN x.token_id IS NULL THEN 'local' WHEN x.idp_issuer IS NOT NULL THEN 'sign-in' WHEN x.principal LIKE 'user:%' THEN 'admin-provisioned' ELSE 'agent-token' END AS authn, x.idp_issuer, x.idp_subject ` +
      `FROM (SELECT i.*, ${signInOf('issuer')} AS idp_issuer, ${signInOf('subject')} AS idp_subject FROM (${inner}) i) x`;
    const cols = Object.keys(auditReadModel.tables[0].columns);
    return {
      prepare: [],
      apply: [
        ...d.temp('bulk_roles', { principal: 'text', from_pos: 'int', role: 'text' }, ['principal', 'from_pos'], roles),
        ...d.temp('bulk_chains', { token_id: 'text', from_pos: 'int', chain: 'text' }, ['token_id', 'from_pos'], chains),
        ...d.temp('bulk_signins', { token_id: 'text', from_pos: 'int', issuer: 'text', subject: 'text' }, ['token_id', 'from_pos'], signIns),
        { sql: d.insert('rows', cols, ['position'], select, 'unique'), params: [d.workspaceId, ...src.params] },
      ],
    };
  }
}

const toAuditRow = (r: Row): AuditRow => ({
  position: Number(r.position),
  time: String(r.time),
  action: r.action as AuditAction,
  actor: String(r.actor),
  role: String(r.role),
  target: String(r.target),
  repoId: (r.repo_id as string | null) ?? null,
  prNumber: r.pr_number === null || r.pr_number === undefined ? null : Number(r.pr_number),
  detail: (r.detail as string | null) ?? null,
  eventId: String(r.event_id),
  via: (r.via as string | null) ?? null,
  tokenId: (r.token_id as string | null) ?? null,
  issuerChain: JSON.parse(String(r.issuer_chain)) as IssuerLink[],
  authn: r.authn as AuthnKind,
  signIn: r.idp_issuer === null || r.idp_issuer === undefined ? null : { issuer: String(r.idp_issuer), subject: String(r.idp_subject) },
});

/**
 * The index that serves a filter (SQLite names it; PostgreSQL's planner, with real statistics, picks the
 * same ones). An equality filter's index yields its rows in position order, so a page is read along it
 * and stops at `limit`; a time range is read through (action, time) or (time) — its rows in range, their
 * positions sorted from the index alone.
 */
export function auditIndexFor(f: AuditInput): number | null {
  const timed = f.since !== undefined || f.until !== undefined;
  if (f.repoId !== undefined && f.prNumber !== undefined) return AUDIT_IX.repoPr;
  if (f.prNumber !== undefined) return AUDIT_IX.pr;
  if (f.actor !== undefined) return AUDIT_IX.actor;
  if (f.action !== undefined) return timed ? AUDIT_IX.actionTime : AUDIT_IX.action;
  if (timed) return AUDIT_IX.time;
  return null;
}

/** Rows the audit answers have read from the model (each page reads at most `limit + 1`); the watch tests watch it. */
export const auditRowsRead = { rows: 0, statements: 0 };

/**
 * `audit` from the rows: the same filters, order and page (`cursor`, `limit`) as auditView, bounded by
 * position for as-of reads. A page is two steps: the positions of the page from one index (covering:
 * no row is read to filter or sort), then those rows by primary key — `limit + 1` of them, the last
 * only telling whether a next page exists. So a time range costs its index entries, not its rows
 * (measured at 1M events: one action over the last day 43 → 10 ms).
 */
export async function auditFromRows(storage: ReadModelStorage, slot: Slot, f: AuditInput, until: number): Promise<AuditPage> {
  return auditPage(f, await readAuditRows(storage, slot, f, until));
}

/**
 * The page as of `until` from the page as of `from`: reads only the rows of (from, until] (at most
 * `limit + 1`, none when the page cannot change), not the whole page again — what a watch does per event.
 */
export async function advanceAuditFromRows(storage: ReadModelStorage, slot: Slot, f: AuditInput, previous: AuditPage, from: number, until: number): Promise<AuditPage> {
  // In log order a page that is full and continues cannot change: new rows land past its end.
  if (until <= from || (auditOrder(f) === 'asc' && previous.next !== null)) return previous;
  return advanceAuditPage(f, previous, await readAuditRows(storage, slot, f, until, from));
}

async function readAuditRows(storage: ReadModelStorage, slot: Slot, f: AuditInput, until: number, after?: number): Promise<AuditRow[]> {
  const { sql, params } = auditSql(storage, slot, f, until, after);
  const rows = await storage.query(sql, params);
  auditRowsRead.rows += rows.length;
  auditRowsRead.statements++;
  return rows.map(toAuditRow);
}

/**
 * The statement behind auditFromRows (also EXPLAINed by the tests: each filter's plan names its index):
 * the first `limit + 1` rows in order; `after`: only rows past that position (a watch's new rows).
 */
export function auditSql(storage: Pick<ReadModelStorage, 'kind' | 'workspaceId'>, slot: Slot, f: AuditInput, until: number, after?: number): { sql: string; params: unknown[] } {
  const where = ['workspace_id = ?', 'position <= ?'];
  const params: unknown[] = [storage.workspaceId, until];
  const add = (sql: string, v: unknown): void => {
    where.push(sql);
    params.push(v);
  };
  const desc = auditOrder(f) === 'desc';
  const from = auditCursorPosition(f);
  if (f.actor !== undefined) add('actor = ?', f.actor);
  if (f.action !== undefined) add('action = ?', f.action);
  if (f.repoId !== undefined) add('repo_id = ?', f.repoId);
  if (f.prNumber !== undefined) add('pr_number = ?', f.prNumber);
  if (f.since !== undefined) add('time >= ?', f.since);
  if (f.until !== undefined) add('time <= ?', f.until);
  if (f.authn !== undefined) add('authn = ?', f.authn);
  if (f.subject !== undefined) add('idp_subject = ?', f.subject);
  if (from !== undefined) add(desc ? 'position < ?' : 'position > ?', from);
  if (after !== undefined) add('position > ?', after);
  const dir = desc ? ' DESC' : '';
  const order = `position${dir}`;
  // PostgreSQL: a time range without an actor or PR sorts its positions (`position + 0` matches no
  // index order), so the planner reads the range through (time) or (action, time) instead of walking the
  // primary key backwards until `limit` rows fall in the range (measured at 10k rows, an early hour
  // newest first: 7.4 → 0.5 ms; at 1M rows the walk would be a hundred times longer).
  const sortRange = storage.kind === 'postgres' && (f.since !== undefined || f.until !== undefined) && f.actor === undefined && f.prNumber === undefined;
  const innerOrder = sortRange ? `position + 0${dir}` : order;
  const table = tableName(slot, 'rows');
  // SQLite: the index is named, not left to the planner, whose choice moved with the statistics (a
  // LIMITed page read along the primary key, scanning every row up to the bound).
  const ix = storage.kind === 'sqlite' ? auditIndexFor(f) : null;
  const from_ = `${table}${ix !== null ? ` INDEXED BY ${table}_ix${ix}` : ''}`;
  const sql = `SELECT * FROM ${table} WHERE workspace_id = ? AND position IN (SELECT position FROM ${from_} WHERE ${where.join(' AND ')} ORDER BY ${innerOrder} LIMIT ?) ORDER BY ${order}`;
  params.unshift(storage.workspaceId);
  params.push(auditLimit(f) + 1);
  return { sql, params };
}
