import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { runDemo, type DemoResult } from '../../demo/run';
import { probeServer } from '../../demo/rpc-client';
import { OWNER_TOKEN_FILE } from '../../security/owner-token';
import { startServer, type RunningServer } from '../../server/bootstrap';
import { configFrom } from '../context';

/** The action of demo.ts, loaded when `demo` runs. */
export async function runDemoCommand(opts: { url?: string; workspace: string; repoRoot?: string; json?: boolean }, cmd: Command): Promise<void> {
  const config = configFrom(cmd);
  const url = (opts.url ?? `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`).replace(/\/+$/, '');
  const log = (line: string) => {
    if (!opts.json) process.stdout.write(`  ${line}\n`);
  };

  let own: RunningServer | null = null;
  let serverUrl = url;
  let dataDir = config.dataDir;
  const health = await probeServer(url);
  if (health) {
    // The running server knows where its data lives; the owner token is a file there.
    if (health.store.dataDir) dataDir = health.store.dataDir;
    if (!opts.json) process.stdout.write(`review-ledger demo: using the server at ${url} (store ${health.store.adapter}${health.store.dataDir ? ` under ${health.store.dataDir}` : ''})\n`);
  } else {
    if (!opts.json) process.stdout.write(`review-ledger demo: no server answers at ${url}; starting one there on ${config.dataDir}\n`);
    const at = new URL(url);
    const listen = { host: at.hostname, port: at.port ? Number(at.port) : 80 };
    own = await startServer({ ...config, ...listen }).catch(async (err: NodeJS.ErrnoException) => {
      // Something else holds the port (it did not answer /health as a ledger): take any free one.
      if (err.code !== 'EADDRINUSE') throw err;
      return startServer({ ...config, host: listen.host, port: 0 });
    });
    serverUrl = own.url;
  }

  const tokenFile = path.join(dataDir, OWNER_TOKEN_FILE);
  if (!fs.existsSync(tokenFile)) {
    await own?.close();
    process.stderr.write(`error [owner_token_missing]: ${tokenFile} does not exist; the demo needs the owner token the server writes on first start (is ${serverUrl} serving another data dir? pass --data-dir)\n`);
    process.exitCode = 1;
    return;
  }
  let result: DemoResult;
  try {
    result = await runDemo({ url: serverUrl, dataDir, ownerToken: fs.readFileSync(tokenFile, 'utf8').trim(), workspaceId: opts.workspace, repoRoot: opts.repoRoot ?? process.env.REVIEW_LEDGER_REPO_ROOT, log });
  } catch (err) {
    await own?.close();
    throw err;
  }
  if (opts.json) process.stdout.write(`${JSON.stringify({ ...result, serverStarted: own !== null })}\n`);
  else printResult(result);

  if (own) {
    const server = own;
    if (!opts.json) process.stdout.write(`\nThis process serves ${server.url} until you press Ctrl-C.\n`);
    const stop = async () => {
      await server.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
}

function printResult(r: DemoResult): void {
  const w = process.stdout;
  w.write(`\nA real review of ${r.repoId}#${r.prNumber} (${r.baseSha.slice(0, 8)}..${r.headSha.slice(0, 8)}): ${r.cohorts} cohort(s), ${r.findings} finding(s), verdict ${r.verdict.verdict} (confidence ${r.verdict.confidence})\n`);
  for (const reason of r.verdict.reasons.slice(0, 3)) w.write(`  · ${reason}\n`);
  w.write(`\nOpen the Review page (signs you in as ${r.signInPrincipal}, a member; the token stays in the URL fragment and the page drops it from the address bar):\n\n  ${r.signInUrl}\n\n`);
  w.write(`Approve the changed snapshot on the page and watch the verdict move; the repository is ${r.repoDir}.\n`);
  w.write(`The link's token belongs to ${r.signInPrincipal} only; revoke it with the revokeToken RPC (docs/tutorial.md walks through the rest).\n`);
}
