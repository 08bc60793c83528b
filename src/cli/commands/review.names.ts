/** The review commands and read models the `review` CLI offers; light, so --help needs nothing else. */
export const REVIEW_COMMANDS = ['requestReview', 'setReviewLevel', 'observeHead', 'addReviewNode', 'confirmNode', 'dismissNode', 'resolveNode', 'recordAxis', 'recordCiSignal', 'finalizeReview', 'activateRules'] as const;
/** `review show <view>`; review.actions.ts maps each to its query (the type makes it map all of them). */
export const REVIEW_VIEWS = ['verdict', 'nodes', 'delta', 'status', 'groups', 'ci'] as const;
export type ReviewView = (typeof REVIEW_VIEWS)[number];
