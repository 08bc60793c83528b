import { z } from 'zod';
import type { CommandDefinition } from '../../src/commands/kernel';
import { workspaceFold, WorkspaceState } from '../../src/workspaces/workspace-state';

export type Level = 'light' | 'balanced' | 'thorough';

/** A minimal command over the workspace stream, so the idempotency tests exercise only the kernel. */
export const setLevel: CommandDefinition<{ level: Level }, WorkspaceState> = {
  name: 'testSetLevel',
  description: 'test',
  input: z.object({ level: z.enum(['light', 'balanced', 'thorough']) }),
  access: { minRole: 'admin' },
  stream: () => 'workspace',
  fold: workspaceFold,
  decide: (_s, cmd) => [{ type: 'ReviewLevelSet', data: { level: cmd.level } }],
  result: (events) => ({ level: (events[0].data as { level: string }).level }),
};
