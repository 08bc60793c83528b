import type { IncomingMessage, ServerResponse } from 'node:http';
import { LIMITS } from './limits';

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
      req.rawBody = Buffer.concat(chunks);
      // Mark the body consumed so the framework's parsers leave it alone.
      req.body = undefined;
      (req as unknown as { _body: boolean })._body = true;
      next();
    });
    req.on('error', (err) => {
      if (!aborted) next(err);
    });
  };
}

function tooLarge(res: ServerResponse, limit: number): void {
  res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32013, message: `request body exceeds ${limit} bytes`, data: { code: 'payload_too_large' } } }));
}
