import { formCohorts } from '../../src/cohorts';
import type { FormationFile, FormationInput } from '../../src/cohorts';

/** Changed TypeScript files with no index: formation sees only what the input's signals give it. */
const files = (): FormationFile[] => ['src/a.ts', 'src/b.ts', 'lib/c.ts'].map((p) => ({ path: p, status: 'modified', role: 'source', language: 'typescript', fragments: [] }));
const grouped = (input: FormationInput) => formCohorts(input).map((c) => c.files.join(',')).sort();

describe('the signals that are off by default (measured and kept for the evaluation)', () => {
  it('directory: loners of one directory join, with a reason that says the link is weak; without it each file stands alone', () => {
    expect(grouped({ files: files(), dependencyDiffs: [], signals: [] })).toEqual(['lib/c.ts', 'src/a.ts', 'src/b.ts']);
    const cohorts = formCohorts({ files: files(), dependencyDiffs: [], signals: ['directory'] });
    expect(cohorts.map((c) => c.files.join(',')).sort()).toEqual(['lib/c.ts', 'src/a.ts,src/b.ts']);
    expect(cohorts.find((c) => c.files.length === 2)!.groupingReason).toBe('same directory, no link (weak): no resolved link; both in src/');
  });

  it('co-change: files earlier commits changed together join, and the reason gives the history; a pair outside the change is ignored', () => {
    const coChange = [{ a: 'src/a.ts', b: 'lib/c.ts', together: 4, window: 5 }, { a: 'src/b.ts', b: 'gone.ts', together: 5, window: 5 }];
    expect(grouped({ files: files(), dependencyDiffs: [], signals: [], coChange })).toEqual(['lib/c.ts', 'src/a.ts', 'src/b.ts']);
    const cohorts = formCohorts({ files: files(), dependencyDiffs: [], signals: ['co-change'], coChange });
    expect(cohorts.map((c) => c.files.join(',')).sort()).toEqual(['lib/c.ts,src/a.ts', 'src/b.ts']);
    expect(cohorts.find((c) => c.files.length === 2)!.groupingReason).toBe('co-change history (weaker): a.ts and c.ts changed together in 4 of the last 5 commits');
  });

  it('co-change acts before directory: a file it joined is no loner', () => {
    const coChange = [{ a: 'src/a.ts', b: 'lib/c.ts', together: 4, window: 5 }];
    expect(grouped({ files: files(), dependencyDiffs: [], signals: ['co-change', 'directory'], coChange })).toEqual(['lib/c.ts,src/a.ts', 'src/b.ts']);
  });
});
