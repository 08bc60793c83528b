import * as path from 'node:path';
import { BOUNDS, clipId, clipText } from '../events/catalogue/bounds';
import type { DependencyDiffData } from '../events/catalogue/compute';
import { DependencyMap, manifestKindOf } from './manifests';

type Change = DependencyDiffData['changes'][number];

/** First dotted number in a version spec (`^1.2.3`, `>=2.0`, `v1.4.0`, `~> 3.1`); undefined when there is none. */
export function parseVersion(spec: string): number[] | undefined {
  const m = /(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(spec);
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** Semver: a major bump, or for 0.x a minor bump (0.y is the breaking position). */
function isMajor(from: number[], to: number[]): boolean {
  if (from[0] !== to[0]) return true;
  return from[0] === 0 && from[1] !== to[1];
}

/** Pure diff of two dependency maps. */
export function diffDependencyMaps(base: DependencyMap, head: DependencyMap): Change[] {
  const changes: Change[] = [];
  for (const c of rawDependencyChanges(base, head)) {
    // Manifests are data from the repo: a 600-character package name must not sink the computation.
    const out: Change = { ...c, name: c.name ? clipId(c.name, BOUNDS.dependencyName) : '(empty name)' };
    if (c.from !== undefined) out.from = clipText(c.from, BOUNDS.dependencyVersion);
    if (c.to !== undefined) out.to = clipText(c.to, BOUNDS.dependencyVersion);
    if (c.group !== undefined) out.group = clipText(c.group, BOUNDS.dependencyGroup);
    changes.push(out);
  }
  return changes;
}

function rawDependencyChanges(base: DependencyMap, head: DependencyMap): Change[] {
  const changes: Change[] = [];
  const names = [...new Set([...base.keys(), ...head.keys()])].sort();
  for (const name of names) {
    const b = base.get(name);
    const h = head.get(name);
    const group = (h ?? b)!.group;
    const extra = group ? { group } : {};
    if (!b) changes.push({ name, change: 'added', to: h!.version, major: false, ...extra });
    else if (!h) changes.push({ name, change: 'removed', from: b.version, major: false, ...extra });
    else if (b.version !== h.version) {
      const from = parseVersion(b.version);
      const to = parseVersion(h.version);
      if (!from || !to || compare(from, to) === 0) changes.push({ name, change: 'changed', from: b.version, to: h.version, major: false, ...extra });
      else {
        const up = compare(from, to) < 0;
        changes.push({ name, change: up ? 'upgraded' : 'downgraded', from: b.version, to: h.version, major: isMajor(up ? from : to, up ? to : from), ...extra });
      }
    }
  }
  return changes;
}

/** A manifest's own `version` line (package.json `"version": …`, Cargo.toml `version = …`, pubspec `version: …`). */
const VERSION_LINE = /^\s*"?version"?\s*[:=]/;

/**
 * True when the two texts differ only in their own `version` line(s). Line by line: the same test as one
 * multiline regex `^\s*…` over the text, whose `\s*` crossed line breaks and so rescanned every run of
 * blank lines from each of its lines (a package.json followed by 80,000 newlines took 23 s).
 */
function onlyVersionChanged(base: string, head: string): boolean {
  if (base === head) return false;
  const split = (t: string) => {
    const rest: string[] = [];
    const versions: string[] = [];
    for (const line of t.split('\n')) (VERSION_LINE.test(line) ? versions : rest).push(line);
    return { rest: rest.join('\n').replace(/\s+/g, ' ').trim(), versions: versions.map((v) => v.trim()).join('\n') };
  };
  const b = split(base);
  const h = split(head);
  return b.rest === h.rest && b.versions !== h.versions;
}

export interface ManifestChange {
  path: string;
  oldPath?: string;
  status: string;
}

/**
 * Dependency diffs (SPEC §13) of the changed manifests and locks. `read(side, path)` returns the file
 * text at base or head (null when absent).
 */
export async function diffDependencies(files: ManifestChange[], read: (side: 'base' | 'head', p: string) => Promise<string | null>): Promise<DependencyDiffData[]> {
  const out: DependencyDiffData[] = [];
  for (const f of [...files].sort((a, b) => a.path.localeCompare(b.path))) {
    const kind = manifestKindOf(f.path);
    if (!kind) continue;
    const component = path.posix.dirname(f.path) === '.' ? '' : path.posix.dirname(f.path);
    const baseText = f.status === 'added' ? null : await read('base', f.oldPath ?? f.path);
    const headText = f.status === 'deleted' ? null : await read('head', f.path);
    const diff: DependencyDiffData = { ecosystem: kind.ecosystem, path: f.path, component, changes: [] };
    try {
      const baseMap = baseText === null ? new Map() : kind.parse(baseText);
      const headMap = headText === null ? new Map() : kind.parse(headText);
      diff.changes = diffDependencyMaps(baseMap, headMap);
      if (!diff.changes.length && baseText !== null && headText !== null && onlyVersionChanged(baseText, headText)) diff.versionOnly = true;
    } catch (e) {
      diff.error = clipText(`could not parse ${f.path}: ${(e as Error).message}`, BOUNDS.error);
    }
    out.push(diff);
  }
  return out;
}
