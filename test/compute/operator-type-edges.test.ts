// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { closeCheckerThread } from '../../src/codegraph/checker/checker-thread';
import { loadConfig } from '../../src/config';
import type { ReviewComputedData } from '../../src/compute/review';
import { validateEventData } from '../../src/events/catalogue';
import { newUuidV7 } from '../../src/events/ids';
import { Ledger, LOCAL_OPERATOR } from '../../src/ledger';
import { GitFixture } from '../support/git-fixture';

jest.setTimeout(120_000);

const AGENT = { principal: 'agent:claude' as const, role: 'member' as const };

/**
 * The operator config's `typeEdges` (false, or the checker's caps) read from a real config file, through
 * `computeReview` the command on a real ledger and SQLite store, to the ReviewComputed it records.
 */
describe('operator config typeEdges reaches the recorded ReviewComputed through the computeReview command', () => {
  let f: GitFixture;
  let base: string;
  let head: string;
  const dirs: string[] = [];
  const ledgers: Ledger[] = [];

  beforeAll(() => {
    f = new GitFixture('rl-optype-');
    f.git('remote', 'add', 'origin', 'git@github.com:acme/widgets.git');
    f.write('tsconfig.json', '{ "compilerOptions": { "strict": true, "module": "esnext", "moduleResolution": "bundler" } }\n');
    f.write('src/job.ts', 'export class Job {\n  run(): number {\n    return 1;\n  }\n}\nexport function make(): Job {\n  return new Job();\n}\n');
    f.write('src/use.ts', "import { make } from './job';\nexport function go(): number {\n  return make().run();\n}\n");
    base = f.commit('base');
    f.git('checkout', '-q', '-b', 'pr');
    f.write('src/job.ts', 'export class Job {\n  run(): number {\n    return 2;\n  }\n}\nexport function make(): Job {\n  return new Job();\n}\n');
    f.write('src/use.ts', "import { make } from './job';\nexport function go(): number {\n  return make().run() + 1;\n}\n");
    head = f.commit('pr');
  });
  afterAll(async () => {
    for (const l of ledgers) await l.close();
    await closeCheckerThread();
    f.cleanup();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** A fresh data dir whose operator config file holds `operatorConfig` (none: no file), a PR computed by the command. */
  async function recordedWith(operatorConfig: unknown | undefined): Promise<{ data: ReviewComputedData; ledger: Ledger }> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-optype-data-'));
    dirs.push(dataDir);
    let configFile: string | undefined;
    if (operatorConfig !== undefined) {
      configFile = path.join(dataDir, 'operator.json');
      fs.writeFileSync(configFile, JSON.stringify(operatorConfig));
    }
    const ledger = new Ledger(loadConfig({ dataDir, ...(configFile ? { configFile } : {}) }, {}));
    ledgers.push(ledger);
    const ws = 'ws-optype';
    await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: ws });
    const run = (cmd: string, payload: unknown, who: typeof AGENT | typeof LOCAL_OPERATOR = AGENT) => ledger.run(cmd, ws, { ...who, idempotencyKey: newUuidV7() }, payload);
    await run('registerRepo', { repoId: 'widgets', path: f.dir }, LOCAL_OPERATOR);
    await run('requestReview', { repoId: 'widgets', prNumber: 1, baseSha: base, headSha: head });
    const out = await run('computeReview', { repoId: 'widgets', prNumber: 1 });
    expect(out.response.eventIds).toHaveLength(1);
    const handle = await ledger.workspace(ws);
    const computed = [];
    for await (const e of handle.store.readStream('pr-widgets-1')) if (e.type === 'ReviewComputed') computed.push(e.data as ReviewComputedData);
    expect(computed).toHaveLength(1);
    validateEventData('ReviewComputed', computed[0]);
    return { data: computed[0], ledger };
  }

  it('no typeEdges key: the checker walks both changed files (complete, checker edges counted)', async () => {
    const { data, ledger } = await recordedWith(undefined);
    expect(ledger.operator.typeEdges).toEqual({});
    expect(data.typeEdges).toEqual({ status: 'complete', skippedFiles: [] });
    expect(data.metrics.checkerEdges).toBeGreaterThan(0);
  });

  it('typeEdges: false, `off` with its reason, and the digest differs from the default one', async () => {
    const { data, ledger } = await recordedWith({ typeEdges: false });
    expect(ledger.operator.typeEdges).toBe(false);
    expect(data.typeEdges).toEqual({ status: 'off', reason: 'type edges off for this computation: syntax-only edges', skippedFiles: [] });
    expect(data.metrics.checkerEdges ?? 0).toBe(0);
    const plain = await recordedWith(undefined);
    expect(data.inputsDigest).not.toBe(plain.data.inputsDigest);
    // Same cohorts to the byte either way: only the edges' provenance and the typeEdges verdict differ here.
    expect(data.cohorts.map((c) => c.files)).toEqual(plain.data.cohorts.map((c) => c.files));
  });

  it('typeEdges: { maxFiles: 1 }, skipped for the whole review, with the cap in the reason', async () => {
    const { data } = await recordedWith({ typeEdges: { maxFiles: 1 } });
    expect(data.typeEdges).toEqual({ status: 'skipped', reason: "head: type edges skipped: 2 changed TS/JS files, more than the checker's cap of 1", skippedFiles: [] });
    expect(data.metrics.checkerEdges ?? 0).toBe(0);
  });

  it('typeEdges: { maxQueries: 1 }, partial: the files past the cap listed with the reason', async () => {
    const { data } = await recordedWith({ typeEdges: { maxQueries: 1 } });
    expect(data.typeEdges?.status).toBe('partial');
    expect(data.typeEdges?.skippedFiles.length).toBeGreaterThan(0);
    for (const s of data.typeEdges!.skippedFiles) expect(s).toMatchObject({ side: 'head', reason: 'type edges skipped: the checker reached its cap of 1 identifiers' });
  });
});
