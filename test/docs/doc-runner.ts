import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** One fenced block of a markdown page: its info string (```sh, ```json mcp-http, …) and its text. */
export interface DocBlock {
  index: number;
  info: string;
  text: string;
  /** 1-based line of the opening fence, for error messages. */
  line: number;
}

export function fencedBlocks(markdown: string): DocBlock[] {
  const out: DocBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    if (i >= lines.length) throw new Error(`unclosed code block at line ${start + 1}`);
    out.push({ index: out.length, info: open[1].trim(), text: body.join('\n'), line: start + 1 });
  }
  return out;
}

/** Every kind of block the runner knows how to execute; anything else fails the doc test. */
export const BLOCK_KINDS = ['sh', 'json mcp-stdio', 'json mcp-http'] as const;

/** The MCP tools an agent harness must see, whichever transport its configuration names. */
export const EXPECTED_TOOLS = ['add_review_node', 'confirm_review_node', 'finalize_review', 'get_review', 'publish_review_to_github'];

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Called after each block with the shell's values of `vars` (e.g. to set up the GitHub stand-in). */
  afterBlock?: (block: DocBlock, vars: Record<string, string>) => void | Promise<void>;
  vars?: string[];
  blockTimeoutMs?: number;
  /**
   * A folder where every call of the page's `check` function is recorded as it runs: one folder per call
   * (`block`, `expr`, `args` NUL-separated, `stdin`; file arguments copied beside them as `file<n>`), so
   * a test can run each check again on its recorded input, or on another, without re-running the page.
   */
  recordChecks?: string;
}

/** One recorded call of the page's `check EXPR [ARGS…]` (see RunOptions.recordChecks). */
export interface RecordedCheck {
  block: number;
  expr: string;
  /** The arguments after the expression, file paths pointing at the recorded copies. */
  args: string[];
  stdin: string;
  dir: string;
}

/**
 * Wraps `check` (once the page defined it) so each call records its expression and its input, then
 * runs the page's own definition on exactly what it recorded.
 */
const RECORD_CHECKS = [
  '__rl_record_check() {',
  '  local dir a i=0 args=() files=0',
  '  dir=$(mktemp -d "$__RL_CHECKS/b$__RL_BLOCK-XXXXXX")',
  '  for a in "${@:2}"; do',
  '    if [ -f "$a" ]; then cp "$a" "$dir/file$i"; args+=("$dir/file$i"); files=1; else args+=("$a"); fi',
  '    i=$((i + 1))',
  '  done',
  '  if [ "$files" = 0 ]; then cat > "$dir/stdin"; else : > "$dir/stdin"; fi',
  '  printf "%s" "$1" > "$dir/expr"',
  '  if [ ${#args[@]} -gt 0 ]; then printf "%s\\0" "${args[@]}" > "$dir/args"; else : > "$dir/args"; fi',
  '  printf "%s" "$__RL_BLOCK" > "$dir/block"',
  '  __rl_doc_check "$1" "${args[@]}" < "$dir/stdin"',
  '}',
  '__rl_wrap_check() {',
  '  if declare -F check > /dev/null && ! declare -f check | grep -q __rl_record_check; then',
  '    eval "$(declare -f check | sed "1s/^check /__rl_doc_check /")"',
  '    check() { __rl_record_check "$@"; }',
  '  fi',
  '}',
].join('\n');

export function readRecordedChecks(folder: string): RecordedCheck[] {
  return fs
    .readdirSync(folder)
    .map((name) => path.join(folder, name))
    .map((dir) => {
      const args = fs.readFileSync(path.join(dir, 'args'), 'utf8');
      return {
        block: Number(fs.readFileSync(path.join(dir, 'block'), 'utf8')),
        expr: fs.readFileSync(path.join(dir, 'expr'), 'utf8'),
        args: args === '' ? [] : args.replace(/\0$/, '').split('\0'),
        stdin: fs.readFileSync(path.join(dir, 'stdin'), 'utf8'),
        dir,
      };
    })
    .sort((a, b) => a.block - b.block || a.dir.localeCompare(b.dir));
}

export class DocBlockFailed extends Error {
  constructor(readonly block: DocBlock, detail: string) {
    super(`block ${block.index} (line ${block.line}, \`\`\`${block.info}) failed: ${detail}`);
  }
}

/**
 * Runs the blocks in order in one bash session (`set -eo pipefail`, so a failing command anywhere in
 * a block ends the run there): variables and functions carry from block to block exactly as they do
 * for a reader pasting them into one terminal. JSON blocks are MCP client configurations: their `$VAR`s
 * are expanded by that same shell, then the runner connects as the configured harness would.
 */
