// Starts the read models of an existing PostgreSQL workspace whose models have no slot yet, so this process
// builds them (holding each building slot's lease), in small batches; it keeps building until the parent
// kills it (SIGKILL) mid-build. Args: <DATABASE_URL> <schema> <dir>.
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { readModelHost } from '../../src/readmodels/stored/registry';
import { SlotMap } from '../../src/slots';

async function main(): Promise<void> {
  const [url, schema, dir] = process.argv.slice(2);
  const backend = await PostgresBackend.open({ connectionString: url, schema, poolSize: 4 });
  const store = await PostgresEventStore.open({ backend, workspaceId: 'rm' });
  // Folded in JS, 100 events per commit: many commits, so the parent can kill it between two of them.
  const host = readModelHost({ id: 'rm', dir, store, cache: new SlotMap() }, undefined, { batch: 100, bulk: false })!;
  await host.start();
  process.stdout.write('building\n');
  setInterval(() => undefined, 1000);
}
void main();
