import { Controller, Get, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';

/**
 * The ledger's mark as the browser's tab icon (issue 38: every page load logged a 404 for
 * /favicon.ico). SVG served under both names browsers ask for; no data, so no authorization.
 */
const ICON = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f2937"/><path d="M9 9h14M9 16h14M9 23h9" stroke="#a7f3d0" stroke-width="3" stroke-linecap="round"/></svg>',
);

@Controller()
export class FaviconController {
  @Get(['/favicon.ico', '/favicon.svg'])
  icon(@Res() res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' });
    res.end(ICON);
  }
}
