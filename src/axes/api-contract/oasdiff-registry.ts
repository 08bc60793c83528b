/**
 * oasdiff's rule registry as facts: every rule id and its default level (github.com/oasdiff/oasdiff, checker/rules.go
 * with the id constants of its checks, at commit 4553c69d, 2026-08-08). Used to print the exact id of a finding
 * (the location/required twins of a rule) and its level under `--profile oasdiff`. Data only: no code of oasdiff.
 */
export type OasdiffLevel = 'ERR' | 'WARN' | 'INFO';

const ids = (text: string): string[] => text.trim().split(/\s+/);

const ERR = ids(`
  api-deprecated-sunset-missing api-deprecated-sunset-parse api-invalid-stability-level api-path-removed-before-sunset
  api-path-removed-without-deprecation api-path-sunset-parse api-removed-before-sunset api-removed-without-deprecation api-stability-decreased
  api-sunset-date-changed-too-small api-sunset-date-too-small new-request-path-parameter new-required-request-default-parameter-to-existing-path
  new-required-request-header-property new-required-request-parameter new-required-request-property new-required-request-property-with-default
  request-body-added-required request-body-all-of-added request-body-any-of-removed request-body-became-enum request-body-became-not-nullable
  request-body-became-required request-body-const-added request-body-const-changed request-body-contains-added request-body-content-encoding-changed
  request-body-content-media-type-changed request-body-content-schema-added request-body-dependent-required-added
  request-body-dependent-required-changed request-body-dependent-schema-added request-body-else-added request-body-enum-value-removed
  request-body-exclusive-max-decreased request-body-exclusive-min-increased request-body-if-added request-body-list-of-types-narrowed
  request-body-max-contains-decreased request-body-max-decreased request-body-max-length-decreased request-body-media-type-removed
  request-body-media-type-schema-added request-body-min-contains-increased request-body-min-increased request-body-min-items-increased
  request-body-min-length-increased request-body-one-of-removed request-body-pattern-property-added request-body-prefix-items-removed
  request-body-property-names-added request-body-removed request-body-then-added request-body-type-changed request-body-unevaluated-items-added
  request-body-unevaluated-properties-added request-body-wrapped-in-one-of request-header-property-became-enum
  request-header-property-became-required request-parameter-became-enum request-parameter-became-not-nullable request-parameter-became-required
  request-parameter-default-value-added request-parameter-default-value-changed request-parameter-default-value-removed
  request-parameter-deprecated-sunset-missing request-parameter-enum-value-removed request-parameter-exclusive-max-decreased
  request-parameter-exclusive-min-increased request-parameter-list-of-types-narrowed request-parameter-max-decreased
  request-parameter-max-items-decreased request-parameter-max-length-decreased request-parameter-min-increased request-parameter-min-items-increased
  request-parameter-min-length-increased request-parameter-pattern-added request-parameter-property-became-not-nullable
  request-parameter-property-enum-value-removed request-parameter-property-list-of-types-narrowed request-parameter-property-type-specialized
  request-parameter-removed-before-sunset request-parameter-sunset-date-changed-too-small request-parameter-sunset-date-too-small
  request-parameter-sunset-deleted request-parameter-sunset-parse request-parameter-type-changed request-parameter-x-extensible-enum-value-removed
  request-property-all-of-added request-property-any-of-removed request-property-became-enum request-property-became-not-nullable
  request-property-became-required request-property-became-required-with-default request-property-const-added request-property-const-changed
  request-property-contains-added request-property-content-encoding-changed request-property-content-media-type-changed
  request-property-content-schema-added request-property-dependent-required-added request-property-dependent-required-changed
  request-property-dependent-schema-added request-property-deprecated-sunset-invalid request-property-deprecated-sunset-missing
  request-property-else-added request-property-enum-value-removed request-property-exclusive-max-decreased request-property-exclusive-min-increased
  request-property-if-added request-property-list-of-types-narrowed request-property-max-contains-decreased request-property-max-decreased
  request-property-max-length-decreased request-property-min-contains-increased request-property-min-increased request-property-min-items-increased
  request-property-min-length-increased request-property-one-of-removed request-property-pattern-added request-property-pattern-property-added
  request-property-prefix-items-removed request-property-property-names-added request-property-stability-decreased
  request-property-sunset-date-too-small request-property-then-added request-property-type-changed request-property-unevaluated-items-added
  request-property-unevaluated-properties-added request-property-x-extensible-enum-value-removed required-response-header-removed
  response-body-became-nullable response-body-const-changed response-body-const-removed response-body-contains-removed
  response-body-content-encoding-changed response-body-content-media-type-changed response-body-content-schema-removed
  response-body-dependent-required-changed response-body-dependent-required-removed response-body-dependent-schema-removed response-body-else-removed
  response-body-exclusive-max-increased response-body-exclusive-min-decreased response-body-if-removed response-body-list-of-types-widened
  response-body-max-contains-increased response-body-max-increased response-body-max-length-increased response-body-max-length-unset
  response-body-min-contains-decreased response-body-min-decreased response-body-min-items-decreased response-body-min-items-unset
  response-body-min-length-decreased response-body-one-of-added response-body-pattern-property-removed response-body-prefix-items-added
  response-body-property-names-removed response-body-then-removed response-body-type-changed response-body-type-generalized
  response-body-unevaluated-items-removed response-body-unevaluated-properties-removed response-body-wrapped-in-one-of
  response-header-became-nullable response-header-became-optional response-header-type-changed response-header-type-generalized
  response-media-type-name-generalized response-media-type-removed response-property-became-nullable response-property-became-optional
  response-property-const-changed response-property-const-removed response-property-contains-removed response-property-content-encoding-changed
  response-property-content-media-type-changed response-property-content-schema-removed response-property-dependent-required-changed
  response-property-dependent-required-removed response-property-dependent-schema-removed response-property-deprecated-sunset-invalid
  response-property-deprecated-sunset-missing response-property-else-removed response-property-exclusive-max-increased
  response-property-exclusive-min-decreased response-property-if-removed response-property-list-of-types-widened
  response-property-max-contains-increased response-property-max-increased response-property-max-length-increased response-property-max-length-unset
  response-property-min-contains-decreased response-property-min-decreased response-property-min-items-decreased response-property-min-items-unset
  response-property-min-length-decreased response-property-one-of-added response-property-pattern-property-removed
  response-property-prefix-items-added response-property-property-names-removed response-property-stability-decreased
  response-property-sunset-date-too-small response-property-then-removed response-property-type-changed response-property-type-generalized
  response-property-unevaluated-items-removed response-property-unevaluated-properties-removed response-required-property-removed
  response-success-status-removed sunset-deleted webhook-removed
`);
const WARN = ids(`
  optional-response-header-removed request-body-all-of-removed request-body-exclusive-max-set request-body-exclusive-min-set
  request-body-max-length-set request-body-max-set request-body-min-items-set request-body-min-set request-parameter-exclusive-max-set
  request-parameter-exclusive-min-set request-parameter-max-length-set request-parameter-max-set request-parameter-min-items-set
  request-parameter-min-set request-parameter-pattern-changed request-parameter-property-type-changed request-parameter-removed
  request-property-all-of-removed request-property-exclusive-max-set request-property-exclusive-min-set request-property-max-length-set
  request-property-max-set request-property-min-items-set request-property-min-set request-property-pattern-changed request-property-removed
  response-body-media-type-schema-removed response-optional-property-removed response-property-enum-value-added
  response-required-property-became-not-write-only
`);
const INFO = ids(`
  api-global-security-added api-global-security-removed api-global-security-scope-added api-global-security-scope-removed
  api-major-version-not-bumped api-operation-id-added api-operation-id-removed api-path-removed-with-deprecation api-removed-with-deprecation
  api-schema-removed api-security-added api-security-component-added api-security-component-oauth-scope-added
  api-security-component-oauth-scope-changed api-security-component-oauth-scope-removed api-security-component-oauth-token-url-changed
  api-security-component-oauth-url-changed api-security-component-removed api-security-component-type-changed api-security-removed
  api-security-scope-added api-security-scope-removed api-stability-increased api-tag-added api-tag-removed api-version-decreased
  api-version-not-bumped endpoint-added endpoint-deprecated endpoint-deprecated-with-sunset endpoint-reactivated
  new-optional-request-default-parameter-to-existing-path new-optional-request-parameter new-optional-request-property request-body-added-optional
  request-body-all-of-added-annotation-only request-body-all-of-removed-annotation-only request-body-any-of-added request-body-became-nullable
  request-body-became-optional request-body-const-removed request-body-contains-removed request-body-content-schema-removed
  request-body-default-value-added request-body-default-value-changed request-body-default-value-removed request-body-dependent-required-removed
  request-body-dependent-schema-removed request-body-discriminator-added request-body-discriminator-mapping-added
  request-body-discriminator-mapping-changed request-body-discriminator-mapping-deleted request-body-discriminator-property-name-changed
  request-body-discriminator-removed request-body-else-removed request-body-exclusive-max-increased request-body-exclusive-min-decreased
  request-body-if-removed request-body-list-of-types-widened request-body-max-contains-increased request-body-max-increased
  request-body-max-length-increased request-body-media-type-added request-body-media-type-schema-removed request-body-min-contains-decreased
  request-body-min-decreased request-body-min-length-decreased request-body-one-of-added request-body-pattern-property-removed
  request-body-prefix-items-added request-body-property-names-removed request-body-then-removed request-body-type-compatible
  request-body-type-generalized request-body-unevaluated-items-removed request-body-unevaluated-properties-removed
  request-optional-property-became-not-read-only request-optional-property-became-not-write-only request-optional-property-became-read-only
  request-optional-property-became-write-only request-parameter-became-nullable request-parameter-became-optional request-parameter-deprecated
  request-parameter-enum-value-added request-parameter-exclusive-max-increased request-parameter-exclusive-min-decreased
  request-parameter-list-of-types-widened request-parameter-max-increased request-parameter-max-items-increased
  request-parameter-max-length-increased request-parameter-min-decreased request-parameter-min-items-decreased request-parameter-min-length-decreased
  request-parameter-pattern-generalized request-parameter-pattern-removed request-parameter-property-became-nullable
  request-parameter-property-enum-value-added request-parameter-property-list-of-types-widened request-parameter-property-type-generalized
  request-parameter-reactivated request-parameter-removed-with-deprecation request-parameter-type-generalized
  request-property-all-of-added-annotation-only request-property-all-of-removed-annotation-only request-property-any-of-added
  request-property-became-nullable request-property-became-optional request-property-const-removed request-property-contains-removed
  request-property-content-schema-removed request-property-default-value-added request-property-default-value-changed
  request-property-default-value-removed request-property-dependent-required-removed request-property-dependent-schema-removed
  request-property-deprecated request-property-deprecated-with-sunset request-property-discriminator-added
  request-property-discriminator-mapping-added request-property-discriminator-mapping-changed request-property-discriminator-mapping-deleted
  request-property-discriminator-property-name-changed request-property-discriminator-removed request-property-else-removed
  request-property-enum-value-added request-property-exclusive-max-increased request-property-exclusive-min-decreased request-property-if-removed
  request-property-list-of-types-widened request-property-max-contains-increased request-property-max-increased request-property-max-length-increased
  request-property-min-contains-decreased request-property-min-decreased request-property-min-length-decreased request-property-one-of-added
  request-property-pattern-generalized request-property-pattern-property-removed request-property-pattern-removed request-property-prefix-items-added
  request-property-property-names-removed request-property-reactivated request-property-stability-increased request-property-then-removed
  request-property-type-compatible request-property-type-generalized request-property-unevaluated-items-removed
  request-property-unevaluated-properties-removed request-read-only-property-enum-value-removed request-read-only-property-exclusive-max-decreased
  request-read-only-property-exclusive-min-increased request-read-only-property-max-decreased request-read-only-property-max-length-decreased
  request-read-only-property-min-increased request-required-property-became-not-read-only request-required-property-became-not-write-only
  request-required-property-became-read-only request-required-property-became-write-only response-body-all-of-added
  response-body-all-of-added-annotation-only response-body-all-of-removed response-body-all-of-removed-annotation-only response-body-any-of-added
  response-body-any-of-removed response-body-became-not-nullable response-body-const-added response-body-contains-added
  response-body-content-schema-added response-body-default-value-added response-body-default-value-changed response-body-default-value-removed
  response-body-dependent-required-added response-body-dependent-schema-added response-body-discriminator-added
  response-body-discriminator-mapping-added response-body-discriminator-mapping-changed response-body-discriminator-mapping-deleted
  response-body-discriminator-property-name-changed response-body-discriminator-removed response-body-else-added response-body-if-added
  response-body-list-of-types-narrowed response-body-max-contains-decreased response-body-media-type-schema-added
  response-body-min-contains-increased response-body-one-of-removed response-body-pattern-property-added response-body-prefix-items-removed
  response-body-property-names-added response-body-then-added response-body-type-compatible response-body-type-specialized
  response-body-unevaluated-items-added response-body-unevaluated-properties-added response-header-added response-header-became-not-nullable
  response-header-type-compatible response-header-type-specialized response-media-type-added response-media-type-name-changed
  response-media-type-name-specialized response-mediatype-enum-value-removed response-non-success-status-added response-non-success-status-removed
  response-optional-property-added response-optional-property-became-not-read-only response-optional-property-became-not-write-only
  response-optional-property-became-read-only response-optional-property-became-write-only response-optional-write-only-property-added
  response-optional-write-only-property-removed response-property-all-of-added response-property-all-of-added-annotation-only
  response-property-all-of-removed response-property-all-of-removed-annotation-only response-property-any-of-added response-property-any-of-removed
  response-property-became-not-nullable response-property-became-required response-property-const-added response-property-contains-added
  response-property-content-schema-added response-property-default-value-added response-property-default-value-changed
  response-property-default-value-removed response-property-dependent-required-added response-property-dependent-schema-added
  response-property-deprecated response-property-deprecated-with-sunset response-property-discriminator-added
  response-property-discriminator-mapping-added response-property-discriminator-mapping-changed response-property-discriminator-mapping-deleted
  response-property-discriminator-property-name-changed response-property-discriminator-removed response-property-else-added
  response-property-enum-value-removed response-property-if-added response-property-list-of-types-narrowed response-property-max-contains-decreased
  response-property-min-contains-increased response-property-one-of-removed response-property-pattern-added response-property-pattern-changed
  response-property-pattern-property-added response-property-pattern-removed response-property-prefix-items-removed
  response-property-property-names-added response-property-reactivated response-property-stability-increased response-property-then-added
  response-property-type-compatible response-property-type-specialized response-property-unevaluated-items-added
  response-property-unevaluated-properties-added response-required-property-added response-required-property-became-not-read-only
  response-required-property-became-read-only response-required-property-became-write-only response-required-write-only-property-added
  response-required-write-only-property-removed response-success-status-added response-write-only-property-became-optional
  response-write-only-property-became-required response-write-only-property-enum-value-added webhook-added
`);

/** oasdiff rule id → default level. */
export const OASDIFF_LEVELS: ReadonlyMap<string, OasdiffLevel> = new Map<string, OasdiffLevel>([
  ...ERR.map((id) => [id, 'ERR'] as [string, OasdiffLevel]),
  ...WARN.map((id) => [id, 'WARN'] as [string, OasdiffLevel]),
  ...INFO.map((id) => [id, 'INFO'] as [string, OasdiffLevel]),
]);
