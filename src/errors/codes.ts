/**
 * Every error code the server sends, with its kind and one line of meaning. This is the only place a
 * code is defined: `DomainError`'s `code` is typed as `ErrorCode`, so a code not written here fails
 * `tsc`; the kind decides the JSON-RPC `error.code` and the HTTP status (below); the error table in
 * docs/rpc.md is rendered from this list (src/errors/generate-docs.ts, kept current by a test).
 *
 * Imports nothing: every layer may name a code.
 */

/** The kind of refusal; transports map it to their own vocabulary. */
export type ErrorStatus = 'invalid' | 'forbidden' | 'unauthorized' | 'not_found' | 'conflict' | 'too_large' | 'unavailable' | 'internal';

export interface ErrorCodeSpec {
  readonly status: ErrorStatus;
  readonly meaning: string;
  /** Only for JSON-RPC frame errors, whose code JSON-RPC 2.0 fixes (-32700, -32600, -32601). */
  readonly rpcCode?: number;
  /**
   * Retryable: the same request (same idempotency key) may succeed later. Transports send this as the
   * default wait (`error.data.retryAfterMs`) unless the error carries its own `details.retryAfterMs`.
   */
  readonly retryAfterMs?: number;
}

/** JSON-RPC 2.0 reserved codes. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** Domain kinds map onto JSON-RPC's implementation-defined server-error range, and onto HTTP. */
export const RPC_CODE_BY_STATUS: Readonly<Record<ErrorStatus, number>> = {
  invalid: INVALID_PARAMS,
  unauthorized: -32001,
  forbidden: -32003,
  not_found: -32004,
  conflict: -32009,
  too_large: -32013,
  unavailable: -32050,
  internal: INTERNAL_ERROR,
};

export const HTTP_STATUS_BY_STATUS: Readonly<Record<ErrorStatus, number>> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unavailable: 503,
  internal: 500,
};

