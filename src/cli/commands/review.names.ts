/**
 * `review run` takes any command of the command registry and `review show` any query of the query
 * registry, by their registry names (the RPC method names). These older `review show` names are kept
 * as deprecated aliases because scripts use them; `review show` says so on stderr. Light, so --help
 * loads nothing else.
 */
export const DEPRECATED_VIEW_ALIASES: Readonly<Record<string, string>> = {
  delta: 'reReviewDelta',
  status: 'reviewStatus',
  groups: 'reportingGroups',
  ci: 'ciSignals',
};
