import type { CohortData } from '../events/catalogue/compute';
import { BOUNDS, clipText } from '../events/catalogue/bounds';
import type { CodeGraph } from '../codegraph/graph';
import type { FormationInput } from './types';
import { pushTo } from './group';

type Clue = CohortData['clues'][number];
type DependencyDiff = FormationInput['dependencyDiffs'][number];
type DependencyChange = DependencyDiff['changes'][number];

/**
 * Python distributions whose import name is not their (normalized) distribution name. Only widely used
 * ones: a miss here costs precision (the change goes to the component's riskiest cohort), never a clue.
 */
const PYTHON_IMPORT_NAMES: Record<string, string[]> = {
  pyyaml: ['yaml'],
  pillow: ['PIL'],
  beautifulsoup4: ['bs4'],
  'scikit-learn': ['sklearn'],
  'python-dateutil': ['dateutil'],
  'opencv-python': ['cv2'],
  'opencv-python-headless': ['cv2'],
  protobuf: ['google.protobuf'],
  attrs: ['attr', 'attrs'],
  'typing-extensions': ['typing_extensions'],
  'python-dotenv': ['dotenv'],
  pyjwt: ['jwt'],
  pymysql: ['pymysql'],
  'psycopg2-binary': ['psycopg2'],
};

/**
 * The package names a module specifier (as written in an import) may belong to, in `importNamesOf`'s
 * spelling: the package root for npm, every path prefix for Go modules, every dotted prefix for Python,
 * the crate for Cargo, the package of a Dart `package:` URI. Matching is then a set look-up, so a PR with
 * many imports and many dependency changes costs their sum, not their product.
 */
function packagesOf(ecosystem: string, spec: string): string[] {
  const prefixes = (parts: string[], sep: string) => parts.map((_, i) => parts.slice(0, i + 1).join(sep));
  switch (ecosystem) {
    case 'npm': {
      if (spec.startsWith('.') || spec.startsWith('/')) return [];
      const parts = spec.split('/');
      return [spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]];
    }
    case 'go':
      return prefixes(spec.split('/'), '/');
    case 'cargo':
      return [spec.split('::')[0]];
    case 'python':
      return prefixes(spec.split('.'), '.');
    case 'dart': {
      const m = /^package:([^/]+)\//.exec(spec);
      return m ? [m[1]] : [];
    }
    default:
      return [];
  }
}

/** The names an import of the dependency `name` shows as (packagesOf's spelling). */
function importNamesOf(ecosystem: string, name: string): string[] {
  switch (ecosystem) {
    case 'npm':
      // `@types/x` types the package `x` (`@types/scope__x` types `@scope/x`).
      if (name.startsWith('@types/')) return [name, name.slice(7).includes('__') ? `@${name.slice(7).replace('__', '/')}` : name.slice(7)];
      return [name];
    case 'cargo':
      return [name.replace(/-/g, '_')];
    case 'python': {
      const normalized = name.toLowerCase().replace(/[-_.]+/g, '-');
      return PYTHON_IMPORT_NAMES[normalized] ?? [normalized.replace(/-/g, '_')];
    }
    default:
      return [name];
  }
}

/** Does the module specifier `spec` (as written in an import) load the package `name` of `ecosystem`? */
export function importsPackage(ecosystem: string, name: string, spec: string): boolean {
  const loaded = new Set(packagesOf(ecosystem, spec));
  return importNamesOf(ecosystem, name).some((n) => loaded.has(n));
}

/** The module specifiers a file imports on one side (nothing when that side has no index of it). */
function specifiersOf(graph: CodeGraph | undefined, file: string): string[] {
  return graph?.index.files.get(file)?.facts.imports.map((d) => d.source) ?? [];
}

/**
 * Manifests and locks are clues, not cohorts (SPEC §8.3). A dependency change goes to the cohorts whose
 * files import that package (on the head side, or the base side for a removed dependency or a deleted
 * file): a reviewer reading the cohort that starts using `lodash` sees that `lodash` was added. A change
 * no changed file imports (a dev tool bumped, a transitive pin) goes once, to the riskiest cohort of its
 * component, instead of being repeated under every cohort of it. `cohorts` are ranked already.
 */
