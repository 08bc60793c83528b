import { FactsCache } from '../../src/codegraph/facts-cache';
import { CodeGraph } from '../../src/codegraph/graph';
import { indexCommit } from '../../src/codegraph/indexer';
import { csprojOf } from '../../src/codegraph/languages/lang-csharp';
import { gradleModulesOf, gradleProjectDepsOf, gradleSettingsOf } from '../../src/codegraph/languages/lang-gradle';
import { GitRepo } from '../../src/git/repo';
import { GitFixture } from '../support/git-fixture';

jest.setTimeout(60_000);

async function withGraph(files: Record<string, string>, check: (g: CodeGraph) => void): Promise<void> {
  const f = new GitFixture('rl-build-modules-');
  try {
    for (const [p, text] of Object.entries(files)) f.write(p, text);
    const sha = f.commit('seed');
    const repo = await GitRepo.open(f.dir);
    try {
      check(new CodeGraph(await indexCommit(repo, sha, { cache: FactsCache.open(':memory:') })));
    } finally {
      repo.close();
    }
  } finally {
    f.cleanup();
  }
}

const targets = (g: CodeGraph, from: string) => g.outgoingOf(from).map((e) => e.to).sort();

const csproj = (refs: string[], extra = '') => `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>${extra}
  </PropertyGroup>
  <ItemGroup>
${refs.map((r) => `    <ProjectReference Include="${r}" />`).join('\n')}
    <!-- <ProjectReference Include="..\\Legacy\\Legacy.csproj" /> -->
  </ItemGroup>
</Project>
`;
const helper = (ns: string, body: string) => `namespace ${ns}\n{\n    public static class Helper\n    {\n        public static int Norm(int x) => ${body};\n    }\n}\n`;

describe('C# projects (.csproj) as assembly boundaries', () => {
  it('reads <ProjectReference> paths (Windows separators, relative to the project), skipping comments', () => {
    expect(csprojOf('src/App/App.csproj', csproj(['..\\Core\\Core.csproj', '../Util/Util.csproj', '..\\..\\..\\outside\\X.csproj']))).toEqual({
      path: 'src/App/App.csproj', dir: 'src/App', references: ['src/Core/Core.csproj', 'src/Util/Util.csproj'],
    });
  });

  it('a namespace resolves within the file\'s project and the projects it references (transitively); a same-name type of an unreferenced project never binds, nor an internal type of another project', async () => {
    await withGraph({
      'Shop.sln': 'Microsoft Visual Studio Solution File, Format Version 12.00\n',
      'src/Core/Core.csproj': csproj([], '\n    <RootNamespace>Acme</RootNamespace>'),
      'src/Core/Util/Helper.cs': helper('Acme.Util', 'x + 1'),
      'src/Core/Util/Secret.cs': 'namespace Acme.Util\n{\n    internal static class Secret\n    {\n        public static int Key() => 7;\n    }\n}\n',
      'src/Legacy/Legacy.csproj': csproj([]),
      'src/Legacy/Helper.cs': helper('Acme.Util', 'x'),
      'src/Legacy/Secret.cs': 'namespace Acme.Util\n{\n    internal static class Secret\n    {\n        public static int Key() => 1;\n    }\n}\n',
      'src/Legacy/Use.cs': 'namespace Acme.Util\n{\n    public class Use\n    {\n        public int F() => Helper.Norm(1) + Secret.Key();\n    }\n}\n',
      'src/App/App.csproj': csproj(['..\\Core\\Core.csproj']),
      'src/App/Program.cs': 'using Acme.Util;\n\nnamespace Acme.App\n{\n    public class Program\n    {\n        public int Main() => Helper.Norm(2) + Secret.Key() + Config.Port();\n    }\n}\n',
      'src/App/Config.cs': 'namespace Acme.App\n{\n    internal static class Config\n    {\n        public static int Port() => 80;\n    }\n}\n',
      'tests/App.Tests/App.Tests.csproj': csproj(['..\\..\\src\\App\\App.csproj']),
      'tests/App.Tests/ProgramTests.cs': 'using Acme.App;\nusing Acme.Util;\n\nnamespace Acme.Tests\n{\n    public class ProgramTests\n    {\n        public int T() => new Program().Main() + Helper.Norm(3) + Config.Port();\n    }\n}\n',
    }, (g) => {
      // Program sees Core (referenced) and its own project's internal Config; not Legacy's Helper, not Core's internal Secret.
      expect(targets(g, 'src/App/Program.cs#Program.Main')).toEqual(['src/App/Config.cs#Config', 'src/App/Config.cs#Config.Port', 'src/Core/Util/Helper.cs#Helper', 'src/Core/Util/Helper.cs#Helper.Norm']);
      // Legacy's own file binds Legacy's types, internal ones included.
      expect(targets(g, 'src/Legacy/Use.cs#Use.F')).toEqual(['src/Legacy/Helper.cs#Helper', 'src/Legacy/Helper.cs#Helper.Norm', 'src/Legacy/Secret.cs#Secret', 'src/Legacy/Secret.cs#Secret.Key']);
      // The test project references App, and through it Core; App's internal Config stays App's.
      expect(targets(g, 'tests/App.Tests/ProgramTests.cs#ProgramTests.T')).toEqual(['src/App/Program.cs#Program', 'src/Core/Util/Helper.cs#Helper', 'src/Core/Util/Helper.cs#Helper.Norm']);
      expect(g.edges.some((e) => e.fromFile.startsWith('src/App/') && e.toFile.startsWith('src/Legacy/'))).toBe(false);
    });
  });
});

