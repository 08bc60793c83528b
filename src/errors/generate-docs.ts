/**
 * Renders the error table of docs/rpc.md from the registry (src/errors/codes.ts), so the documented
 * codes can never drift from the ones the server sends. `--check` exits 1 when the file is stale.
 *   node -r ./tools/ts-register.js src/errors/generate-docs.ts [--check]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ERROR_CODES, ErrorCode, ErrorStatus, HTTP_STATUS_BY_STATUS, RPC_CODE_BY_STATUS, rpcCodeOf } from './codes';

export const RPC_DOC = path.join(__dirname, '..', '..', 'docs', 'rpc.md');
export const BEGIN = '<!-- error-codes:begin (generated from src/errors/codes.ts by src/errors/generate-docs.ts; do not edit) -->';
export const END = '<!-- error-codes:end -->';

const KIND_ORDER: ErrorStatus[] = ['invalid', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'too_large', 'unavailable', 'internal'];

const cell = (s: string): string => s.replace(/\|/g, '\\|');

export function renderErrorTable(): string {
  const codes = Object.keys(ERROR_CODES) as ErrorCode[];
  const lines = [
    BEGIN,
    '',
    '| kind | `error.code` | HTTP |',
    '|---|---|---|',
    ...KIND_ORDER.map((k) => `| ${k} | ${RPC_CODE_BY_STATUS[k]} | ${HTTP_STATUS_BY_STATUS[k]} |`),
    '',
    `Every \`error.data.code\` the server sends (${codes.length}):`,
    '',
    '| `error.data.code` | kind | `error.code` | HTTP | meaning |',
    '|---|---|---|---|---|',
  ];
  for (const k of KIND_ORDER) {
    for (const code of codes.filter((c) => ERROR_CODES[c].status === k).sort()) {
      lines.push(`| \`${code}\` | ${k} | ${rpcCodeOf(code)} | ${HTTP_STATUS_BY_STATUS[k]} | ${cell(ERROR_CODES[code].meaning)} |`);
    }
  }
  lines.push('', END);
  return lines.join('\n');
}

/** `doc` with the text between the markers replaced by the current rendering. */
export function withErrorTable(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/rpc.md: the markers ${BEGIN} … ${END} are missing`);
  return doc.slice(0, start) + renderErrorTable() + doc.slice(end + END.length);
}

if (require.main === module) {
  const current = fs.readFileSync(RPC_DOC, 'utf8');
  const next = withErrorTable(current);
  if (process.argv.includes('--check')) {
    if (next !== current) {
      console.error(`${RPC_DOC}: the error table is stale; run node -r ./tools/ts-register.js src/errors/generate-docs.ts`);
      process.exit(1);
    }
  } else {
    fs.writeFileSync(RPC_DOC, next);
    console.log(`wrote ${Object.keys(ERROR_CODES).length} error codes to ${RPC_DOC}`);
  }
}
