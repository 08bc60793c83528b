import { SlotMap } from '../../src/slots';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig, LedgerConfig } from '../../src/config';
import { Ledger, LedgerOptions } from '../../src/ledger';
import { newUuidV7 } from '../../src/events/ids';
import { collect } from '../../src/events/store/port';
import type { RecordedEvent } from '../../src/events/envelope';
import { attachReadModels } from '../../src/readmodels/stored/registry';

export const OWNER = { principal: 'user:owner' as const, role: 'owner' as const };

/** A Ledger on a fresh temporary data dir (real SQLite files), optionally with a workspace created. */
export async function ledgerFixture(opts: { workspaceId?: string; config?: Partial<LedgerConfig>; options?: LedgerOptions } = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-ledger-'));
  const options = { onOpenWorkspace: attachReadModels, ...opts.options };
  const ledger = new Ledger(loadConfig({ dataDir, ...opts.config }, {}), options);
  if (opts.workspaceId) await ledger.createWorkspace({ ...OWNER, idempotencyKey: newUuidV7() }, { workspaceId: opts.workspaceId });
  return {
    dataDir,
    ledger,
    async events(workspaceId = opts.workspaceId!): Promise<RecordedEvent[]> {
      return collect((await ledger.workspace(workspaceId)).store.readAll());
    },
    async reopen(): Promise<Ledger> {
      await ledger.close();
      return new Ledger(loadConfig({ dataDir, ...opts.config }, {}), options);
    },
    async cleanup(l: Ledger = ledger) {
      await l.close().catch(() => undefined);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A bare workspace handle (no Ledger) with the read side attached, as the entry points attach it. */
export function withReadModels<T extends { id: string; dir: string; store: unknown; cache: SlotMap }>(ws: T): T {
  attachReadModels(ws as never);
  return ws;
}
