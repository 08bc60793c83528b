import type { Command } from 'commander';
import * as core from './core';

/** Every CLI subcommand module, one line each. */
export const CLI_MODULES: Array<{ register(program: Command): void }> = [
  core,
];
