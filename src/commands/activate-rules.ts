import { z } from 'zod';
import { DomainError } from '../domain-error';
import { canonicalJson } from '../events/canonical-json';
import { streamIds } from '../events/envelope';
import { workspaceFold, WorkspaceState } from '../workspaces/workspace-state';
import { parseRules } from '../rules/rules';
import type { CommandDefinition } from './kernel';

const input = z.object({ document: z.record(z.string(), z.unknown()) });

/**
 * Makes a rules document the one projections fold with from now on (SPEC §7.4; `replay --activate`).
 * A version id names exactly one document: re-activating it is a no-op, reusing it for another is refused.
 */
export const activateRules: CommandDefinition<z.infer<typeof input>, WorkspaceState> = {
  name: 'activateRules',
  description: 'Activate a rules document (verdict thresholds, gated axes, levels, contract severity overrides) for the workspace.',
  input,
  access: { minRole: 'admin' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  decide(state, cmd) {
    if (!state.created) throw new DomainError('unknown_workspace', 'workspace: not created yet');
    const rules = parseRules(cmd.document, 'document');
    if (state.rulesVersion === rules.rulesVersion) {
      if (canonicalJson(state.rulesDocument) === canonicalJson(rules)) return [];
      throw new DomainError('rules_version_conflict', `document.rulesVersion: "${rules.rulesVersion}" is already active with different content; give the new document its own version id`);
    }
    return [{ type: 'RulesVersionActivated', data: { rulesVersion: rules.rulesVersion, document: rules } }];
  },
  result: (events) => ({ activated: events.length > 0 }),
};
