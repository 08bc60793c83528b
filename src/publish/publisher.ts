import type { Verdict } from '../events/catalogue/review';
import { diffMapOf, FoldReason, InlinePlacement, placeAnchor, PrFile } from './diff-anchors';
import { CreateReviewRequest, ForgeReview, GitHubError, GitHubPort, PrRef, ReviewCommentRequest, ReviewEvent } from './github-client';
import { hasPublishMarker, markedFingerprints, publishKeyOf, PublishedFinding, renderBody, renderInlineComment } from './render';

/**
 * Posts one review to GitHub so that it is never posted twice, never pinned to rewritten code and
 * never silently drops a finding (SPEC §14). The order of defences:
 *
 * 1. anchors are verified against the PR's current `files` before posting; what fails folds into the body;
 * 2. the head is re-read right before posting — moved means verify again, never post on a stale diff;
 * 3. before posting and before every re-send, the PR's reviews are searched for our hidden marker:
 *    found means it was already posted (a crash, a double click, an orphan) — nothing new is posted;
 * 4. 422 refusing the verdict event → re-sent as COMMENT, saying so;
 * 5. any other 422 → complete an orphan carrying our marker, else re-send once with every finding in the body;
 * 6. 403/429 rate limits → wait as GitHub asks (bounded), look for the marker, re-send;
 * 7. anything else → a failure with GitHub's own message; the ledger records it, nothing is lost.
 */

export interface PublishPlan {
  pr: PrRef;
  verdict: Verdict;
  confidence: number | null;
  walkthrough: string;
  event: ReviewEvent;
  /** The head the findings' line numbers refer to (the reviewed round's head). */
  reviewedHead: string;
  findings: PublishedFinding[];
}

export interface PublishedItem {
  nodeId: string;
  fingerprint: string;
  path?: string;
  line?: number;
  startLine?: number;
  side?: 'RIGHT' | 'LEFT';
  reason?: FoldReason;
  duplicates?: string[];
}

export type PublishOutcome =
  | {
      kind: 'published';
      review: ForgeReview;
      key: string;
      headSha: string;
      event: ReviewEvent;
      requestedEvent?: ReviewEvent;
      eventRefusal?: string;
      inline: PublishedItem[];
      folded: PublishedItem[];
      fallbacks: string[];
      foundExisting: boolean;
    }
  | { kind: 'failed'; reason: string; status?: number; key?: string; headSha?: string };

export interface PublisherOptions {
  sleep?: (ms: number) => Promise<void>;
  /** Longest single wait a rate limit may impose before the publish gives up (default 60 s). */
  maxRateLimitWaitSeconds?: number;
  /** Rate-limited re-sends per publish (default 3). */
  maxRateLimitRetries?: number;
  /** Times the head may move under us before the publish gives up (default 3). */
  maxHeadMoves?: number;
}

const EVENT_REFUSALS = [/can ?not approve your own pull request/i, /can ?not request changes on your own pull request/i, /github actions is not permitted to approve pull requests/i];

export function isEventRefusal(err: GitHubError): boolean {
  return err.status === 422 && err.sentences.some((s) => EVENT_REFUSALS.some((re) => re.test(s)));
}

type Refusal = { requested: ReviewEvent; message: string };

const sameCommit = (a: string, b: string): boolean => a === b || (a.length < b.length ? b.startsWith(a) : a.startsWith(b));

interface Layout {
  head: string;
  key: string;
  inline: Array<{ finding: PublishedFinding; placement: InlinePlacement }>;
  folded: Array<{ finding: PublishedFinding; reason: FoldReason }>;
  movedFrom?: { reviewedHead: string; currentHead: string };
}

