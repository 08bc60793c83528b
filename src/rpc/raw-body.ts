import type { IncomingMessage, ServerResponse } from 'node:http';
import { LIMITS } from './limits';
import { httpStatusOfCode, rpcCodeOf } from '../errors/codes';

export interface RawBodyRequest extends IncomingMessage {
  rawBody?: Buffer;
  body?: unknown;
}

/**
 * Reads the body of the routes this feature owns as raw bytes, bounded, BEFORE the framework's JSON
 * parser sees it: JSON-RPC must answer malformed JSON with a JSON-RPC parse error (not an HTML 400),
 * and a webhook's HMAC is computed over the exact bytes GitHub sent.
 */
export function rawBodyMiddleware(paths: string[], limit = LIMITS.maxBodyBytes) {
  return (req: RawBodyRequest, res: ServerResponse, next: (err?: unknown) => void): void => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || !paths.includes(pathname)) return next();
    readBoundedBody(req, res, limit, (err) => {
      if (err) return next(err);
      // Mark the body consumed so the framework's parsers leave it alone.
      req.body = undefined;
      (req as unknown as { _body: boolean })._body = true;
      next();
    });
  };
}

/**
 * Reads the whole body into `req.rawBody`, refusing (413, connection closed) past `limit` bytes, declared
 * or actual. `done` runs once the body is complete, or with the stream's error; never after a 413.
 */
export function readBoundedBody(req: RawBodyRequest, res: ServerResponse, limit: number, done: (err?: unknown) => void): void {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return tooLarge(res, limit);
  const chunks: Buffer[] = [];
  let size = 0;
  let aborted = false;
  req.on('data', (c: Buffer) => {
    if (aborted) return;
    size += c.length;
    if (size > limit) {
      aborted = true;
      tooLarge(res, limit);
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on('end', () => {
    if (aborted) return;
    req.rawBody = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    done();
  });
  req.on('error', (err) => {
    if (!aborted) done(err);
  });
}

function tooLarge(res: ServerResponse, limit: number): void {
  res.writeHead(httpStatusOfCode('payload_too_large'), { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: rpcCodeOf('payload_too_large'), message: `request body exceeds ${limit} bytes`, data: { code: 'payload_too_large' } } }));
}
