import type { ServerResponse } from 'node:http';

/**
 * No page of another site may frame the server (clickjacking: a hidden Review page under a decoy button
 * makes a signed-in reviewer approve). Both headers, since `X-Frame-Options` is what older browsers
 * read and CSP `frame-ancestors` what current ones do. Set on every HTTP response before any handler
 * runs; the Review page's own policy repeats `frame-ancestors 'none'` (review-page.module.ts), since a
 * handler's `writeHead` replaces a header of the same name.
 */
export const FRAME_ANCESTORS_NONE = "frame-ancestors 'none'";

export function denyFraming(res: ServerResponse): void {
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('content-security-policy', FRAME_ANCESTORS_NONE);
}
