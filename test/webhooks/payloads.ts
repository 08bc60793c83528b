/**
 * Webhook payloads built from GitHub's own published examples (@octokit/openapi components.examples),
 * adjusted to the webhook shape where the REST and webhook schemas differ (a few repository fields),
 * so the tests send what GitHub sends (test/security/webhook-examples.test.ts sends every published example).
 */
const api = require('@octokit/openapi/generated/api.github.com.json') as { components: { examples: Record<string, { value: any }> } };
const schema = require('@octokit/webhooks-schemas/schema.json') as { definitions: Record<string, any> };

const example = (name: string): any => JSON.parse(JSON.stringify(api.components.examples[name].value));
const repoProps = new Set(Object.keys(schema.definitions.repository.properties));

function webhookRepository(rest: any): any {
  const kept = Object.fromEntries(Object.entries(rest).filter(([k]) => repoProps.has(k)));
  return { ...kept, is_template: false, web_commit_signoff_required: false, visibility: 'public', custom_properties: {}, topics: [] };
}

export const GITHUB_FULL_NAME = (example('pull-request').base.repo as { full_name: string }).full_name;

export function pullRequestPayload(action: 'opened' | 'reopened' | 'synchronize' | 'labeled', prNumber: number, baseSha: string, headSha: string): any {
  const pr = example('pull-request');
  pr.number = prNumber;
  pr.head.sha = headSha;
  pr.base.sha = baseSha;
  pr.head.repo = webhookRepository(pr.head.repo);
  pr.base.repo = webhookRepository(pr.base.repo);
  const payload: any = { action, number: prNumber, pull_request: pr, repository: pr.base.repo, sender: pr.user };
  if (action === 'synchronize') Object.assign(payload, { before: baseSha, after: headSha });
  if (action === 'labeled') payload.label = pr.labels[0];
  return payload;
}

export function checkRunCompletedPayload(prNumber: number, headSha: string, conclusion: string): any {
  const p = example('check-run-completed');
  // The same repository as the pull_request examples, so one registered repo receives both.
  p.repository = webhookRepository(example('pull-request').base.repo);
  p.check_run.head_sha = headSha;
  p.check_run.conclusion = conclusion;
  p.check_run.status = 'completed';
  p.check_run.pull_requests = p.check_run.pull_requests.slice(0, 1).map((x: any) => ({ ...x, number: prNumber }));
  return p;
}

export function checkSuiteCompletedPayload(prNumber: number, headSha: string, conclusion: string): any {
  const suite = example('check-suite');
  // The REST example embeds its repository; the webhook's check_suite does not.
  delete suite.repository;
  suite.head_sha = headSha;
  suite.status = 'completed';
  suite.conclusion = conclusion;
  suite.pull_requests = example('check-run-completed').check_run.pull_requests.slice(0, 1).map((x: any) => ({ ...x, number: prNumber }));
  const pr = example('pull-request');
  return { action: 'completed', check_suite: suite, repository: webhookRepository(pr.base.repo), sender: pr.user };
}
