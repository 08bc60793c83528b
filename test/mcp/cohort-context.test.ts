import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startServer, RunningServer } from '../../src/server/bootstrap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tokenFor } from '../rpc/support';
import { AGENT, contextFixture, REPO } from '../context/support';

describe('MCP get_cohort_context', () => {
  let f: Awaited<ReturnType<typeof contextFixture>>;
  let server: RunningServer;
  beforeAll(async () => {
    f = await contextFixture();
    await f.run('requestReview', { repoId: REPO, prNumber: 2, baseSha: f.base, headSha: f.head2 }, AGENT);
    await f.run('computeReview', { repoId: REPO, prNumber: 2 }, AGENT);
    // A server process on the same data dir, as an agent's harness would reach it.
    server = await startServer({ dataDir: f.lf.dataDir, port: 0 });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await f?.cleanup();
  });

  it('hands an agent the same context pack as review_studio.cohortContext, with the budget applied', async () => {
    const ownerToken = fs.readFileSync(path.join(f.lf.dataDir, 'owner-token'), 'utf8').trim();
    const token = await tokenFor(server.url, ownerToken, f.ws, 'agent:claude', 'member');
    const client = new Client({ name: 'context-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'get_cohort_context');
    expect(tool).toBeDefined();
    expect(tool!.inputSchema.required).toEqual(expect.arrayContaining(['repoId', 'prNumber', 'cohortKey']));

    const cohorts = await f.query<{ cohorts: Array<{ key: string; files: Array<{ path: string } | string> }> }>('cohorts', { repoId: REPO, prNumber: 2 }).catch(() => null);
    const direct = await f.query<{ cohortKey: string }>('cohortContext', { repoId: REPO, prNumber: 2, cohortKey: await firstCohortKey(f, cohorts), budgetBytes: 2048 });
    const res = (await client.callTool({ name: 'get_cohort_context', arguments: { repoId: REPO, prNumber: 2, cohortKey: direct.cohortKey, budgetBytes: 2048 } })) as any;
    expect(res.isError).toBeFalsy();
    const viaMcp = res.structuredContent;
    expect(viaMcp.value).toEqual(direct);
    expect(typeof viaMcp.position).toBe('number');

    const bad = (await client.callTool({ name: 'get_cohort_context', arguments: { repoId: REPO, prNumber: 2, cohortKey: 'c-00000000deadbeef' } })) as any;
    expect(bad.isError).toBe(true);
    expect(bad.content[0].text).toMatch(/cohort_not_found/);
    await client.close();
  }, 60_000);
});

async function firstCohortKey(f: Awaited<ReturnType<typeof contextFixture>>, cohorts: { cohorts: Array<{ key: string }> } | null): Promise<string> {
  if (cohorts?.cohorts?.length) return cohorts.cohorts[0].key;
  // Without a cohorts query, read the latest ReviewComputed from the PR stream.
  const events = await f.lf.events(f.ws);
  const computed = events.filter((e) => e.type === 'ReviewComputed').pop()!;
  return (computed.data as { cohorts: Array<{ key: string }> }).cohorts[0].key;
}
