import * as crypto from 'node:crypto';
import { chainHash, genesisHash, ChainFields } from '../../src/events/chain';
import { newUuidV7 } from '../../src/events/ids';
const PAYLOAD = { fingerprint: 'f'.repeat(40), nodeId: 'node-0000000000', reason: 'r'.repeat(180), confidence: 'low' };
const META = { principal: 'agent:bench', workspaceId: 'bench', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' };
const N = 200000;
const rows = Array.from({ length: N }, (_, i) => ({ position: i + 1, streamId: 's-' + (i % 1000), streamRevision: i, type: 'SuppressionFactRecorded', schemaVersion: 1, data: JSON.stringify({ ...PAYLOAD, i }), metadata: JSON.stringify(META), eventId: newUuidV7() }));
const H = (crypto as any).hash as (a: string, d: string | Buffer, e: string) => string;
const f = (s: string) => `${Buffer.byteLength(s, 'utf8')}:${s}`;
const variants: Record<string, (p: string, e: ChainFields) => string> = {
  cur: chainHash,
  noByteLen: (p, e) => H('sha256', `${p.length}:${p}${String(e.position).length}:${e.position}${e.streamId.length}:${e.streamId}${String(e.streamRevision).length}:${e.streamRevision}${e.type.length}:${e.type}1:${e.schemaVersion}${e.data.length}:${e.data}${e.metadata.length}:${e.metadata}${e.eventId.length}:${e.eventId}`, 'hex'),
  latin1Buf: (p, e) => H('sha256', Buffer.from(`${p.length}:${p}${String(e.position).length}:${e.position}${e.streamId.length}:${e.streamId}${String(e.streamRevision).length}:${e.streamRevision}${e.type.length}:${e.type}1:${e.schemaVersion}${e.data.length}:${e.data}${e.metadata.length}:${e.metadata}${e.eventId.length}:${e.eventId}`, 'latin1'), 'hex'),
  bufHex: (p, e) => H('sha256', Buffer.from(f(p) + f(String(e.position)) + f(e.streamId) + f(String(e.streamRevision)) + f(e.type) + f(String(e.schemaVersion)) + f(e.data) + f(e.metadata) + f(e.eventId), 'utf8'), 'hex'),
  onlyDataHash: (p, e) => H('sha256', e.data, 'hex'),
  concatOnly: (p, e) => { const s = f(p) + f(String(e.position)) + f(e.streamId) + f(String(e.streamRevision)) + f(e.type) + f(String(e.schemaVersion)) + f(e.data) + f(e.metadata) + f(e.eventId); return s.length > 0 ? p : ''; },
  fullStrHashPre: (p, e) => H('sha256', (e as any).pre, 'hex'),
};
for (const r of rows) (r as any).pre = r.data + r.metadata + r.eventId + r.streamId + r.type + '0123456789012345678901234567890123456789012345678901234567890123';
const g = genesisHash('x'); const ref = chainHash(g, rows[5]);
for (const k of ['noByteLen', 'latin1Buf', 'bufHex']) if (variants[k](g, rows[5]) !== ref) console.log('MISMATCH', k);
for (let r = 0; r < 3; r++) for (const [k, fn] of Object.entries(variants)) { let prev = g; const t = process.cpuUsage(); for (const row of rows) { const h = fn(prev, row); if (k !== 'concatOnly') prev = h; } const u = process.cpuUsage(t); if (r) console.log(k.padEnd(16), ((u.user + u.system) / N).toFixed(3)); }
