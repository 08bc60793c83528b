import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./index-code.actions') => require('./index-code.actions');

/** `repo register` and `index`: register a local work tree, index a commit with a progress bar. */
export function register(program: Command): void {
  const repo = program.command('repo').description('Registered git repositories (SPEC §1)');
  repo
    .command('register')
    .description('Register a local git work tree; the forge is read from its origin remote, or from --remote-url / --forge')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'repo id to register it under')
    .requiredOption('--path <dir>', 'path of the git work tree')
    .option('--default-branch <name>', 'default branch')
    .option('--remote-url <url>', 'the forge URL (https://host/owner/name) when origin does not tell it (a clone of a local path, no origin)')
    .option('--forge <kind>', 'github | gitlab | bitbucket, when the remote host does not say which')
    .action((opts: { workspace: string; repo: string; path: string; defaultBranch?: string; remoteUrl?: string; forge?: string }, cmd: Command) => actions().registerRepo(opts, cmd));

  program
    .command('index')
    .description('Index a commit of a registered repo with web-tree-sitter (cached by blob SHA)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'registered repo id')
    .option('--commit <ref>', 'commit to index (default: default branch or HEAD)')
    .action((opts: { workspace: string; repo: string; commit?: string }, cmd: Command) => actions().indexCommit(opts, cmd));
}
