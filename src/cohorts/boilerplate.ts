import * as path from 'node:path';
import * as fs from 'node:fs';

/**
 * Boilerplate lines (issue #40): normalized changed lines (`editKey`'s text) that recur across many repositories'
 * histories (`defer resp.Body.Close()`, `if err != nil {`, `import React from 'react'`), learned from the corpus's
 * training repositories by bench/learn-boilerplate.ts. Two files adding or removing one of them is no evidence of one
 * piece of work: `similar-edit` ignores them (the `boilerplate-lines` input signal).
 */
export interface BoilerplateLines {
  version: string;
  /** The newest HEAD commit date of the repositories read (YYYY-MM-DD). */
  date: string;
  /** A line is boilerplate when found in at least this many source repositories (0: none is). */
  threshold: number;
  method: string;
  sourceRepos: string[];
  /** [text, repositories, commits], most repositories first. */
  lines: Array<[string, number, number]>;
}

export const BOILERPLATE_FILE = path.join(__dirname, 'boilerplate-lines.json');

let loaded: BoilerplateLines | undefined;
/** The committed list (read once). */
export function boilerplateLines(): BoilerplateLines {
  loaded ??= JSON.parse(fs.readFileSync(BOILERPLATE_FILE, 'utf8')) as BoilerplateLines;
  return loaded;
}

/** The texts found in at least `threshold` repositories (default: the committed threshold; 0 or less: none). */
export function boilerplateSet(threshold = boilerplateLines().threshold): Set<string> {
  if (threshold <= 0) return new Set();
  return new Set(boilerplateLines().lines.filter(([, r]) => r >= threshold).map(([t]) => t));
}
