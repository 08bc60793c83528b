import { Controller, Get, Inject, Module, Param, Query, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readDiffImage } from '../axes/visual';
import { checkAccess } from '../commands/kernel';
import { loadPrState } from '../review/pr-state';
import { reviewStreamOf } from '../events/streams';
import { loadRepoState, openRegisteredRepo } from '../compute/streams';
import { DomainError } from '../domain-error';
import { httpStatusOfCode, type ErrorCode } from '../errors/codes';
import { Ledger } from '../ledger';
import { httpStatusOf, toRpcError } from '../rpc/errors';
import { authenticate, bearerFrom, type Caller } from '../security/tokens';
import { readCookie, SESSION_COOKIE } from '../security/session-cookie';
import { readAsset, reviewPageHtml } from './assets';
import { snapshotImage } from './snapshot-images';
import { FaviconController } from './favicon.controller';
import { authnOf } from '../readmodels/queries/audit';
import { FRAME_ANCESTORS_NONE } from '../security/frame-headers';

const PNG_HEADERS = { 'content-type': 'image/png', 'cache-control': 'private, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' };

/**
 * The Review page (SPEC §0 "review UIs"): an HTML shell and its bundle, served without data; everything
 * the page shows comes from watch* subscriptions made with the caller's own token. Images are data too,
 * so they are served only to an authenticated caller (Authorization header; the page fetches them).
 */
@Controller()
export class ReviewPageController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  @Get('/workspaces/:workspaceId/repos/:repoId/prs/:number')
  page(@Param('workspaceId') workspaceId: string, @Param('repoId') repoId: string, @Param('number') prNumber: string, @Res() res: ServerResponse): void {
    if (!/^[a-z0-9-]{1,64}$/.test(workspaceId) || !/^[A-Za-z0-9._-]{1,200}$/.test(repoId) || !/^[1-9][0-9]{0,9}$/.test(prNumber)) {
      return sendJson(res, httpStatusOfCode('invalid_target'), { error: { code: 'invalid_target' satisfies ErrorCode, message: 'workspaceId, repoId and number must name a PR (e.g. /workspaces/default/repos/web/prs/42)' } });
    }
    const html = reviewPageHtml({ workspaceId, repoId, prNumber: Number(prNumber) });
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': `default-src 'self'; img-src 'self' blob: data:; connect-src 'self' ws: wss:; style-src 'self'; script-src 'self'; ${FRAME_ANCESTORS_NONE}`, 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' });
    res.end(html);
  }

  @Get('/assets/review/:file')
  asset(@Param('file') file: string, @Res() res: ServerResponse): void {
    const asset = readAsset(file);
    if (!asset) return sendJson(res, httpStatusOfCode('asset_not_found'), { error: { code: 'asset_not_found' satisfies ErrorCode, message: `asset: "${file.slice(0, 100)}" is not part of the review page (built by \`npm run build\`)` } });
    res.writeHead(200, { 'content-type': asset.contentType, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
    res.end(asset.body);
  }

  /** Who the bearer is, so the page can offer only the actions the caller's role permits. */
  @Get('/workspaces/:workspaceId/review-page/me')
  async me(@Param('workspaceId') workspaceId: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    try {
      const caller = await this.caller(workspaceId, req);
      // How the caller is authenticated, as the audit will record its acts (sign-in / admin-provisioned / agent-token).
      sendJson(res, 200, { workspaceId, principal: caller.principal, role: caller.role, authn: authnOf(caller.principal, caller.tokenId, caller.signIn), signIn: caller.signIn ?? null });
    } catch (err) {
      sendError(res, err);
    }
  }

  /** A stored diff image (content-addressed), SPEC §12 "diff images are … served to clients". */
  @Get('/workspaces/:workspaceId/visual/:file')
  async diffImage(@Param('workspaceId') workspaceId: string, @Param('file') file: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    try {
      const caller = await this.caller(workspaceId, req);
      checkAccess({ name: 'visual image', access: { minRole: 'viewer' } }, caller.principal, caller.role);
      const hash = /^([0-9a-f]{64})\.png$/.exec(file)?.[1];
      const png = hash ? await readDiffImage(caller.workspace.dir, hash) : null;
      if (!png) throw new DomainError('image_not_found', `file: no stored diff image "${file.slice(0, 80)}"`);
      res.writeHead(200, PNG_HEADERS);
      res.end(png);
    } catch (err) {
      sendError(res, err);
    }
  }

  /**
   * The before/after image of one snapshot of the PR's reviewed head. Only committed goldens can be
   * served: their bytes are the PNG blobs at the base and head commits, checked against the hash the
   * computation recorded; rendered and Flutter images were never stored, and the page says so.
   */
  @Get('/workspaces/:workspaceId/repos/:repoId/prs/:number/snapshots/:side')
  async snapshot(
    @Param('workspaceId') workspaceId: string,
    @Param('repoId') repoId: string,
    @Param('number') prNumber: string,
    @Param('side') side: string,
    @Query('id') snapshotId: string,
    @Req() req: IncomingMessage,
    @Res() res: ServerResponse,
  ): Promise<void> {
    try {
      const caller = await this.caller(workspaceId, req);
      checkAccess({ name: 'snapshot image', access: { minRole: 'viewer' } }, caller.principal, caller.role);
      if (side !== 'base' && side !== 'head') throw new DomainError('invalid_side', 'side: must be "base" or "head"');
      const target = { repoId, prNumber: Number(prNumber) };
      if (!Number.isSafeInteger(target.prNumber) || target.prNumber < 1) throw new DomainError('invalid_target', 'number: must be a PR number');
      const pr = await loadPrState(caller.workspace, reviewStreamOf(target));
      const png = await snapshotImage(pr, side, String(snapshotId ?? ''), async (read) => {
        const repo = await openRegisteredRepo(await loadRepoState(caller.workspace, repoId));
        try {
          return await read(repo);
        } finally {
          repo.close();
        }
      });
      res.writeHead(200, PNG_HEADERS);
      res.end(png);
    } catch (err) {
      sendError(res, err);
    }
  }

  private caller(workspaceId: string, req: IncomingMessage): Promise<Caller> {
    // GETs only (reads): the sign-in session cookie is SameSite=Strict, so another site's page never sends it.
    return authenticate(this.ledger, workspaceId, bearerFrom(req.headers.authorization) ?? readCookie(req, SESSION_COOKIE));
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, err: unknown): void {
  if (!(err instanceof DomainError)) console.error('review page:', err);
  if (res.headersSent) return void res.end();
  sendJson(res, httpStatusOf(err), { error: toRpcError(err) });
}

@Module({ controllers: [ReviewPageController, FaviconController] })
export class ReviewPageModule {}
