import { z } from 'zod';
import type { StreamFold } from '../../events/kernel-types';
import { reviewTarget } from '../../events/streams';
import { publishSelectionSchema } from '../../events/catalogue/review';
import { reviewEventFor, selectFindings } from '../../publish/selection';
import { currentFinalization, currentRound } from '../../review/pr-state';
import { verdictOfPr } from '../../review/pr-verdict';
import { verdictStanding } from '../../review/provisional';
import type { QueryDefinition } from './query';
import { affectsReview, reviewSources, ReviewView, reviewViewFold } from './review-fold';
import { catalogued } from '../../events/catalogue/event-types';

const input = z.object({ ...reviewTarget, selection: publishSelectionSchema.default('all_open'), approveOnShip: z.boolean().default(true) });
type Input = z.infer<typeof input>;

interface PreviewState {
  view: ReviewView;
  /** headSha → paths the computation saw change at that head. */
  changedPaths: Record<string, string[]>;
}

/**
 * What Publish to GitHub would post (SPEC §14), before anyone presses it: the publisher's own selection
 * (`selectFindings`: live nodes of the current round, duplicates folded under their canonical node),
 * the verdict and the review event it maps to, and per finding whether it is headed inline or into the
 * body. The preview can only tell from events: an anchor on a file the PR changed is an inline
 * candidate; the publisher re-verifies every anchor against GitHub's diff of the current head at
 * publish time (a line outside a hunk, or a moved head, still folds), and says so in `note`.
 */
export function publishPreviewView(s: PreviewState, i: Input) {
  const pr = s.view.pr;
  const round = currentRound(pr);
  const f = currentFinalization(pr);
  const standing = verdictStanding(pr);
  const finalized = pr.exists && pr.status === 'awaiting_approval' && f !== null;
  const enabled = finalized && standing.state === 'final';
  const blockedBy = !pr.exists
    ? 'no review'
    : enabled
      ? null
      : pr.status === 'completed'
        ? 'already published'
        : finalized
          ? `the verdict is provisional: ${standing.why}`
          : 'the review is not finalized (publish is allowed only in awaiting approval)';
  const changed = new Set(round ? (s.changedPaths[round.headSha] ?? []) : []);
  const { findings, excluded } = selectFindings(pr, i.selection);
  const items = findings.map((x) => {
    const a = x.node.anchor;
    const placement = !a ? { inline: false, reason: 'no_anchor' } : changed.has(a.path) ? { inline: true, path: a.path, startLine: a.startLine, endLine: a.endLine } : { inline: false, reason: 'not_in_diff' };
    return { nodeId: x.nodeId, title: x.node.title, priority: x.node.priority, kind: x.node.kind, duplicates: x.duplicateNodeIds.length, placement };
  });
  const v = f ? verdictOfPr(pr, s.view.rules, f.tokenAxes) : null;
  return {
    enabled,
    blockedBy,
    status: pr.exists ? pr.status : null,
    selection: i.selection,
    verdict: v?.verdict ?? null,
    verdictState: pr.exists ? standing.state : null,
    event: v ? reviewEventFor(v.verdict, i.approveOnShip) : null,
    inline: items.filter((x) => x.placement.inline),
    folded: items.filter((x) => !x.placement.inline),
    excluded,
    note: 'inline placement is re-verified against the PR diff on GitHub at publish time; anything GitHub cannot anchor folds into the review body',
  };
}

function previewFold(): StreamFold<PreviewState> {
  const inner = reviewViewFold();
  return {
    initialState: () => ({ view: inner.initialState(), changedPaths: {} }),
    evolve(s, raw) {
      const e = catalogued(raw);
      if (e.type === 'ReviewComputed') {
        s.changedPaths[e.data.headSha] = e.data.changedFiles.map((c) => c.path);
      }
      s.view = inner.evolve(s.view, e);
      return s;
    },
  };
}

export const publishPreviewQuery: QueryDefinition<Input, PreviewState, ReturnType<typeof publishPreviewView>> = {
  name: 'publishPreview',
  description: 'What Publish to GitHub would post: selection, verdict and review event, findings headed inline vs folded into the body; enabled only in awaiting approval.',
  input,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => previewFold(),
  sources: reviewSources,
  view: (s, i) => publishPreviewView(s, i),
};
