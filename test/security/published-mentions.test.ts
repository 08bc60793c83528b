import { renderBody, renderFinding, type PublishedFinding } from '../../src/publish/render';
import { defuseProse } from '../../src/publish/output-hygiene';

const ZWJ = '\u200d';

const finding = (over: Partial<PublishedFinding['node']> = {}): PublishedFinding => ({
  nodeId: 'n1',
  fingerprint: 'f'.repeat(64),
  alsoFoundBy: [],
  duplicateNodeIds: [],
  node: {
    kind: 'bug',
    priority: 'P1',
    triage: { category: 'security', severity: 'high', effort: 'small' },
    confidence: 0.9,
    title: 'Ping @octocat',
    body: 'Body.',
    reviewer: { principal: 'agent:alice', brief: 'security' },
    ...over,
  },
});

/**
 * Issue 36: published review text did not neutralize `@mentions` or HTML written by agents, so an agent's
 * finding could notify any user or team in the publisher's name and render a tracking image or hidden
 * comment. Prose is neutralized outside code; code spans, fences and one-click suggestions stay exact.
 */
describe('published text mentions no one and renders no HTML from agents', () => {
  it('a mention gets a zero-width joiner after its @, and < becomes &lt; — outside code only', () => {
    expect(defuseProse('cc @octocat and @acme/security-team, mail a@b.example')).toBe(`cc @${ZWJ}octocat and @${ZWJ}acme/security-team, mail a@b.example`);
    expect(defuseProse('@lead first')).toBe(`@${ZWJ}lead first`);
    expect(defuseProse('<img src="https://t.example/p.gif"><!-- hidden -->')).toBe('&lt;img src="https://t.example/p.gif">&lt;!-- hidden -->');
    expect(defuseProse('keep `@decorator <T>` and ``a ` @x <b>`` as code')).toBe('keep `@decorator <T>` and ``a ` @x <b>`` as code');
    expect(defuseProse('```ts\n@Injectable() class A<T> {}\n```\nthen @bob')).toBe(`\`\`\`ts\n@Injectable() class A<T> {}\n\`\`\`\nthen @${ZWJ}bob`);
    expect(defuseProse('an unmatched ` then @x <y>')).toBe(`an unmatched \` then @${ZWJ}x &lt;y>`);
  });

  it('in a published finding: title, body and credits are neutralized; a suggestion is committed verbatim', () => {
    const text = renderFinding(
      {
        ...finding({ title: '@security-team <b>urgent</b>', body: 'Ask @octocat. <img src=x onerror=alert(1)> See `a<b>`.', fix: { replacementLines: ['@Input() name = "<b>"'] } }),
        alsoFoundBy: [{ nodeId: 'n2', principal: 'agent:bob', brief: 'qa @octocat' }],
      },
      { suggestionApplies: true },
    );
    expect(text).toContain(`**@${ZWJ}security-team &lt;b>urgent&lt;/b>**`);
    expect(text).toContain(`Ask @${ZWJ}octocat. &lt;img src=x onerror=alert(1)> See \`a<b>\`.`);
    expect(text).toContain(`Also found by agent:bob (qa @${ZWJ}octocat).`);
    expect(text).toContain('```suggestion\n@Input() name = "<b>"\n```');
    expect(text).not.toMatch(/(^|[^\u200d`])@octocat/);
  });

  it('in the review body: the walkthrough, folded titles and the compact list', () => {
    const body = renderBody({ key: 'rl1-' + 'c'.repeat(40), verdict: 'Hold', confidence: 0.5, walkthrough: 'Summary for @maintainers <script>x</script>', inlineCount: 0, folded: [{ finding: finding(), reason: 'no_anchor' }] });
    expect(body).toContain(`Summary for @${ZWJ}maintainers &lt;script>x&lt;/script>`);
    expect(body).toContain(`#### Ping @${ZWJ}octocat`);
    expect(body).not.toContain('@octocat');
    expect(body).not.toContain('<script>');
  });
});
