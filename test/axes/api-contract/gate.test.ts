import { contractGate } from '../../../src/axes/api-contract/gate';
import type { ApiContractComputation, ContractChange, ContractDecision } from '../../../src/axes/types';
import { ContractChangeDecided } from '../../../src/events/catalogue/contract';

const change = (changeId: string, severity: ContractChange['severity'], extra: Partial<ContractChange> = {}): ContractChange => ({
  changeId,
  ruleId: 'test-rule',
  severity,
  direction: 'request',
  message: changeId,
  specPath: 'openapi.yaml',
  ...extra,
});
const computed = (changes: ContractChange[], status: ApiContractComputation['status'] = 'pass'): ApiContractComputation => ({
  status,
  specs: [{ path: 'openapi.yaml', change: 'modified' }],
  changes,
});
const decisions = (entries: Array<[string, ContractDecision]> = []) => new Map(entries);

describe('contractGate (SPEC §11)', () => {
  it('passes when no change is breaking', () => {
    const r = contractGate(computed([change('a', 'non-breaking'), change('b', 'info')]), decisions());
    expect(r).toEqual({ status: 'pass', undecidedBreaking: [], rejected: [] });
  });

  it('fails on an undecided breaking change and names it', () => {
    const r = contractGate(computed([change('a', 'breaking'), change('b', 'non-breaking')]), decisions());
    expect(r.status).toBe('fail');
    expect(r.undecidedBreaking).toEqual(['a']);
  });

  it('warns when every breaking change is approved', () => {
    const r = contractGate(computed([change('a', 'breaking'), change('b', 'breaking')]), decisions([['a', 'approved'], ['b', 'approved']]));
    expect(r.status).toBe('warn');
    expect(r.undecidedBreaking).toEqual([]);
  });

  it('holds the gate on an undecided warning exactly like on an undecided breaking change, and says so', () => {
    const r = contractGate(computed([change('w', 'warning'), change('b', 'non-breaking')]), decisions());
    expect(r).toEqual({ status: 'fail', reason: '1 breaking contract change(s) awaiting a decision (1 of them warning)', undecidedBreaking: ['w'], rejected: [] });
    const approved = contractGate(computed([change('w', 'warning')]), decisions([['w', 'approved']]));
    expect(approved.status).toBe('warn');
    const rejected = contractGate(computed([change('w', 'warning')]), decisions([['w', 'rejected']]));
    expect(rejected).toMatchObject({ status: 'fail', rejected: ['w'] });
  });

  it('fails when any change is rejected, even a non-breaking one', () => {
    const r = contractGate(computed([change('a', 'breaking'), change('b', 'non-breaking')]), decisions([['a', 'approved'], ['b', 'rejected']]));
    expect(r.status).toBe('fail');
    expect(r.rejected).toEqual(['b']);
  });

  it('fails when one breaking change is approved and another is still undecided', () => {
    const r = contractGate(computed([change('a', 'breaking'), change('b', 'breaking')]), decisions([['a', 'approved']]));
    expect(r.status).toBe('fail');
    expect(r.undecidedBreaking).toEqual(['b']);
  });

  it('never lets a derived (advisory) change block, even breaking or rejected', () => {
    const r = contractGate(
      computed([change('a', 'breaking', { derived: true }), change('b', 'breaking', { derived: true })]),
      decisions([['b', 'rejected']]),
    );
    expect(r.status).toBe('pass');
  });

  it('ignores decisions on changeIds that no longer appear (a recompute dropped the change)', () => {
    const r = contractGate(computed([change('a', 'non-breaking')]), decisions([['gone', 'rejected']]));
    expect(r.status).toBe('pass');
  });

  it('keeps a decision when the same changeId reappears after a recompute', () => {
    const d = decisions([['a', 'approved']]);
    expect(contractGate(computed([change('a', 'breaking')]), d).status).toBe('warn');
    expect(contractGate(computed([change('a', 'breaking'), change('c', 'info')]), d).status).toBe('warn');
  });

  it.each(['partial', 'unavailable', 'not_applicable'] as const)('passes a %s computation through unchanged, never as pass', (status) => {
    const r = contractGate({ ...computed([change('a', 'breaking')], status), reason: 'why' }, decisions([['a', 'approved']]));
    expect(r.status).toBe(status);
    expect(r.reason).toBe('why');
  });

  it('gives a partial computation a reason even when none was recorded', () => {
    const r = contractGate(computed([], 'partial'), decisions());
    expect(r.status).toBe('partial');
    expect(r.reason).toBeTruthy();
  });
});

describe('ContractChangeDecided event schema', () => {
  it('accepts a well-formed decision', () => {
    const data = { changeId: 'c1', decision: 'approved', by: 'user:alice', headSha: 'a'.repeat(40) };
    expect(ContractChangeDecided.schema.parse(data)).toEqual(data);
    expect(ContractChangeDecided.type).toBe('ContractChangeDecided');
    expect(ContractChangeDecided.stream).toBe('pr');
  });

  it('rejects an unknown decision and names the field', () => {
    const r = ContractChangeDecided.schema.safeParse({ changeId: 'c1', decision: 'maybe', by: 'u', headSha: 'a'.repeat(40) });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0].path).toEqual(['decision']);
  });
});
