import type { Command } from 'commander';
import { withLedger } from '../context';
import { DomainError } from '../../domain-error';
import type { RebuildProgress } from '../../readmodels/stored/host';
import { readModelHost } from '../../readmodels/stored/registry';

/** A progress bar on stderr: redrawn in place on a terminal, a line every second otherwise (logs). */
function progressLine(): { update(p: RebuildProgress): void; done(): void } {
  const tty = process.stderr.isTTY;
  let lastAt = 0;
  let last = '';
  return {
    update(p) {
      const width = 30;
      const ratio = p.head ? Math.min(1, p.position / p.head) : 1;
      const filled = Math.round(ratio * width);
      const rate = p.elapsedMs > 0 ? Math.round((p.events / p.elapsedMs) * 1000) : 0;
      last = `rebuild ${p.name} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${p.position}/${p.head} events · ${rate} events/s`;
      const now = Date.now();
      if (tty) process.stderr.write(`\r${last}`);
      else if (now - lastAt >= 1000) {
        lastAt = now;
        process.stderr.write(`${last}\n`);
      }
    },
    done() {
      if (tty && last) process.stderr.write('\n');
    },
  };
}

export async function rebuild(opts: { workspace: string; name?: string; json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const ws = await ledger.workspace(opts.workspace);
    const host = readModelHost(ws);
    if (!host) throw new DomainError('read_models_unsupported', `store "${ws.store.adapter}": has no read-model storage`);
    const names = opts.name ? [opts.name] : host.names;
    for (const n of names) if (!host.names.includes(n)) throw new DomainError('unknown_read_model', `--name: "${n}" is not a read model (${host.names.join(', ')})`);
    // Side by side: every page of the log is read once for all the models being rebuilt.
    const started = Date.now();
    const bar = progressLine();
    const slots = await host.rebuildAll(names, (p) => bar.update(p));
    bar.done();
    const ms = Date.now() - started;
    for (const slot of slots) {
      const name = slot.name;
      const eventsPerSecond = ms > 0 ? Math.round((slot.position / ms) * 1000) : slot.position;
      if (opts.json) process.stdout.write(`${JSON.stringify({ name, version: slot.version, generation: slot.generation, position: slot.position, ms, eventsPerSecond })}\n`);
      else process.stdout.write(`rebuilt ${name} v${slot.version} (generation ${slot.generation}): ${slot.position} events in ${(ms / 1000).toFixed(1)} s (${eventsPerSecond} events/s)\n`);
    }
  });
}

export async function status(opts: { workspace: string; json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const ws = await ledger.workspace(opts.workspace);
    const host = readModelHost(ws);
    if (!host) throw new DomainError('read_models_unsupported', `store "${ws.store.adapter}": has no read-model storage`);
    const head = await ws.store.headPosition();
    const rows = [];
    for (const name of host.names) {
      for (const s of await host.storage.slots(name)) rows.push({ name, version: s.version, generation: s.generation, position: s.position, head, state: s.ready ? 'ready' : 'building', codeVersion: host.model(name).version });
      if (!rows.some((r) => r.name === name)) rows.push({ name, version: null, generation: null, position: 0, head, state: 'not built', codeVersion: host.model(name).version });
    }
    if (opts.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
    else for (const r of rows) process.stdout.write(`${r.name}  v${r.version ?? '-'} g${r.generation ?? '-'}  ${r.state}  ${r.position}/${r.head}${r.version !== null && r.version !== r.codeVersion ? `  (this build runs v${r.codeVersion})` : ''}\n`);
  });
}
