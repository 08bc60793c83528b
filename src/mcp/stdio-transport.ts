import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { assertNoReservedKeys } from '../commands/payload-keys';
import { toRpcError } from '../rpc/errors';

/** One line of stdin, at most (the SDK's own stdio transport allows 10 MiB of buffered input). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/**
 * MCP over stdio, newline-delimited JSON-RPC like the SDK's StdioServerTransport, with one difference:
 * each message is checked on the bytes as sent before the SDK's schemas see it. Those schemas rebuild
 * `params`, and a `"__proto__"` key vanishes in the rebuild — the call then ran as if it had not been
 * sent. Here a message with a reserved key (`__proto__`, `constructor`, `prototype`, at any depth) is
 * answered with an `invalid_payload` error naming the path, like over HTTP and JSON-RPC.
 */
export class GuardedStdioTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** The chunks of the line being read (no newline in them yet), and their total length. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private started = false;

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
  ) {}

  /**
   * Each chunk is searched for a newline once and kept until its line ends: joining the pending bytes
   * and searching them again on every chunk was quadratic in a long line (a 10 MiB line in 4 KiB
   * chunks: 3.4 s of the server's thread).
   */
  private readonly onData = (chunk: Buffer) => {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
      const tail = chunk.subarray(from, nl);
      const bytes = this.pending.length ? Buffer.concat([...this.pending, tail]) : tail;
      this.pending = [];
      this.pendingBytes = 0;
      from = nl + 1;
      if (bytes.length > MAX_LINE_BYTES) {
        this.onerror?.(new Error(`stdin: a line longer than ${MAX_LINE_BYTES} bytes`));
        continue;
      }
      const line = bytes.toString('utf8');
      this.receive(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
    if (from < chunk.length) {
      this.pending.push(chunk.subarray(from));
      this.pendingBytes += chunk.length - from;
    }
    if (this.pendingBytes > MAX_LINE_BYTES) {
      this.pending = [];
      this.pendingBytes = 0;
      this.onerror?.(new Error(`stdin: a line longer than ${MAX_LINE_BYTES} bytes`));
    }
  };
  private readonly onStdinError = (err: Error) => this.onerror?.(err);
  private readonly onEnd = () => void this.close();

  private receive(line: string): void {
    if (line.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      void this.send({ jsonrpc: '2.0', id: null as unknown as string, error: { code: -32700, message: 'Parse error: the line is not valid JSON' } });
      return;
    }
    try {
      assertNoReservedKeys((raw as { params?: unknown } | null)?.params, 'params');
    } catch (err) {
      const id = (raw as { id?: unknown }).id;
      // A notification gets no answer (JSON-RPC), but it is not delivered either.
      if (typeof id === 'string' || typeof id === 'number') void this.send({ jsonrpc: '2.0', id, error: toRpcError(err) as { code: number; message: string } });
      else this.onerror?.(err as Error);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.onerror?.(new Error(`stdin: not a JSON-RPC message: ${parsed.error.message.slice(0, 300)}`));
      return;
    }
    this.onmessage?.(parsed.data);
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('GuardedStdioTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStdinError);
    this.stdin.on('end', this.onEnd);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(serializeMessage(message))) resolve();
      else this.stdout.once('drain', () => resolve());
    });
  }

  async close(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStdinError);
    this.stdin.off('end', this.onEnd);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.pending = [];
    this.pendingBytes = 0;
    this.onclose?.();
  }
}
