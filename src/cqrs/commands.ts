import { createHash } from 'node:crypto';
import { Inject, Injectable, type Type } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandDefinition, CommandEnvelope, CommandOutcome } from '../commands/kernel';
import { COMMANDS } from '../commands/registry';
import { DomainError } from '../domain-error';
import { Ledger } from '../ledger';

/**
 * A command of the registry on the CommandBus. The envelope is the caller's identity and idempotency
 * key, exactly as an edge would pass them to the ledger; the payload is the command's input.
 */
export abstract class LedgerCommand<I = unknown> extends Command<CommandOutcome> {
  /** The registry entry this class stands for. */
  static readonly definition: CommandDefinition;
  private settle!: () => void;
  /** Resolves once a handler has executed it, whatever the outcome (a saga's position waits for it). */
  readonly executed: Promise<void> = new Promise((resolve) => (this.settle = resolve));

  constructor(
    readonly workspaceId: string,
    readonly envelope: CommandEnvelope,
    readonly payload: I,
  ) {
    super();
  }

  /** Called by the generated handler when the execution ended. */
  markExecuted(): void {
    this.settle();
  }
}

export type LedgerCommandType = Type<LedgerCommand> & { readonly definition: CommandDefinition };

const className = (name: string) => `${name[0].toUpperCase()}${name.slice(1)}Command`;

function commandClass(def: CommandDefinition): LedgerCommandType {
  const name = className(def.name);
  const cls = { [name]: class extends LedgerCommand {} }[name] as unknown as LedgerCommandType;
  Object.defineProperty(cls, 'definition', { value: def });
  return cls;
}

/**
 * The handler generated for one registry command: the same path as every edge (`Ledger.run`), so the
 * bus appends exactly what the executor appends, with the same idempotency.
 */
function handlerClass(cls: LedgerCommandType): Type<ICommandHandler<LedgerCommand, CommandOutcome>> {
  const def = cls.definition;
  const name = `${cls.name}Handler`;
  const handler = {
    [name]: class implements ICommandHandler<LedgerCommand, CommandOutcome> {
      constructor(readonly ledger: Ledger) {}
      execute(c: LedgerCommand): Promise<CommandOutcome> {
        const run = this.ledger.run(def.name, c.workspaceId, c.envelope, c.payload);
        return run.finally(() => c.markExecuted());
      }
    },
  }[name];
  Inject(Ledger)(handler, undefined, 0);
  Injectable()(handler);
  CommandHandler(cls)(handler);
  return handler;
}

const byName = new Map<string, LedgerCommandType>(COMMANDS.map((def) => [def.name, commandClass(def)]));

/** One CommandBus class per registry command, named after it (`addReviewNode` → `AddReviewNodeCommand`). */
export function ledgerCommandClass(name: string): LedgerCommandType {
  const cls = byName.get(name);
  if (!cls) throw new DomainError('unknown_command', `"${name.slice(0, 100)}" is not a registered command`);
  return cls;
}

/** `commandBus.execute(ledgerCommand('confirmNode', 'default', envelope, { … }))`. */
export function ledgerCommand<I>(name: string, workspaceId: string, envelope: CommandEnvelope, payload: I): LedgerCommand<I> {
  const cls = ledgerCommandClass(name) as unknown as new (w: string, e: CommandEnvelope, p: I) => LedgerCommand<I>;
  return new cls(workspaceId, envelope, payload);
}

export const LEDGER_COMMAND_CLASSES: readonly LedgerCommandType[] = [...byName.values()];
/** Providers of the generated handlers, one per registry command. */
export const LEDGER_COMMAND_HANDLERS: readonly Type<unknown>[] = LEDGER_COMMAND_CLASSES.map(handlerClass);

/**
 * The idempotency key of the command a process manager issues in reaction to an event: a UUIDv7 with
 * the event's own timestamp whose other bits come from (process manager, event id). The same event,
 * seen again after a restart or by a second server, yields the same key, so the follow-up is recorded
 * once and its later runs replay.
 */
export function followUpKey(processManager: string, eventId: string): string {
  const h = createHash('sha256').update(`${processManager}/${eventId.toLowerCase()}`).digest('hex');
  const hex = eventId.replace(/-/g, '').slice(0, 12).toLowerCase() + '7' + h.slice(0, 3) + ((parseInt(h[3], 16) & 0x3) | 0x8).toString(16) + h.slice(4, 19);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
