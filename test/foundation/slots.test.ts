import { LedgerServices, Slot, SlotMap } from '../../src/slots';

describe('typed slots: wiring looked up by a key that carries its type', () => {
  it('two slots with the same name are different keys (no string lookup can reach another module\'s value)', () => {
    const a = new Slot<number>('same');
    const b = new Slot<number>('same');
    const m = new SlotMap().set(a, 1);
    expect([m.get(a), m.get(b), m.has(b)]).toEqual([1, undefined, false]);
  });

  it('getOrSet makes a value once and keeps it', () => {
    const s = new Slot<string[]>('list');
    const m = new SlotMap();
    let made = 0;
    const first = m.getOrSet(s, () => (made++, []));
    first.push('x');
    expect(m.getOrSet(s, () => (made++, []))).toEqual(['x']);
    expect(made).toBe(1);
  });

  it('delete with a value empties the slot only while it still holds that value', () => {
    const s = new Slot<object>('module');
    const first = {}, second = {};
    const services = new LedgerServices().set(s, second);
    services.delete(s, first);
    expect(services.get(s)).toBe(second);
    services.delete(s, second);
    expect(services.has(s)).toBe(false);
  });

  it('values() lists what a closing workspace must release', () => {
    const close = { closeWithWorkspace: () => 'closed' };
    const m = new SlotMap().set(new Slot<typeof close>('c'), close).set(new Slot<number>('n'), 3);
    expect([...m.values()]).toEqual([close, 3]);
  });
});