export function attachDependencyClues(cohorts: CohortData[], input: FormationInput): void {
  const diffs = input.dependencyDiffs.filter((d) => !d.versionOnly && d.changes.length > 0);
  if (!diffs.length) return;
  const oldPathOf = new Map(input.files.filter((f) => f.oldPath).map((f) => [f.path, f.oldPath!]));
  const deleted = new Set(input.files.filter((f) => f.status === 'deleted').map((f) => f.path));
  const specs = cohorts.map((c) => ({
    head: c.files.flatMap((f) => (deleted.has(f) ? [] : specifiersOf(input.head, f))),
    base: c.files.flatMap((f) => specifiersOf(input.base, oldPathOf.get(f) ?? f)),
  }));
  // Per ecosystem, each cohort's imported packages on each side (computed once, looked up per change).
  const loadedBy = new Map<string, Array<{ head: Set<string>; base: Set<string> }>>();
  const loaded = (ecosystem: string) => {
    let sets = loadedBy.get(ecosystem);
    if (!sets) {
      const of = (list: string[]) => new Set(list.flatMap((spec) => packagesOf(ecosystem, spec)));
      sets = specs.map((s) => ({ head: of(s.head), base: of(s.base) }));
      loadedBy.set(ecosystem, sets);
    }
    return sets;
  };
  const inComponent = (file: string, component: string) => component === '' || file.startsWith(`${component}/`);
  const components = [...new Set(diffs.map((d) => d.component))];
  // A file belongs to the deepest component (manifest directory) containing it.
  const componentOf = (file: string) => components.filter((c) => inComponent(file, c)).sort((a, b) => b.length - a.length)[0];
  const attached = new Map<number, Clue[]>();
  const add = (i: number, clue: Clue) => pushTo(attached, i, clue);
  for (const d of diffs) {
    const mine = cohorts.map((c) => c.files.some((f) => componentOf(f) === d.component));
    const users = new Map<number, DependencyChange[]>();
    const unused: DependencyChange[] = [];
    const sets = loaded(d.ecosystem);
    for (const change of d.changes) {
      const names = importNamesOf(d.ecosystem, change.name);
      let used = false;
      cohorts.forEach((_, i) => {
        if (!mine[i]) return;
        const { head, base } = sets[i];
        const hit = (set: Set<string>) => names.some((n) => set.has(n));
        if (!(change.change === 'removed' ? hit(base) : change.change === 'added' ? hit(head) : hit(head) || hit(base))) return;
        pushTo(users, i, change);
        used = true;
      });
      if (!used) unused.push(change);
    }
    for (const [i, changes] of users) {
      add(i, { kind: 'dependency-diff', path: d.path, note: clipText(`${d.ecosystem} dependencies changed in ${d.path}, ${changes.length} change(s) this cohort imports: ${changes.map((c) => `${c.name} ${c.change}`).join(', ')}`, BOUNDS.note), dependencyChanges: changes });
    }
    if (unused.length) {
      // The riskiest cohort of the component (ranks are 1-based, riskiest first); none: the clue stays on the review's dependencyDiffs only.
      // A semantic cohort before a directory group of docs or other files.
      const first = cohorts
        .map((c, i) => ({ c, i }))
        .filter(({ i }) => mine[i])
        .sort((a, b) => Number(a.c.grouping !== 'semantic') - Number(b.c.grouping !== 'semantic') || a.c.rank - b.c.rank)[0];
      if (first) add(first.i, { kind: 'dependency-diff', path: d.path, note: clipText(`${d.ecosystem} dependencies changed in ${d.path}, ${unused.length} change(s) no changed file imports: ${unused.map((c) => `${c.name} ${c.change}`).join(', ')}`, BOUNDS.note), dependencyChanges: unused });
    }
  }
  for (const [i, clues] of attached) cohorts[i].clues = [...cohorts[i].clues, ...clues];
}