/** Where each finding goes on this head's diff. Pure. */
export function layoutFor(plan: PublishPlan, head: string, files: readonly PrFile[]): Layout {
  const diff = diffMapOf(files);
  const moved = !sameCommit(head, plan.reviewedHead);
  const inline: Layout['inline'] = [];
  const folded: Layout['folded'] = [];
  for (const finding of plan.findings) {
    const anchor = finding.node.anchor;
    if (!anchor) {
      folded.push({ finding, reason: 'no_anchor' });
      continue;
    }
    // Line numbers were read at the reviewed head: on another head they may point at other code.
    if (moved) {
      folded.push({ finding, reason: 'head_moved_since_review' });
      continue;
    }
    const p = placeAnchor(anchor, diff);
    if (p.inline) inline.push({ finding, placement: p });
    else folded.push({ finding, reason: p.reason });
  }
  const key = publishKeyOf({ owner: plan.pr.owner, repo: plan.pr.repo, prNumber: plan.pr.pullNumber, headSha: head, fingerprints: plan.findings.map((f) => f.fingerprint), verdict: plan.verdict });
  return { head, key, inline, folded, movedFrom: moved ? { reviewedHead: plan.reviewedHead, currentHead: head } : undefined };
}

function commentOf(finding: PublishedFinding, p: InlinePlacement): ReviewCommentRequest {
  const c: ReviewCommentRequest = { path: p.path, body: renderInlineComment(finding, p), line: p.line, side: p.side };
  if (p.startLine !== undefined) {
    c.start_line = p.startLine;
    c.start_side = p.side;
  }
  return c;
}

export class Publisher {
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly maxWait: number;
  private readonly maxRateRetries: number;
  private readonly maxHeadMoves: number;

  constructor(private readonly gh: GitHubPort, options: PublisherOptions = {}) {
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.maxWait = options.maxRateLimitWaitSeconds ?? 60;
    this.maxRateRetries = options.maxRateLimitRetries ?? 3;
    this.maxHeadMoves = options.maxHeadMoves ?? 3;
  }

  async publish(plan: PublishPlan): Promise<PublishOutcome> {
    let layout: Layout | null = null;
    try {
      const verified = await this.verifiedLayout(plan);
      if (!verified) return { kind: 'failed', reason: `the PR head kept moving while the review was being verified (${this.maxHeadMoves + 1} reads); nothing was posted` };
      layout = verified.layout;
      if (verified.existing) return await this.adoptExisting(plan, layout, verified.existing, [], plan.event, undefined);
      return await this.post(plan, layout);
    } catch (err) {
      if (!(err instanceof GitHubError)) throw err;
      return { kind: 'failed', reason: err.message, status: err.status || undefined, key: layout?.key, headSha: layout?.head };
    }
  }

  /**
   * Reads the head, lays the findings out on that head's files, looks for our marker, and re-reads the
   * head right before the post: only a layout whose head is still the PR's head is used. The post
   * pins `commit_id` to it, so even a push landing after this point cannot re-anchor our comments.
   */
  private async verifiedLayout(plan: PublishPlan): Promise<{ layout: Layout; existing: ForgeReview | null } | null> {
    let head = (await this.gh.getPull(plan.pr)).headSha;
    for (let moves = 0; moves <= this.maxHeadMoves; moves++) {
      const files = await this.gh.listFiles(plan.pr);
      const layout = layoutFor(plan, head, files);
      const existing = await this.findOurs(plan, layout.key);
      const now = (await this.gh.getPull(plan.pr)).headSha;
      if (now === head) return { layout, existing };
      head = now;
    }
    return null;
  }

  private async findOurs(plan: PublishPlan, key: string): Promise<ForgeReview | null> {
    const reviews = await this.gh.listReviews(plan.pr);
    return reviews.find((r) => hasPublishMarker(r.body, key)) ?? null;
  }

