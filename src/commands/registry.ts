import type { CommandDefinition } from './kernel';
import { createWorkspace } from './create-workspace';

/**
 * Every command of the ledger, by name. The RPC method catalogue, the MCP tools and the CLI are
 * generated from this list and the commands' zod schemas. One line per command.
 */
export const COMMANDS: CommandDefinition[] = [
  createWorkspace,
];

export const commandByName = new Map(COMMANDS.map((c) => [c.name, c]));
