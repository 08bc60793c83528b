import { signInHint } from '../../src/web/client/sign-in-hint';

const text = (ws: string) => signInHint(ws).map((p) => p.text).join('');

describe("the Review page's sign-in hint names a way to a token for its own workspace (issue 38)", () => {
  test('a workspace other than default: the admin commands for it, no owner-token file (which holds default\'s token only)', () => {
    expect(text('acme')).toBe(
      'Sign in with an API token of workspace acme. An admin of the workspace issues you one: review-ledger member add --workspace acme --principal user:<you> --role viewer, then review-ledger token create --workspace acme --principal user:<you> --role viewer.',
    );
    expect(text('acme')).not.toContain('owner-token');
  });

  test('default: the first start\'s owner-token file, and the same commands', () => {
    expect(text('default')).toContain('On the server host the first start wrote its owner token to <dataDir>/owner-token.');
    expect(text('default')).toContain('review-ledger token create --workspace default');
  });
});