  private async post(plan: PublishPlan, layout: Layout): Promise<PublishOutcome> {
    const fallbacks: string[] = [];
    let event = plan.event;
    let refusal: Refusal | undefined;
    let allFolded = false;
    for (;;) {
      const request = this.requestFor(plan, layout, event, refusal, allFolded);
      try {
        const review = await this.send(plan, layout.key, request, fallbacks);
        if ('adopt' in review) return this.adoptExisting(plan, layout, review.adopt, fallbacks, event, refusal);
        return this.published(layout, review, event, refusal, allFolded, fallbacks, false);
      } catch (err) {
        if (!(err instanceof GitHubError) || err.status !== 422) throw err;
        if (isEventRefusal(err) && event !== 'COMMENT') {
          const found = await this.findOurs(plan, layout.key);
          if (found) return this.adoptExisting(plan, layout, found, fallbacks, event, refusal);
          refusal = { requested: event, message: err.errors.find((s) => EVENT_REFUSALS.some((re) => re.test(s))) ?? err.githubMessage };
          event = 'COMMENT';
          fallbacks.push('event_downgraded');
          continue;
        }
        if (!allFolded && (request.comments?.length ?? 0) > 0) {
          // GitHub sometimes keeps a body-only review before answering 422: complete it rather than post again.
          const orphan = await this.findOurs(plan, layout.key);
          if (orphan) return this.completeOrphan(plan, layout, orphan, event, refusal, fallbacks);
          allFolded = true;
          fallbacks.push('anchors_refolded');
          continue;
        }
        throw err;
      }
    }
  }

  private requestFor(plan: PublishPlan, layout: Layout, event: ReviewEvent, refusal: Refusal | undefined, allFolded: boolean): CreateReviewRequest {
    const folded = allFolded ? [...layout.inline.map((i) => ({ finding: i.finding, reason: 'github_rejected_anchors' as FoldReason })), ...layout.folded] : layout.folded;
    const body = renderBody({
      key: layout.key,
      verdict: plan.verdict,
      confidence: plan.confidence,
      walkthrough: plan.walkthrough,
      movedFrom: layout.movedFrom,
      inlineCount: allFolded ? 0 : layout.inline.length,
      folded,
      eventRefusal: refusal,
    });
    const request: CreateReviewRequest = { commit_id: layout.head, body, event };
    if (!allFolded && layout.inline.length > 0) request.comments = layout.inline.map((i) => commentOf(i.finding, i.placement));
    return request;
  }

  /** One POST, with bounded waits for rate limits; before each re-send, the marker decides. */
  private async send(plan: PublishPlan, key: string, request: CreateReviewRequest, fallbacks: string[]): Promise<ForgeReview | { adopt: ForgeReview }> {
    for (let retries = 0; ; retries++) {
      try {
        return await this.gh.createReview(plan.pr, request);
      } catch (err) {
        if (!(err instanceof GitHubError) || !err.rateLimited) throw err;
        // GitHub's advice when no retry-after is given: wait at least a minute.
        const wait = err.retryAfterSeconds ?? 60;
        if (retries >= this.maxRateRetries || wait > this.maxWait) {
          throw new GitHubError(err.status, `${err.githubMessage} (rate limited; GitHub asked to wait ${wait} s, gave up after ${retries} retr${retries === 1 ? 'y' : 'ies'})`, err.errors, err.retryAfterSeconds);
        }
        if (!fallbacks.includes('rate_limit_retry')) fallbacks.push('rate_limit_retry');
        await this.sleep(wait * 1000);
        const found = await this.findOurs(plan, key);
        if (found) return { adopt: found };
      }
    }
  }

