import type { Node } from 'web-tree-sitter';

/**
 * Where text ranges sit in a syntax tree, found by one walk down the tree in text order instead of a
 * search from the root per range.
 *
 * Why: tree-sitter's `descendantForIndex` and `Node.parent` both start at the root and walk down, so each
 * costs the node's depth. Asked once per identifier of a deeply nested expression — `f(f(f(…)))`, or
 * `a + a + … + a` (a left-deep tree without a single bracket) — that is quadratic in the file: a 150 KB
 * file of 50,000 nested calls held the indexer for 85 s of CPU, and 1 MiB files (the parse limit) for
 * hours. Anyone who can push a branch that gets reviewed can write such a file. Here the path to the
 * last node found is kept, and the ranges are visited in text order: each node is entered once at most.
 */

/** The deepest node containing one range, and its parent's type (what `descendantForIndex` + `.parent` told). */
export interface Located {
  start: number;
  end: number;
  type: string;
  /** 0-based row of the node's start. */
  row: number;
  /** The parent's type (null at the root). */
  parentType: string | null;
  /**
   * The parent's first named child's range, when the parent's type is one of `firstNamedUnder` (null
   * otherwise, or when it has none).
   */
  parentFirstNamed: readonly [number, number] | null;
  /** The node's parent, grandparent and great-grandparent, nearest first (fewer near the root). */
  ancestors: Node[];
}

/** A range [start, end) (end > start), and optionally the id of the node to stop at (`Node.id`) instead of the deepest. */
export type Target = readonly [start: number, end: number, nodeId?: number];

/**
 * For each of `ranges` (in any order; they may repeat but must not overlap otherwise), the deepest node of
 * `root`'s tree containing it — as `descendantForIndex` finds it — or the node with the range's id when it
 * has one; null when `root` does not contain it. The path from the root to the last node found is kept:
 * the next range (in text order) climbs it only as far as a node containing that range, and descends from
 * there one level per call (`firstChildForIndex`: tree-sitter skips the children before the range). A node
 * is entered at most once, so the work is linear in the tree, whatever its depth.
 */
export function locateRanges(root: Node, ranges: ReadonlyArray<Target>, firstNamedUnder?: ReadonlySet<string>): Array<Located | null> {
  const out: Array<Located | null> = new Array(ranges.length).fill(null);
  if (ranges.length === 0) return out;
  const order = ranges.map((_, i) => i).sort((a, b) => ranges[a][0] - ranges[b][0] || ranges[a][1] - ranges[b][1]);
  const path: Node[] = [root];
  let previous: Located | null = null;
  let previousRange: Target | null = null;
  for (const i of order) {
    const range = ranges[i];
    const [start, end, nodeId] = range;
    if (previousRange && previousRange[0] === start && previousRange[1] === end && previousRange[2] === nodeId) {
      out[i] = previous;
      continue;
    }
    previousRange = range;
    // Up: to the nearest node of the path that contains the range.
    while (path.length > 0 && !contains(path[path.length - 1], start, end)) path.pop();
    if (path.length === 0) {
      path.push(root);
      out[i] = previous = null;
      continue;
    }
    // Down: the one child containing the range, while there is one (or to the node asked for).
    for (;;) {
      const node = path[path.length - 1];
      if (nodeId !== undefined && node.id === nodeId) break;
      const child = node.firstChildForIndex(start);
      if (!child || !contains(child, start, end)) break;
      path.push(child);
    }
    const node = path[path.length - 1];
    const parent = path.length > 1 ? path[path.length - 2] : null;
    const first = parent && firstNamedUnder?.has(parent.type) ? parent.firstNamedChild : null;
    out[i] = previous = {
      start: node.startIndex,
      end: node.endIndex,
      type: node.type,
      row: node.startPosition.row,
      parentType: parent ? parent.type : null,
      parentFirstNamed: first ? [first.startIndex, first.endIndex] : null,
      ancestors: path.slice(Math.max(0, path.length - 4), path.length - 1).reverse(),
    };
  }
  return out;
}

const contains = (n: Node, start: number, end: number) => n.startIndex <= start && n.endIndex >= end;
