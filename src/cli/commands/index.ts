import type { Command } from 'commander';
import * as core from './core';
import * as review from './review';
import * as token from './token';
import * as mcp from './mcp';
import * as visualDiff from './visual-diff';
import * as indexCode from './index-code';
import * as compute from './compute';
import * as publish from './publish';
import * as contractDiff from './contract-diff';
import * as contextPacks from './context-pack';
import * as demo from './demo';
import * as readModels from './read-models';
import * as backup from './backup';

/** Every CLI subcommand module, one line each. */
export const CLI_MODULES: Array<{ register(program: Command): void }> = [
  core,
  review,
  token,
  mcp,
  visualDiff,
  indexCode,
  compute,
  publish,
  contractDiff,
  contextPacks,
  demo,
  readModels,
  backup,
];
