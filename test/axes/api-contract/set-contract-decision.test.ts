import { setContractDecision } from '../../../src/commands/set-contract-decision';
import { CommandExecutor } from '../../../src/commands/kernel';
import { newUuidV7 } from '../../../src/events/ids';
import { runQuery } from '../../../src/readmodels/queries/run-query';
import { verdictQuery } from '../../../src/readmodels/queries/verdict';
import type { Role } from '../../../src/events/roles';
import { ALICE, computedEvent, HEAD1, HEAD2, REPO, reviewFixture } from '../../review/support';

const CAROL = { principal: 'user:carol', role: 'member' as Role };
const VIEWER = { principal: 'user:victor', role: 'viewer' as Role };
const STREAM = `pr-${REPO}-7`;

type Fixture = Awaited<ReturnType<typeof reviewFixture>>;
let f: Fixture;
const executor = new CommandExecutor();
const decide = (actor: { principal: string; role: Role }, payload: Record<string, unknown>) =>
  executor.execute(setContractDecision, f.ws, { idempotencyKey: newUuidV7(), principal: actor.principal as never, role: actor.role }, { ...f.pr(), ...payload });
const contractAxis = async () => ((await runQuery(verdictQuery, f.ws, f.pr())).value as { axes: Array<{ axis: string; status: string }> }).axes.find((a) => a.axis === 'apiContract');

const change = (changeId: string, severity: string) => ({
  changeId,
  ruleId: severity === 'breaking' ? 'response-property-removed' : 'response-property-added',
  severity,
  direction: 'response',
  message: `GET /pets: ${changeId}`,
  specPath: 'openapi.yaml',
  operation: 'GET /pets',
  basePointer: '#/components/schemas/Pet',
});
const apiContract = (changes: unknown[]) => ({ status: 'pass', specs: [{ path: 'openapi.yaml', change: 'modified' }], changes });

beforeEach(async () => {
  f = await reviewFixture();
  await f.request();
  await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1, { apiContract: apiContract([change('ac_break', 'breaking'), change('ac_add', 'non-breaking')]) }));
});
afterEach(async () => f.cleanup());

describe('setContractDecision (SPEC §11)', () => {
  it('given an undecided breaking change the axis fails; when a human approves it, then the axis warns', async () => {
    expect(await contractAxis()).toMatchObject({ status: 'fail' });
    const out = await decide(CAROL, { changeId: 'ac_break', decision: 'approved', note: 'v2 clients migrated' });
    expect(out.response.result).toEqual({ recorded: true, changeId: 'ac_break', decision: 'approved' });
    expect(await contractAxis()).toMatchObject({ status: 'warn' });
    const recorded = (await f.events()).filter((e) => e.type === 'ContractChangeDecided').map((e) => e.data);
    expect(recorded).toEqual([{ changeId: 'ac_break', decision: 'approved', by: 'user:carol', note: 'v2 clients migrated', headSha: HEAD1 }]);
  });

  it('when a human rejects any change, even a non-breaking one, then the axis fails', async () => {
    await decide(CAROL, { changeId: 'ac_break', decision: 'approved' });
    await decide(CAROL, { changeId: 'ac_add', decision: 'rejected' });
    expect(await contractAxis()).toMatchObject({ status: 'fail' });
  });

  it('re-recording the decision in force writes nothing; changing it records the new one', async () => {
    await decide(CAROL, { changeId: 'ac_break', decision: 'approved' });
    const again = await decide(CAROL, { changeId: 'ac_break', decision: 'approved' });
    expect(again.response.result).toEqual({ recorded: false, changeId: null, decision: null });
    await decide(CAROL, { changeId: 'ac_break', decision: 'rejected' });
    expect((await f.events()).filter((e) => e.type === 'ContractChangeDecided').map((e) => (e.data as { decision: string }).decision)).toEqual(['approved', 'rejected']);
    expect(await contractAxis()).toMatchObject({ status: 'fail' });
  });

  it('keeps a decision across a recompute on a new head when the same changeId reappears (and drops ones whose change is gone)', async () => {
    await decide(CAROL, { changeId: 'ac_break', decision: 'approved' });
    await decide(CAROL, { changeId: 'ac_add', decision: 'rejected' });
    expect(await contractAxis()).toMatchObject({ status: 'fail' });
    await f.request(7, HEAD2);
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD2, { apiContract: apiContract([change('ac_break', 'breaking')]) }));
    expect(await contractAxis()).toMatchObject({ status: 'warn' });
  });

  it('refuses an unknown changeId with an error naming it', async () => {
    await expect(decide(CAROL, { changeId: 'ac_nope', decision: 'approved' })).rejects.toMatchObject({ code: 'unknown_contract_change', message: expect.stringContaining('"ac_nope"') });
    expect((await f.events()).filter((e) => e.type === 'ContractChangeDecided')).toHaveLength(0);
  });

  it('refuses agents with a clear message, and viewers', async () => {
    await expect(decide(ALICE, { changeId: 'ac_break', decision: 'approved' })).rejects.toMatchObject({ code: 'forbidden', message: expect.stringContaining('only a human principal') });
    await expect(decide(VIEWER, { changeId: 'ac_break', decision: 'approved' })).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('refuses a malformed decision and names the field', async () => {
    await expect(decide(CAROL, { changeId: 'ac_break', decision: 'maybe' })).rejects.toMatchObject({ code: 'invalid_payload', message: expect.stringContaining('decision') });
  });

  it('refuses a decision for a head that was never computed', async () => {
    await expect(decide(CAROL, { changeId: 'ac_break', decision: 'approved', headSha: HEAD2 })).rejects.toMatchObject({ code: 'not_computed' });
  });

  it('refuses when no review exists for the PR', async () => {
    await expect(
      executor.execute(setContractDecision, f.ws, { idempotencyKey: newUuidV7(), principal: CAROL.principal as never, role: CAROL.role }, { repoId: REPO, prNumber: 99, changeId: 'x', decision: 'approved' }),
    ).rejects.toMatchObject({ code: 'review_not_found' });
  });
});