export const ERROR_CODES = {
  // JSON-RPC frames
  parse_error: { status: 'invalid', rpcCode: PARSE_ERROR, meaning: 'the frame is not valid JSON (the connection stays usable)' },
  invalid_request: { status: 'invalid', rpcCode: INVALID_REQUEST, meaning: 'not a JSON-RPC 2.0 request object, or an empty batch' },
  method_not_found: { status: 'not_found', rpcCode: METHOD_NOT_FOUND, meaning: 'no method of that name (see rpc.discover)' },
  invalid_params: { status: 'invalid', meaning: 'params is not an object of named parameters' },
  internal: { status: 'internal', meaning: 'an unexpected failure; the message says nothing more, the server log does' },

  // Payloads and limits
  invalid_payload: { status: 'invalid', meaning: 'the payload fails its schema; the message names every field and rule (also a __proto__ / constructor / prototype key anywhere)' },
  unknown_field: { status: 'invalid', meaning: 'a top-level field the method does not define' },
  invalid_idempotency_key: { status: 'invalid', meaning: 'idempotencyKey is not a UUIDv7' },
  idempotency_key_reused: { status: 'conflict', meaning: 'the idempotency key was used before for a different command or payload' },
  payload_too_large: { status: 'too_large', meaning: 'a request body, event or field exceeds its byte limit' },
  response_too_large: { status: 'too_large', meaning: 'the answer would exceed the response byte limit (REVIEW_LEDGER_MAX_RESPONSE_BYTES, default 4 MiB): ask for a smaller page or a narrower filter' },
  string_too_long: { status: 'too_large', meaning: 'a string (or object key) exceeds the string length limit' },
  batch_too_costly: { status: 'too_large', meaning: 'a JSON-RPC batch costs more units than the batch limit' },
  too_many_subscriptions: { status: 'too_large', meaning: 'the connection (256), or the principal over all its connections in the workspace (1,024), holds the maximum number of subscriptions' },
  transport_unsupported: { status: 'invalid', meaning: 'a subscription asked for over a transport without server push (use WebSocket or SSE)' },
  invalid_since: { status: 'invalid', meaning: 'since is not a non-negative position, or the subscription cannot resume' },
  invalid_as_of: { status: 'invalid', meaning: 'as-of is neither a global position nor an ISO-8601 time' },
  invalid_path: { status: 'invalid', meaning: 'a repo-relative path is empty, holds NUL or leaves the repo' },
  invalid_ref: { status: 'invalid', meaning: 'a git ref starts with "-" or holds a newline' },
  invalid_side: { status: 'invalid', meaning: 'side is neither "base" nor "head"' },
  invalid_target: { status: 'invalid', meaning: 'the review page URL does not name a workspace, repo and PR number' },
  unknown_event_type: { status: 'invalid', meaning: 'an event type that is not in the event catalogue' },
  unknown_command: { status: 'not_found', meaning: 'no command of that name in the command registry' },
  unknown_query: { status: 'not_found', meaning: 'no query (read model) of that name in the query registry' },
  unknown_tool: { status: 'not_found', meaning: 'no MCP tool of that name' },

  // Identity and access
  unauthorized: { status: 'unauthorized', meaning: 'no token, an unknown or revoked token, or a removed member' },
  token_revoked: { status: 'unauthorized', meaning: 'the token of an open stream was revoked (the stream ends)' },
  member_removed: { status: 'unauthorized', meaning: 'the member behind an open stream was removed (the stream ends)' },
  identity_unproven: { status: 'unauthorized', meaning: "--as names a principal other than the local operator without that principal's token" },
  invalid_signature: { status: 'unauthorized', meaning: 'the webhook body does not match its X-Hub-Signature-256' },
  forbidden: { status: 'forbidden', meaning: 'the role is too low, the act is human-only, the token is of another workspace, or a provisioning rule refuses it' },
  role_changed: { status: 'forbidden', meaning: "the role behind an open stream dropped below the query's minimum (the stream ends)" },
  identity_mismatch: { status: 'forbidden', meaning: "--as names a principal other than the token's" },
  self_confirmation_refused: { status: 'forbidden', meaning: 'the author of a review node cannot confirm it' },
  self_approval_refused: { status: 'forbidden', meaning: 'the requester of a publish cannot approve it' },
  no_publish_approver: { status: 'forbidden', meaning: 'no human member could approve the publish request, so publishing is refused' },
  brief_not_on_roster: { status: 'forbidden', meaning: "the context brief's reviewer is not on the review's roster" },
  not_a_member: { status: 'not_found', meaning: 'the principal is not a member of the workspace' },
  member_exists: { status: 'conflict', meaning: 'the principal is already a member' },
  last_owner: { status: 'conflict', meaning: 'the change would leave the workspace without an owner' },
  unknown_token: { status: 'not_found', meaning: 'no token with that id in the workspace' },
  token_exists: { status: 'conflict', meaning: 'a token with that id already exists' },
  human_token_requires_sign_in: { status: 'forbidden', meaning: "an identity provider is configured: a human's token or session comes only from that person's own sign-in" },
  identity_bound: { status: 'forbidden', meaning: 'the principal is bound to another identity-provider identity (its first sign-in fixed it)' },
  session_expired: { status: 'unauthorized', meaning: 'the sign-in session or CLI sign-in token has expired; sign in again' },
  sign_in_failed: { status: 'unauthorized', meaning: 'the identity provider did not complete the sign-in (state, PKCE, code or token refused)' },
  sign_in_unavailable: { status: 'not_found', meaning: 'no identity provider is configured on this server' },
  sign_in_rate_limited: { status: 'unavailable', retryAfterMs: 60_000, meaning: 'this client (an IPv4 address, an IPv6 /64) started more sign-ins this minute than a person does; wait and start again' },
  csrf_header_required: { status: 'forbidden', meaning: 'a call authenticated by the session cookie must carry the X-Review-Ledger-CSRF header' },

  // Workspaces and repos
  missing_workspace: { status: 'invalid', meaning: 'workspace_id is missing' },
  invalid_workspace_id: { status: 'invalid', meaning: 'workspace_id is not a valid workspace id' },
  unknown_workspace: { status: 'not_found', meaning: 'no workspace of that id (not registered, or not created yet)' },
  workspace_exists: { status: 'conflict', meaning: 'a workspace of that id already exists' },
  repo_not_found: { status: 'not_found', meaning: 'no repo of that id is registered in the workspace' },
  repo_exists: { status: 'conflict', meaning: 'a repo of that id is already registered (with other settings)' },
  repo_moved: { status: 'conflict', meaning: 'the registered work tree now resolves elsewhere' },
  repo_path_not_found: { status: 'invalid', meaning: 'the repo path is not an existing directory' },
  repo_path_refused: { status: 'invalid', meaning: 'the repo path is outside the repo root the operator configured' },
  repo_url_refused: { status: 'invalid', meaning: 'the clone URL is not an https URL of an allowed forge host' },
  workspace_quota_exceeded: { status: 'too_large', meaning: "the owner's workspaces created over RPC already number maxWorkspacesPerOwner" },
  request_cancelled: { status: 'unavailable', meaning: 'the client closed its connection before the request ran; the answer goes nowhere' },
  log_quota_exceeded: { status: 'too_large', meaning: "the workspace's event log takes logQuotaBytes or more: member-level commands are refused (admins may still manage tokens and members); the operator raises the quota" },
  repo_quota_exceeded: { status: 'too_large', meaning: "a clone would take the workspace's repos past repoQuotaBytes under the repo root" },
  git_output_too_large: { status: 'too_large', meaning: 'a git command printed more than the server reads into memory for one command' },
  repo_clone_failed: { status: 'unavailable', meaning: 'git clone of the URL failed' },
  repo_no_origin: { status: 'invalid', meaning: 'the clone has no origin remote and no --forge / --remote-url was given' },
  repo_unknown_forge: { status: 'invalid', meaning: 'the origin (or --remote-url) is not a github, gitlab or bitbucket remote' },
  repo_git_dir_refused: { status: 'invalid', meaning: "the repo's git dir is not exactly <top>/.git, a real directory whose objects and refs live inside it" },
  repo_config_refused: { status: 'invalid', meaning: "the repo's own git config includes other files or names a program (filter, textconv, fsmonitor, hooksPath, …)" },
  unsafe_tree_path: { status: 'invalid', meaning: 'a commit holds a path the server will not write into a render tree (.., .git, a file under a non-directory)' },
  not_a_git_repo: { status: 'invalid', meaning: 'the path is not inside a git work tree' },
  unknown_commit: { status: 'not_found', meaning: 'the sha or ref names no commit in the repo' },
  unresolvable_commit: { status: 'invalid', meaning: 'an abbreviated sha for a repo that is not registered, so it cannot be resolved' },
  forge_not_supported: { status: 'invalid', meaning: "the repo's forge is not supported for this act (publishing: GitHub only)" },
  github_not_configured: { status: 'unavailable', meaning: 'the GitHub credential (token or GitHub App) is missing or incomplete on the server' },
  github_host_not_allowed: { status: 'invalid', meaning: 'the GitHub host is neither github.com nor a configured GitHub Enterprise host' },

  // Reviews
  review_not_found: { status: 'not_found', meaning: 'no review of that repo and PR number' },
  review_completed: { status: 'conflict', meaning: 'the review is completed; request a review of the new head to start a round' },
  not_computed: { status: 'conflict', meaning: 'the review (or the named head) has no computation yet: run computeReview first' },
  stale_head: { status: 'conflict', meaning: 'the act names a head that is not the current round head (or the review moved while it was made)' },
  unknown_head: { status: 'invalid', meaning: 'the head is not one this review has reviewed' },
  node_not_found: { status: 'not_found', meaning: 'no review node of that id' },
  node_closed: { status: 'conflict', meaning: 'the review node is already closed (confirmed, dismissed or resolved) for that act' },
  illegal_ladder_transition: { status: 'conflict', meaning: 'the review level change is not a legal ladder transition' },
  verdict_provisional: { status: 'conflict', meaning: 'the verdict is provisional (a newer head is unreviewed); publishing is refused' },
  cohort_not_found: { status: 'not_found', meaning: 'no cohort of that id in the computation' },
  file_not_changed: { status: 'invalid', meaning: 'the path is not a file the PR changed' },
  invalid_cursor: { status: 'invalid', meaning: "the cursor is not one the query returned for these filters and order (pass reviewDiff's nextCursor or audit's next back unchanged)" },
  cursor_stale: { status: 'invalid', meaning: 'the cursor was made for another head: start again without a cursor' },
  file_not_indexed: { status: 'not_found', meaning: 'the path is not an indexed file at that commit' },
  symbol_not_found: { status: 'not_found', meaning: 'the symbol id is not a definition at that commit' },
  unknown_language: { status: 'invalid', meaning: 'no grammar of that name' },
  unknown_contract_change: { status: 'not_found', meaning: 'the changeId is not a contract change computed for the head' },
  unknown_snapshot: { status: 'not_found', meaning: 'the snapshotId is not a visual snapshot computed for the head' },
  snapshot_not_approvable: { status: 'conflict', meaning: 'the snapshot has no image to approve' },
  visual_approval_not_needed: { status: 'conflict', meaning: 'the snapshot is unchanged, so it needs no approval' },
  malformed_png: { status: 'invalid', meaning: 'an image is not a PNG the decoder reads (bad signature, header, chunk or image data)' },
  image_too_large: { status: 'too_large', meaning: 'an image needs more memory to decode than REVIEW_LEDGER_MAX_IMAGE_BYTES (from its header, before inflating), or its diff took longer than its time budget' },
  image_not_found: { status: 'not_found', meaning: 'no stored image for that snapshot, side or file' },
  image_not_stored: { status: 'not_found', meaning: 'images rendered in a worktree are not kept; only the diff image is stored' },
  image_mismatch: { status: 'conflict', meaning: 'the image at that commit is not the one the review computed' },
  asset_not_found: { status: 'not_found', meaning: 'the file is not part of the review page build' },

  // Rules
  invalid_rules: { status: 'invalid', meaning: 'the rules document is not valid JSON or fails its schema' },
  rules_not_found: { status: 'not_found', meaning: 'the rules document file cannot be read' },
  rules_version_conflict: { status: 'conflict', meaning: 'that rulesVersion is already active with different content' },

  // Publishing
  already_published: { status: 'conflict', meaning: 'the review was already published; nothing was posted' },
  publish_request_not_found: { status: 'not_found', meaning: 'no publish request of that id' },
  publish_request_settled: { status: 'conflict', meaning: 'the publish request was already published, or was a direct publish needing no approval' },
  publish_request_stale: { status: 'conflict', meaning: 'the review changed after the publish request was made' },
  not_awaiting_approval: { status: 'conflict', meaning: 'the review is not finalized (awaiting approval), so it cannot be published yet' },

  // Webhooks
  invalid_webhook: { status: 'invalid', meaning: 'a webhook delivery misses a GitHub header or its body is not JSON' },
  invalid_webhook_payload: { status: 'invalid', meaning: 'a field of a webhook payload the ledger reads is missing or of the wrong kind' },

  // Streams and storage
  watch_closed: { status: 'unavailable', meaning: 'the subscription ended (server shutting down, feed closed): resume with since' },
  watch_lagging: { status: 'unavailable', meaning: 'the subscriber fell 64 updates behind its transport: resume with since (data.details.since), or subscribe with coalesce: true' },
  watch_failed: { status: 'unavailable', meaning: 'a subscription failed while folding or catching up: resume with since' },
  store_damaged: { status: 'unavailable', meaning: "the workspace's stored log is damaged (SQLite reports a malformed file): nothing was read or recorded; restore it from a backup (not retryable)" },
  store_unavailable: { status: 'unavailable', meaning: 'the event store cannot be reached (or a write\'s commit could not be confirmed): retry the same request, same idempotency key, after `error.data.retryAfterMs`', retryAfterMs: 1000 },
  server_shutting_down: { status: 'unavailable', retryAfterMs: 1_000, meaning: 'the server is shutting down: it answers the requests it had read and runs no new one; send the request again (another server, or this one once restarted)' },
  jobs_queue_full: { status: 'unavailable', retryAfterMs: 5_000, meaning: "the workspace already has 64 index/compute jobs waiting for the server's job slots (as many as its cores run at once): send it again later" },
  schema_outdated: { status: 'unavailable', meaning: 'the PostgreSQL schema is older than this server needs: run `review-ledger migrate`' },
  wrong_expected_revision: { status: 'conflict', meaning: 'a concurrent append moved the stream; retrying the command re-decides it' },
  guard_moved: { status: 'conflict', meaning: "the workspace's tokens or members changed while the command ran: the server checks the caller's access again and re-runs it; a client sees this only when that kept happening, and may retry with the same idempotency key" },
  duplicate_event_id: { status: 'conflict', meaning: 'an event id is already stored with different content or at another position' },
  position_overflow: { status: 'internal', meaning: 'a store position exceeds 2^53' },

  // Audit
  read_models_unsupported: { status: 'invalid', meaning: 'the store adapter keeps no read-model storage' },
  unknown_read_model: { status: 'not_found', meaning: 'no checkpointed read model of that name' },
  audit_unsupported: { status: 'invalid', meaning: 'the store adapter keeps no hash chain' },
  audit_chain_broken: { status: 'invalid', meaning: 'no chained event at the position to checkpoint' },
  audit_key_mismatch: { status: 'invalid', meaning: "the workspace's checkpoints are signed by another key than the server holds" },
  audit_checkpoint_conflict: { status: 'conflict', meaning: 'another writer added the same checkpoint' },
  invalid_receipt: { status: 'invalid', meaning: 'a file given as an audit receipt or witness is not one (format, fields, workspace)' },
  audit_witness_unreadable: { status: 'unavailable', meaning: 'the configured audit witness file cannot be read' },
  audit_row_mismatch: { status: 'invalid', meaning: 'an audit row (read model) does not match the chained event it comes from' },
  audit_witness_unwritable: { status: 'unavailable', meaning: 'a checkpoint was signed and stored, but the audit witness could not be appended to' },
  audit_witness_rollback: { status: 'conflict', meaning: "the store's log or checkpoints went backwards relative to the audit witness: signing refused" },

  // Server and operator configuration (start-up errors print `error [code]: message`)
  invalid_config: { status: 'invalid', meaning: 'a setting, flag or config file is missing or invalid' },
  invalid_port: { status: 'invalid', meaning: 'the port is not an integer in 0–65535, or binding it is not permitted' },
  port_in_use: { status: 'unavailable', meaning: 'another process listens on the port' },
  data_dir_locked: { status: 'conflict', meaning: 'another running server holds the lock on the SQLite data dir' },
  render_command_not_accepted: { status: 'invalid', meaning: 'render commands are operator configuration, never accepted from a payload' },
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const statusOf = (code: ErrorCode): ErrorStatus => ERROR_CODES[code].status;

/** The JSON-RPC `error.code` a code is sent with. */
export function rpcCodeOf(code: ErrorCode): number {
  const spec: ErrorCodeSpec = ERROR_CODES[code];
  return spec.rpcCode ?? RPC_CODE_BY_STATUS[spec.status];
}

/** The wait a retryable code suggests, or undefined for a code that is not retryable. */
export function retryAfterMsOf(code: ErrorCode): number | undefined {
  const spec: ErrorCodeSpec = ERROR_CODES[code];
  return spec.retryAfterMs;
}

export const httpStatusOfCode = (code: ErrorCode): number => HTTP_STATUS_BY_STATUS[statusOf(code)];
