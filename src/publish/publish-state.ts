import type { StreamFold } from '../events/kernel-types';
import type { RecordedEvent } from '../events/envelope';
import { currentRound, evolvePr, initialPrState, PrState } from '../review/pr-state';
import type { PublishSelection } from './selection';

export type RequestStatus = 'pending' | 'approved' | 'published' | 'failed';

export interface PublishRequestRecord {
  requestId: string;
  /** The round the request was made on: approving it on a later round would publish other findings. */
  round: number;
  selection: PublishSelection;
  approveOnShip: boolean;
  by: string;
  needsApproval: boolean;
  approvedBy?: string;
  status: RequestStatus;
  lastFailure?: string;
}

export interface Publication {
  requestId?: string;
  forgeReviewId: string;
  url?: string;
  publishKey?: string;
  headSha?: string;
  round: number;
  publishedBy: string;
}

/** The PR stream folded for the publish commands: the review state plus the publish requests and publications. */
export interface PublishState {
  pr: PrState;
  /** The walkthrough of the current round's finalization (the PR fold keeps only its verdict). */
  walkthrough: { round: number; text: string } | null;
  requests: Record<string, PublishRequestRecord>;
  requestCount: number;
  publications: Publication[];
}

export function initialPublishState(): PublishState {
  return { pr: initialPrState(), walkthrough: null, requests: {}, requestCount: 0, publications: [] };
}

export function evolvePublish(s: PublishState, e: RecordedEvent): PublishState {
  const d = e.data as any;
  const round = currentRound(s.pr)?.round ?? 0;
  switch (e.type) {
    case 'ReviewFinalized':
      s.walkthrough = { round: d.round, text: d.walkthrough };
      break;
    case 'PublishRequested':
      s.requestCount++;
      s.requests[d.requestId] = {
        requestId: d.requestId,
        round,
        selection: d.selection,
        approveOnShip: d.approveOnShip ?? false,
        by: d.by,
        needsApproval: d.needsApproval,
        status: d.needsApproval ? 'pending' : 'approved',
      };
      break;
    case 'PublishApproved': {
      const r = s.requests[d.requestId];
      if (r && r.status === 'pending') {
        r.status = 'approved';
        r.approvedBy = d.by;
      }
      break;
    }
    case 'ReviewPublished': {
      s.publications.push({ requestId: d.requestId, forgeReviewId: d.forgeReviewId, url: d.url, publishKey: d.publishKey, headSha: d.headSha, round, publishedBy: d.publishedBy });
      const r = d.requestId ? s.requests[d.requestId] : undefined;
      if (r) r.status = 'published';
      break;
    }
    case 'PublishFailed': {
      const r = d.requestId ? s.requests[d.requestId] : undefined;
      if (r) {
        r.status = 'failed';
        r.lastFailure = d.reason;
      }
      break;
    }
  }
  evolvePr(s.pr, e);
  return s;
}

export const publishFold: StreamFold<PublishState> = { initialState: initialPublishState, evolve: evolvePublish };

/** The publication of the current round, if the review has been published since its round started. */
export function currentPublication(s: PublishState): Publication | null {
  const round = currentRound(s.pr)?.round;
  for (let i = s.publications.length - 1; i >= 0; i--) if (s.publications[i].round === round) return s.publications[i];
  return null;
}
