import { z } from 'zod';
import { DomainError } from '../domain-error';
import { shaSchema } from '../events/catalogue/review';

/**
 * The fields of a GitHub delivery the ledger reads, and nothing else. Validating the whole payload
 * against `@octokit/webhooks-schemas` refused real deliveries that lack a newer field the ledger never
 * looks at: of the handled examples in `@octokit/webhooks-examples` (github.com and GHES 3.1–3.5) 12 of
 * 30 passed, and every GHES one got 400, so on GHES no head was ever observed. Objects here are loose:
 * extra fields pass through, and a field the ledger does not read may be missing.
 */
const loose = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape);
const optionalText = z.string().max(2000).nullish();

const pullRequestDelivery = loose({
  action: z.string(),
  number: z.number().int().positive(),
  repository: loose({ full_name: z.string().min(1).max(300) }),
  pull_request: loose({
    head: loose({ sha: shaSchema }),
    base: loose({ sha: shaSchema }),
    /** Orders deliveries (a missing one records the head unordered, as a client's observeHead does). */
    updated_at: z.string().max(100).nullish(),
  }),
});

const checkFields = {
  status: z.string().max(100),
  conclusion: z.string().max(100).nullish(),
  head_sha: shaSchema,
  pull_requests: z.array(loose({ number: z.number().int().positive() })).max(1000),
  completed_at: z.string().max(100).nullish(),
  updated_at: z.string().max(100).nullish(),
  html_url: optionalText,
  details_url: optionalText,
  url: optionalText,
};

const checkRunDelivery = loose({
  action: z.string(),
  repository: loose({ full_name: z.string().min(1).max(300) }),
  check_run: loose({ ...checkFields, name: z.string().min(1).max(2000) }),
});

const checkSuiteDelivery = loose({
  action: z.string(),
  repository: loose({ full_name: z.string().min(1).max(300) }),
  check_suite: loose({ ...checkFields, app: loose({ name: z.string().max(2000).nullish() }).nullish() }),
});

export type PullRequestDelivery = z.infer<typeof pullRequestDelivery>;
export type CheckRunDelivery = z.infer<typeof checkRunDelivery>;
export type CheckSuiteDelivery = z.infer<typeof checkSuiteDelivery>;

export const parsePullRequestDelivery = (action: string, payload: unknown): PullRequestDelivery => parseWith(pullRequestDelivery, 'pull_request', action, payload);
export const parseCheckRunDelivery = (action: string, payload: unknown): CheckRunDelivery => parseWith(checkRunDelivery, 'check_run', action, payload);
export const parseCheckSuiteDelivery = (action: string, payload: unknown): CheckSuiteDelivery => parseWith(checkSuiteDelivery, 'check_suite', action, payload);

/**
 * The payload checked for the fields the ledger reads; `invalid_webhook_payload` names the first field
 * that is missing or of the wrong kind, and the rule.
 */
function parseWith<T>(schema: z.ZodType<T>, event: string, action: string, payload: unknown): T {
  const r = schema.safeParse(payload);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue.path.map(String).join('.') || '(body)';
  throw new DomainError('invalid_webhook_payload', `${event}.${action}: ${field}: ${issue.message}`.slice(0, 600), { field });
}
