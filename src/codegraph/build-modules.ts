
/**
 * Build-system module boundaries (SPEC §8.1): C# projects (`.csproj`) and Gradle modules. A module owns the
 * files under its directory (the deepest module directory wins); a file sees the declarations of its own
 * module and of the modules its module depends on — for C#, every project reached through
 * `<ProjectReference>` (SDK-style references are transitive); for Gradle, the `project(":m")` dependencies of
 * its build file, and through them the `api` ones (`implementation` does not leak). Same-name declarations
 * of two modules therefore never meet unless one depends on the other.
 */
export interface BuildModule {
  /** Unique key: the .csproj path, or `<settings dir>|:a:b` for a Gradle module. */
  key: string;
  /** Repo-relative directory ("" for the root). */
  dir: string;
  /** Keys of the modules it depends on directly. */
  deps: string[];
  /** Of `deps`, those its dependents see too (`api`); undefined: all of them. */
  exported?: string[];
}

export class ModuleBoundaries {
  private readonly byDir: BuildModule[];
  private readonly byKey = new Map<string, BuildModule>();
  private readonly visible = new Map<string, Set<string>>();
  private readonly ofFile = new Map<string, string>();

  constructor(modules: BuildModule[]) {
    for (const m of modules) if (!this.byKey.has(m.key)) this.byKey.set(m.key, m);
    this.byDir = [...this.byKey.values()].sort((a, b) => b.dir.length - a.dir.length || a.key.localeCompare(b.key));
  }

  get size(): number {
    return this.byKey.size;
  }

  /** The module owning `file`; '' when it lies under none. */
  moduleOf(file: string): string {
    let key = this.ofFile.get(file);
    if (key === undefined) {
      key = this.byDir.find((m) => m.dir === '' || file.startsWith(`${m.dir}/`))?.key ?? '';
      this.ofFile.set(file, key);
    }
    return key;
  }

  /** The modules whose declarations code of `key` sees (itself included). */
  visibleFrom(key: string): Set<string> {
    let seen = this.visible.get(key);
    if (seen) return seen;
    seen = new Set([key]);
    const own = this.byKey.get(key);
    // Direct dependencies, then what each exposes onward.
    const queue = [...(own?.deps ?? [])];
    while (queue.length) {
      const k = queue.shift()!;
      if (seen.has(k)) continue;
      seen.add(k);
      const m = this.byKey.get(k);
      if (m) queue.push(...(m.exported ?? m.deps));
    }
    this.visible.set(key, seen);
    return seen;
  }

  /** True when code of module `fromKey` sees `toFile`. A file outside every module sees everything. */
  sees(fromKey: string, toFile: string): boolean {
    if (!this.size || fromKey === '') return true;
    return this.visibleFrom(fromKey).has(this.moduleOf(toFile));
  }
}
