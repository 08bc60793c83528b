import { PassThrough } from 'node:stream';
import { GuardedStdioTransport } from '../../src/mcp/stdio-transport';

/** Lines of MCP over stdio as the transport cuts them, whatever the chunking. */
describe('MCP stdio: newline-delimited messages in any chunking', () => {
  const setup = async () => {
    const stdin = new PassThrough();
    const t = new GuardedStdioTransport(stdin, new PassThrough());
    const got: unknown[] = [];
    const errors: string[] = [];
    t.onmessage = (m) => got.push(m);
    t.onerror = (e) => errors.push(e.message);
    await t.start();
    const feed = (chunks: Array<string | Buffer>) => chunks.forEach((c) => stdin.write(c));
    const settle = () => new Promise((r) => setImmediate(r));
    return { t, got, errors, feed, settle };
  };
  const msg = (id: number, pad = '') => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { pad } });

  it('lines split across chunks, several lines in one chunk, CRLF, and a multi-byte character cut between chunks', async () => {
    const { got, errors, feed, settle } = await setup();
    const text = `${msg(1, 'é€😀')}\r\n${msg(2)}\n${msg(3)}\n`;
    const bytes = Buffer.from(text);
    // every 7 bytes: cuts inside characters, inside "\r\n", and puts several lines in no chunk at all
    feed(Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7)));
    feed([`${msg(4)}\n${msg(5)}\n${msg(6)}`]);
    await settle();
    expect(got.map((m) => (m as { id: number }).id)).toEqual([1, 2, 3, 4, 5]);
    expect((got[0] as { params: { pad: string } }).params.pad).toBe('é€😀');
    expect(errors).toEqual([]);
  });

  it('a 10 MiB line in 4 KiB chunks is read once (it used to be joined and searched again per chunk: 3.4 s)', async () => {
    const { got, errors, feed, settle } = await setup();
    const line = Buffer.from(`${msg(7, 'x'.repeat(10 * 1024 * 1024 - 200))}\n`);
    for (let i = 0; i < line.length; i += 4096) feed([line.subarray(i, i + 4096)]);
    await settle();
    expect(errors).toEqual([]);
    expect(got.map((m) => (m as { id: number }).id)).toEqual([7]);
  });

  it('a line past 10 MiB is refused with an error, and the next line is read', async () => {
    const { got, errors, feed, settle } = await setup();
    const big = Buffer.alloc(10 * 1024 * 1024 + 10, 0x61);
    for (let i = 0; i < big.length; i += 65536) feed([big.subarray(i, i + 65536)]);
    feed([`\n${msg(8)}\n`]);
    await settle();
    expect(errors[0]).toBe('stdin: a line longer than 10485760 bytes');
    expect(got.map((m) => (m as { id: number }).id)).toEqual([8]);
  });
});
