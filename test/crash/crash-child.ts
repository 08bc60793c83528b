// Appends in a tight loop from 16 concurrent producers (so group commits share transactions) and prints
// one line per ACKNOWLEDGED append: "ack <eventId> <eventId> ...". The parent SIGKILLs it at random.
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { newUuidV7 } from '../../src/events/ids';

const [file, sync] = process.argv.slice(2);
const store = new SqliteEventStore({ file, workspaceId: 'crash', synchronous: (sync as 'FULL') ?? 'FULL' });
let n = 0;
async function producer(p: number) {
  for (;;) {
    const size = 1 + (n++ % 4);
    const events = Array.from({ length: size }, () => ({
      eventId: newUuidV7(),
      type: 'SuppressionFactRecorded',
      schemaVersion: 1,
      data: { fingerprint: `fp-${p}`, nodeId: `n-${n}`, reason: 'x'.repeat(200 + (n % 300)), confidence: 'low' },
      metadata: { principal: 'agent:crash' as const, workspaceId: 'crash', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' },
    }));
    await store.append(`s-${p}`, 'any', events);
    process.stdout.write(`ack ${events.map((e) => e.eventId).join(' ')}\n`);
  }
}
for (let p = 0; p < 16; p++) void producer(p);
