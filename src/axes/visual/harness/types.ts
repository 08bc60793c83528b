import type { GitRepo } from '../../../git/repo';
import type { VisualSnapshot } from '../../types';

export type HarnessName = VisualSnapshot['harness'];

export interface ChangedPath {
  status: string;
  path: string;
  oldPath?: string;
}

export interface HarnessInput {
  repo: GitRepo;
  baseSha: string;
  headSha: string;
  changedFiles: ChangedPath[];
}

/**
 * What a harness produced for one PR. `ok`: for base and head, snapshotId → PNG bytes (a snapshot
 * only on one side is added/removed). `unavailable`: the harness applies but could not produce images;
 * the reason says why. `not_applicable`: the PR touches nothing this harness covers.
 */
export type HarnessOutcome =
  | { harness: HarnessName; status: 'ok'; base: Map<string, Uint8Array>; head: Map<string, Uint8Array> }
  | { harness: HarnessName; status: 'unavailable'; reason: string }
  | { harness: HarnessName; status: 'not_applicable' };
