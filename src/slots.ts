/**
 * Typed slots: a key that carries the type of the value it holds, so wiring is looked up without strings
 * or casts. The ledger's services (`Ledger.services`) and a workspace's in-process caches
 * (`WorkspaceHandle.cache`) are slot maps; each slot is declared beside the type it holds.
 */
export class Slot<T> {
  /** Never set: it only ties the slot to its value type. */
  declare private readonly valueType?: T;

  constructor(readonly name: string) {}

  toString(): string {
    return `Slot(${this.name})`;
  }
}

/** Values by slot. */
export class SlotMap {
  private readonly bySlot = new Map<Slot<unknown>, unknown>();

  get<T>(slot: Slot<T>): T | undefined {
    return this.bySlot.get(slot) as T | undefined;
  }

  /** The slot's value, made (and kept) by `make` when there is none yet. */
  getOrSet<T>(slot: Slot<T>, make: () => T): T {
    if (this.bySlot.has(slot)) return this.bySlot.get(slot) as T;
    const value = make();
    this.bySlot.set(slot, value);
    return value;
  }

  has(slot: Slot<unknown>): boolean {
    return this.bySlot.has(slot);
  }

  set<T>(slot: Slot<T>, value: T): this {
    this.bySlot.set(slot, value);
    return this;
  }

  /**
   * Empties the slot; with `only`, only while it still holds that value (a module that stops after another
   * took its slot leaves the newer value in place).
   */
  delete<T>(slot: Slot<T>, only?: T): void {
    if (only === undefined || this.bySlot.get(slot) === only) this.bySlot.delete(slot);
  }

  values(): IterableIterator<unknown> {
    return this.bySlot.values();
  }
}

/** The services a ledger's commands, modules and transports share, one typed slot each (see the `*_SERVICE` slots). */
export class LedgerServices extends SlotMap {}
