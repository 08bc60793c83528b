import type { StreamFold } from '../events/kernel-types';
import type { RecordedEvent } from '../events/envelope';
import { currentRound, evolvePr, initialPrState, PrState } from '../review/pr-state';
import type { PublishSelection } from './selection';
import type { PrEvent } from '../events/catalogue/event-types';

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

export function evolvePublish(s: PublishState, e: PrEvent): PublishState {
  const round = currentRound(s.pr)?.round ?? 0;
  switch (e.type) {
    case 'ReviewFinalized':
      s.walkthrough = { round: e.data.round, text: e.data.walkthrough };
      break;
    case 'PublishRequested':
      s.requestCount++;
      s.requests[e.data.requestId] = {
        requestId: e.data.requestId,
        round,
        selection: e.data.selection,
        approveOnShip: e.data.approveOnShip ?? false,
        by: e.data.by,
        needsApproval: e.data.needsApproval,
        status: e.data.needsApproval ? 'pending' : 'approved',
      };
      break;
    case 'PublishApproved': {
      const r = s.requests[e.data.requestId];
      if (r && r.status === 'pending') {
        r.status = 'approved';
        r.approvedBy = e.data.by;
      }
      break;
    }
    case 'ReviewPublished': {
      s.publications.push({ requestId: e.data.requestId, forgeReviewId: e.data.forgeReviewId, url: e.data.url, publishKey: e.data.publishKey, headSha: e.data.headSha, round, publishedBy: e.data.publishedBy });
      const r = e.data.requestId ? s.requests[e.data.requestId] : undefined;
      if (r) r.status = 'published';
      break;
    }
    case 'PublishFailed': {
      const r = e.data.requestId ? s.requests[e.data.requestId] : undefined;
      if (r) {
        r.status = 'failed';
        r.lastFailure = e.data.reason;
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