  /**
   * A review with our marker already exists. If it carries every finding we meant to post (inline, or
   * folded into its body by an earlier fallback) it IS the publication; if not (a body-only orphan of a
   * refused post, or a PENDING review), it is completed with every finding in its body — so nothing is
   * dropped and nothing is posted twice.
   */
  private async adoptExisting(plan: PublishPlan, layout: Layout, review: ForgeReview, fallbacks: string[], event: ReviewEvent, refusal: Refusal | undefined): Promise<PublishOutcome> {
    const inBody = markedFingerprints([review.body]);
    const foldedInBody = layout.inline.length > 0 && layout.inline.every((i) => inBody.has(i.finding.fingerprint));
    const complete = review.state !== 'PENDING' && (layout.inline.length === 0 || foldedInBody || (await this.hasAllComments(plan, layout, review)));
    if (!complete) return this.completeOrphan(plan, layout, review, event, refusal, fallbacks);
    const posted = eventOfState(review.state) ?? event;
    const requested = posted !== plan.event ? { requested: plan.event, message: refusal?.message ?? 'GitHub refused the verdict event on an earlier attempt' } : undefined;
    return this.published(layout, review, posted, requested, foldedInBody, fallbacks, true);
  }

  private async hasAllComments(plan: PublishPlan, layout: Layout, review: ForgeReview): Promise<boolean> {
    const marked = markedFingerprints((await this.gh.listReviewComments(plan.pr, review.id)).map((c) => c.body));
    return layout.inline.every((i) => marked.has(i.finding.fingerprint));
  }

  private async completeOrphan(plan: PublishPlan, layout: Layout, orphan: ForgeReview, event: ReviewEvent, refusal: Refusal | undefined, fallbacks: string[]): Promise<PublishOutcome> {
    fallbacks.push('orphan_completed');
    let body = this.requestFor(plan, layout, event, refusal, true).body;
    let review: ForgeReview;
    let finalEvent = eventOfState(orphan.state) ?? event;
    if (orphan.state === 'PENDING') {
      try {
        review = await this.gh.submitReview(plan.pr, orphan.id, event, body);
        finalEvent = event;
      } catch (err) {
        if (!(err instanceof GitHubError) || !isEventRefusal(err) || event === 'COMMENT') throw err;
        refusal = { requested: event, message: err.errors[0] ?? err.githubMessage };
        fallbacks.push('event_downgraded');
        body = this.requestFor(plan, layout, 'COMMENT', refusal, true).body;
        review = await this.gh.submitReview(plan.pr, orphan.id, 'COMMENT', body);
        finalEvent = 'COMMENT';
      }
    } else {
      review = await this.gh.updateReviewBody(plan.pr, orphan.id, body);
    }
    return this.published(layout, review, finalEvent, finalEvent === 'COMMENT' ? refusal : undefined, true, fallbacks, false);
  }

  private published(layout: Layout, review: ForgeReview, event: ReviewEvent, refusal: Refusal | undefined, allFolded: boolean, fallbacks: string[], foundExisting: boolean): PublishOutcome {
    const item = (f: PublishedFinding): PublishedItem => ({ nodeId: f.nodeId, fingerprint: f.fingerprint, ...(f.duplicateNodeIds.length > 0 ? { duplicates: f.duplicateNodeIds } : {}) });
    const inline: PublishedItem[] = allFolded
      ? []
      : layout.inline.map(({ finding, placement }) => ({ ...item(finding), path: placement.path, line: placement.line, startLine: placement.startLine, side: placement.side }));
    const folded: PublishedItem[] = [
      ...(allFolded ? layout.inline.map(({ finding }) => ({ ...item(finding), path: finding.node.anchor?.path, reason: 'github_rejected_anchors' as FoldReason })) : []),
      ...layout.folded.map(({ finding, reason }) => ({ ...item(finding), path: finding.node.anchor?.path, reason })),
    ];
    return {
      kind: 'published',
      review,
      key: layout.key,
      headSha: layout.head,
      event,
      requestedEvent: refusal?.requested,
      eventRefusal: refusal?.message,
      inline,
      folded,
      fallbacks,
      foundExisting,
    };
  }
}

function eventOfState(state: string): ReviewEvent | null {
  if (state === 'APPROVED') return 'APPROVE';
  if (state === 'CHANGES_REQUESTED') return 'REQUEST_CHANGES';
  if (state === 'COMMENTED') return 'COMMENT';
  return null;
}