export async function runDocBlocks(blocks: DocBlock[], opts: RunOptions): Promise<void> {
  const shell = spawn('bash', ['--noprofile', '--norc'], { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const session = new ShellSession(shell);
  try {
    session.write('set -eo pipefail; shopt -s inherit_errexit\n');
    if (opts.recordChecks) session.write(`__RL_CHECKS=${shellQuote(opts.recordChecks)}\n${RECORD_CHECKS}\n`);
    for (const block of blocks) {
      if (!(BLOCK_KINDS as readonly string[]).includes(block.info)) throw new DocBlockFailed(block, `unknown block kind "${block.info}" (every block must be executable: ${BLOCK_KINDS.join(', ')})`);
      const vars = opts.vars ?? [];
      const marker = `__RL_DONE_${block.index}__`;
      const trailer = [`printf '%s' ${marker}`, ...vars.map((v) => `printf ' %s' "\${${v}:-}"`), `printf '\\n'`].join('; ');
      let output: string;
      if (block.info === 'sh') {
        // Recording: check is wrapped before the block, and again right after a line that defines it.
        const text = opts.recordChecks ? `__RL_BLOCK=${block.index}; __rl_wrap_check\n${block.text.replace(/^(check\(\) \{.*)$/gm, '$1\n__rl_wrap_check')}` : block.text;
        output = await session.run(`${text}\n${trailer}\n`, marker, block, opts.blockTimeoutMs ?? 180_000);
      } else {
        const heredoc = `cat <<__RL_JSON_${block.index}__\n${block.text}\n__RL_JSON_${block.index}__\n${trailer}\n`;
        output = await session.run(heredoc, marker, block, 30_000);
      }
      const [before, after] = splitAt(output, marker);
      const values = after.trim().split(' ');
      const varValues = Object.fromEntries(vars.map((v, i) => [v, values[i] ?? '']));
      if (block.info !== 'sh') await connectMcp(block, before, opts);
      await opts.afterBlock?.(block, varValues);
    }
  } finally {
    session.kill();
  }
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function splitAt(text: string, marker: string): [string, string] {
  const at = text.lastIndexOf(marker);
  return [text.slice(0, at), text.slice(at + marker.length)];
}

async function connectMcp(block: DocBlock, json: string, opts: RunOptions): Promise<void> {
  let config: any;
  try {
    config = JSON.parse(json);
  } catch (err) {
    throw new DocBlockFailed(block, `not JSON after expansion: ${(err as Error).message}\n${json}`);
  }
  const server = config?.mcpServers?.['review-ledger'];
  if (!server) throw new DocBlockFailed(block, 'no mcpServers["review-ledger"] entry');
  const transport =
    block.info === 'json mcp-stdio'
      ? new StdioClientTransport({ command: server.command, args: server.args ?? [], cwd: opts.cwd, env: { ...(opts.env as Record<string, string>), ...(server.env ?? {}) }, stderr: 'pipe' })
      : new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers ?? {} } });
  if (block.info === 'json mcp-http' && server.type !== 'http') throw new DocBlockFailed(block, `type must be "http", got ${server.type}`);
  const client = new Client({ name: 'review-ledger-doc-test', version: '1.0.0' });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    const missing = EXPECTED_TOOLS.filter((t) => !names.includes(t));
    if (missing.length) throw new DocBlockFailed(block, `the MCP server lists no ${missing.join(', ')} (it lists ${names.join(', ')})`);
    const review = (await client.callTool({ name: 'get_review', arguments: { repoId: 'shop', prNumber: 1 } })) as { isError?: boolean; content?: unknown };
    if (review.isError) throw new DocBlockFailed(block, `get_review failed: ${JSON.stringify(review.content)}`);
  } finally {
    await client.close().catch(() => undefined);
  }
}

class ShellSession {
  private stdout = '';
  private stderr = '';
  private exited: number | null = null;
  private waiters: Array<() => void> = [];

  constructor(private readonly proc: ChildProcess) {
    proc.stdout!.on('data', (c) => {
      this.stdout += c;
      this.wake();
    });
    proc.stderr!.on('data', (c) => {
      this.stderr += c;
    });
    proc.on('exit', (code) => {
      this.exited = code ?? -1;
      this.wake();
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  write(text: string): void {
    this.proc.stdin!.write(text);
  }

  /** Sends a block and resolves with everything it printed, up to and including the marker line. */
  async run(text: string, marker: string, block: DocBlock, timeoutMs: number): Promise<string> {
    this.stdout = '';
    this.stderr = '';
    this.write(text);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.stdout.indexOf(marker);
      if (at >= 0 && this.stdout.indexOf('\n', at) >= 0) return this.stdout;
      if (this.exited !== null) throw new DocBlockFailed(block, `the shell exited with ${this.exited}\n--- stdout ---\n${this.stdout.slice(-4000)}\n--- stderr ---\n${this.stderr.slice(-4000)}`);
      if (Date.now() > deadline) throw new DocBlockFailed(block, `no end after ${timeoutMs} ms\n--- stdout ---\n${this.stdout.slice(-4000)}\n--- stderr ---\n${this.stderr.slice(-4000)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  kill(): void {
    // The shell and whatever a block left running in the background (its own process group).
    try {
      if (this.exited === null && this.proc.pid) process.kill(-this.proc.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
