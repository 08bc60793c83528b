import type { CohortData } from '../events/catalogue/compute';
import { BOUNDS, clipText } from '../events/catalogue/bounds';
import type { CodeGraph } from '../codegraph/graph';
import type { FormationInput } from './types';

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

/** Does the module specifier `spec` (as written in an import) load the package `name` of `ecosystem`? */
export function importsPackage(ecosystem: string, name: string, spec: string): boolean {
  switch (ecosystem) {
    case 'npm': {
      if (spec === name || spec.startsWith(`${name}/`)) return true;
      // `@types/x` types the package `x` (`@types/scope__x` types `@scope/x`).
      if (name.startsWith('@types/')) {
        const typed = name.slice(7).includes('__') ? `@${name.slice(7).replace('__', '/')}` : name.slice(7);
        return spec === typed || spec.startsWith(`${typed}/`);
      }
      return false;
    }
    case 'go':
      return spec === name || spec.startsWith(`${name}/`);
    case 'cargo': {
      const crate = name.replace(/-/g, '_');
      return spec === crate || spec.startsWith(`${crate}::`);
    }
    case 'python': {
      const normalized = name.toLowerCase().replace(/[-_.]+/g, '-');
      const modules = PYTHON_IMPORT_NAMES[normalized] ?? [normalized.replace(/-/g, '_')];
      return modules.some((m) => spec === m || spec.startsWith(`${m}.`));
    }
    case 'dart':
      return spec.startsWith(`package:${name}/`);
    default:
      return false;
  }
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
  const imports = cohorts.map((c) => {
    const head = c.files.flatMap((f) => (deleted.has(f) ? [] : specifiersOf(input.head, f)));
    const base = c.files.flatMap((f) => specifiersOf(input.base, oldPathOf.get(f) ?? f));
    return { head, base };
  });
  const inComponent = (file: string, component: string) => component === '' || file.startsWith(`${component}/`);
  const components = [...new Set(diffs.map((d) => d.component))];
  // A file belongs to the deepest component (manifest directory) containing it.
  const componentOf = (file: string) => components.filter((c) => inComponent(file, c)).sort((a, b) => b.length - a.length)[0];
  const attached = new Map<number, Clue[]>();
  const add = (i: number, clue: Clue) => attached.set(i, [...(attached.get(i) ?? []), clue]);
  for (const d of diffs) {
    const mine = cohorts.map((c) => c.files.some((f) => componentOf(f) === d.component));
    const users = new Map<number, DependencyChange[]>();
    const unused: DependencyChange[] = [];
    for (const change of d.changes) {
      let used = false;
      cohorts.forEach((_, i) => {
        if (!mine[i]) return;
        const specs = change.change === 'removed' ? imports[i].base : change.change === 'added' ? imports[i].head : [...imports[i].head, ...imports[i].base];
        if (!specs.some((s) => importsPackage(d.ecosystem, change.name, s))) return;
        users.set(i, [...(users.get(i) ?? []), change]);
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