describe('Gradle modules as boundaries for Kotlin and Java', () => {
  it('reads settings includes (Kotlin and Groovy DSL, moved projectDir) and project dependencies (project(":m"), type-safe accessors)', () => {
    const s = gradleSettingsOf('settings.gradle.kts', 'rootProject.name = "shop"\ninclude(\n    ":app",\n    ":core:model", // the model\n)\ninclude(":feature-cart")\n// include(":dead")\nproject(":feature-cart").projectDir = file("features/cart")\n');
    expect([...s.modules]).toEqual([[':app', 'app'], [':core:model', 'core/model'], [':feature-cart', 'features/cart']]);
    expect([...gradleSettingsOf('build/settings.gradle', "include 'app', ':lib'\n").modules]).toEqual([[':app', 'build/app'], [':lib', 'build/lib']]);
    expect(gradleProjectDepsOf('dependencies {\n    implementation(project(":core:model"))\n    api(projects.featureCart)\n    testImplementation project(path: \':app\')\n}\n')).toEqual([
      { configuration: 'implementation', project: ':core:model' }, { configuration: 'testImplementation', project: ':app' }, { configuration: 'api', accessor: 'featureCart' },
    ]);
    const modules = gradleModulesOf([s], new Map([['app/build.gradle.kts', 'dependencies { implementation(projects.featureCart) }'], ['features/cart/build.gradle.kts', 'dependencies { api(project(":core:model")) }']]));
    expect(modules.find((m) => m.key === '|:app')).toEqual({ key: '|:app', dir: 'app', deps: ['|:feature-cart'], exported: [] });
    expect(modules.find((m) => m.key === '|:feature-cart')).toEqual({ key: '|:feature-cart', dir: 'features/cart', deps: ['|:core:model'], exported: ['|:core:model'] });
  });

  const user = (module: string, n: number) => [`${module}/src/main/kotlin/com/acme/model/User.kt`, `package com.acme.model\n\ndata class User(val name: String)\n\nfun makeUser(name: String): User = User(name + "${n}")\n`];

  it('a package resolves within the module and the modules it depends on (`api` ones onward, `implementation` not); a same-name declaration of another module never binds', async () => {
    await withGraph(Object.fromEntries([
      ['settings.gradle.kts', 'rootProject.name = "shop"\ninclude(":app", ":core:model", ":legacy", ":feature-cart", ":web", ":cli")\n'],
      ['build.gradle.kts', 'plugins { kotlin("jvm") version "2.0.0" apply false }\n'],
      user('core/model', 1),
      user('legacy', 2),
      ['legacy/src/main/kotlin/com/acme/model/Old.kt', 'package com.acme.model\n\nfun old(): User = makeUser("o")\n'],
      ['feature-cart/build.gradle.kts', 'dependencies {\n    api(project(":core:model"))\n}\n'],
      ['feature-cart/src/main/kotlin/com/acme/cart/Cart.kt', 'package com.acme.cart\n\nimport com.acme.model.User\n\nclass Cart(val owner: User)\n'],
      ['app/build.gradle.kts', 'dependencies {\n    implementation(project(":core:model"))\n    implementation(projects.featureCart)\n}\n'],
      ['app/src/main/kotlin/com/acme/app/App.kt', 'package com.acme.app\n\nimport com.acme.cart.Cart\nimport com.acme.model.makeUser\n\nfun run(): Cart = Cart(makeUser("a"))\n'],
      ['app/src/main/java/com/acme/app/JavaUse.java', 'package com.acme.app;\n\nimport com.acme.model.User;\n\npublic class JavaUse {\n    public User make() { return new User("j"); }\n}\n'],
      ['web/build.gradle.kts', 'dependencies {\n    implementation(project(":feature-cart"))\n}\n'],
      ['web/src/main/kotlin/com/acme/web/Web.kt', 'package com.acme.web\n\nimport com.acme.model.*\n\nfun page(): User = makeUser("w")\n'],
      ['cli/build.gradle.kts', 'dependencies {\n    implementation(project(":app"))\n}\n'],
      ['cli/src/main/kotlin/com/acme/cli/Cli.kt', 'package com.acme.cli\n\nimport com.acme.app.run\nimport com.acme.model.makeUser\n\nfun main() {\n    run()\n    makeUser("c")\n}\n'],
    ]), (g) => {
      const core = 'core/model/src/main/kotlin/com/acme/model/User.kt';
      expect(targets(g, 'app/src/main/kotlin/com/acme/app/App.kt#run')).toEqual([`${core}#makeUser`, 'feature-cart/src/main/kotlin/com/acme/cart/Cart.kt#Cart']);
      expect(targets(g, 'feature-cart/src/main/kotlin/com/acme/cart/Cart.kt#Cart')).toEqual([`${core}#User`]);
      // Java shares the boundaries.
      expect(targets(g, 'app/src/main/java/com/acme/app/JavaUse.java#JavaUse.make')).toEqual([`${core}#User`]);
      // Same package, own module: legacy's own declarations.
      expect(targets(g, 'legacy/src/main/kotlin/com/acme/model/Old.kt#old')).toEqual(['legacy/src/main/kotlin/com/acme/model/User.kt#User', 'legacy/src/main/kotlin/com/acme/model/User.kt#makeUser']);
      // :web → :feature-cart (implementation) → :core:model (api): visible.
      expect(targets(g, 'web/src/main/kotlin/com/acme/web/Web.kt#page')).toEqual([`${core}#User`, `${core}#makeUser`]);
      // :cli → :app (implementation) → :core:model (implementation): app is visible, the model is not.
      expect(targets(g, 'cli/src/main/kotlin/com/acme/cli/Cli.kt#main')).toEqual(['app/src/main/kotlin/com/acme/app/App.kt#run']);
      expect(g.edges.some((e) => !e.fromFile.startsWith('legacy/') && e.toFile.startsWith('legacy/'))).toBe(false);
    });
  });
});
