/**
 * Where a person gets a token for the workspace whose Review page asks for one (issue 38: every page
 * pointed to `<dataDir>/owner-token`, which holds the token of the first start's `default` workspace only).
 * Plain text parts: the page wraps the commands in <code>.
 */
export function signInHint(workspaceId: string): Array<{ text: string; code?: boolean }> {
  const issue = [
    { text: 'An admin of the workspace issues you one: ' },
    { text: `review-ledger member add --workspace ${workspaceId} --principal user:<you> --role viewer`, code: true },
    { text: ', then ' },
    { text: `review-ledger token create --workspace ${workspaceId} --principal user:<you> --role viewer`, code: true },
    { text: '.' },
  ];
  if (workspaceId !== 'default') return [{ text: `Sign in with an API token of workspace ` }, { text: workspaceId, code: true }, { text: '. ' }, ...issue];
  return [
    { text: 'Sign in with an API token of workspace ' },
    { text: workspaceId, code: true },
    { text: '. On the server host the first start wrote its owner token to ' },
    { text: '<dataDir>/owner-token', code: true },
    { text: '. ' },
    ...issue,
  ];
}
