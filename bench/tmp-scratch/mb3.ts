import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as crypto from 'node:crypto';
import { newUuidV7 } from '/work/wt/s27-audit/src/events/ids';
const PAYLOAD = JSON.stringify({ fingerprint: 'f'.repeat(40), nodeId: 'node-0000000000', reason: 'r'.repeat(180), confidence: 'low' });
const META = JSON.stringify({ principal: 'agent:bench', workspaceId: 'bench', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' });
const hex = crypto.randomBytes(32).toString('hex'); const bin = crypto.randomBytes(32);
const variants = ['none','hex2','hex1','blob2','blob1'] as const;
for (const sync of ['NORMAL','FULL']) for (let round=0; round<2; round++) for (const v of variants) {
  const f = `/tmp/mb3-${v}.db`; for (const s of ['','-wal','-shm']) fs.rmSync(f+s,{force:true});
  const db = new Database(f); db.pragma('journal_mode = WAL'); db.pragma('synchronous = '+sync); db.pragma('wal_autocheckpoint = 4000');
  const htype = v.startsWith('hex') ? 'TEXT' : 'BLOB';
  db.exec(`CREATE TABLE events (global_position INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, stream_id TEXT NOT NULL, stream_revision INTEGER NOT NULL, type TEXT NOT NULL, schema_version INTEGER NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, prev_hash ${htype}, hash ${htype}, UNIQUE (stream_id, stream_revision))`);
  const ins = v==='none' ? db.prepare('INSERT INTO events (event_id, stream_id, stream_revision, type, schema_version, data, metadata) VALUES (?,?,?,?,?,?,?)')
    : v.endsWith('2') ? db.prepare('INSERT INTO events (event_id, stream_id, stream_revision, type, schema_version, data, metadata, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?)')
    : db.prepare('INSERT INTO events (event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash) VALUES (?,?,?,?,?,?,?,?)');
  const h = v.startsWith('hex') ? hex : bin;
  const N = 60000, B = 50; const revs = new Map<string,number>();
  const tx = db.transaction((base:number)=>{ for(let k=0;k<B;k++){ const s='p-'+((base+k)%1000); const r=(revs.get(s)??-1)+1; revs.set(s,r);
    if (v==='none') ins.run(newUuidV7(), s, r, 'SuppressionFactRecorded', 1, PAYLOAD, META);
    else if (v.endsWith('2')) ins.run(newUuidV7(), s, r, 'SuppressionFactRecorded', 1, PAYLOAD, META, h, h);
    else ins.run(newUuidV7(), s, r, 'SuppressionFactRecorded', 1, PAYLOAD, META, h); } });
  const t = process.cpuUsage(); const w = performance.now();
  for (let i=0;i<N;i+=B) tx.immediate(i);
  const u = process.cpuUsage(t); const wall = performance.now()-w;
  console.log(sync, v, 'cpu µs/ev', ((u.user+u.system)/N).toFixed(2), 'wall µs/ev', (wall*1000/N).toFixed(2), 'size KB', Math.round(fs.statSync(f).size/1024 + (fs.existsSync(f+'-wal')?fs.statSync(f+'-wal').size/1024:0)));
  db.close();
}
