import { z } from 'zod';
import { DomainError } from '../domain-error';
import { reviewLevelSchema } from '../events/catalogue/workspace';
import { streamIds } from '../events/envelope';
import { workspaceFold, WorkspaceState } from '../workspaces/workspace-state';
import type { CommandDefinition } from './kernel';

const input = z.object({ level: reviewLevelSchema });

/** Sets the workspace review level (SPEC §9). Reviews already requested keep the level they snapshotted. */
export const setReviewLevel: CommandDefinition<z.infer<typeof input>, WorkspaceState> = {
  name: 'setReviewLevel',
  description: 'Set the workspace review level (light | balanced | thorough) for reviews requested from now on.',
  input,
  access: { minRole: 'admin' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  decide(state, cmd) {
    if (!state.created) throw new DomainError('unknown_workspace', 'workspace: not created yet');
    if (state.level === cmd.level) return [];
    return [{ type: 'ReviewLevelSet', data: { level: cmd.level } }];
  },
  result: (events) => ({ changed: events.length > 0 }),
};
