// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import { computeHarness, groups } from './support';

jest.setTimeout(90_000);

const { fixture, compute } = computeHarness('rl-cohorts-seed-');


const widget = (color: string) => `import 'package:flutter/material.dart';

class BuyButton extends StatelessWidget {
  const BuyButton({super.key});

  @override
  Widget build(BuildContext context) {
    return ColoredBox(color: Colors.${color});
  }
}
`;
const useCase = (name: string) => `import 'package:flutter/widgets.dart';
import 'package:shop/buy_button.dart';
import 'package:widgetbook_annotation/widgetbook_annotation.dart' as widgetbook;

@widgetbook.UseCase(name: '${name}', type: BuyButton)
Widget buyButtonDefault(BuildContext context) => const BuyButton();
`;

describe('cohort formation in Dart, Kotlin and Swift', () => {
  it('Dart (Flutter + Widgetbook): a changed widget and its changed use-case merge through package: imports; a same-name widget of another package does not', async () => {
    const f = fixture();
    f.write('pubspec.yaml', 'name: shop\n\ndependencies:\n  flutter:\n    sdk: flutter\n');
    f.write('lib/buy_button.dart', widget('red'));
    f.write('widgetbook/pubspec.yaml', 'name: shop_widgetbook\n\ndependencies:\n  shop:\n    path: ../\n');
    f.write('widgetbook/lib/buy_button.use_case.dart', useCase('Default'));
    f.write('legacy/pubspec.yaml', 'name: legacy\n');
    // Its own base colour: the same removed line in both widgets would be one edit (`similar-edit`), which is not what this test is about.
    f.write('legacy/lib/buy_button.dart', widget('orange'));
    f.write('lib/price.dart', "String price(int cents) => '\\$\${cents / 100}';\n");
    const base = f.commit('base');
    f.write('lib/buy_button.dart', widget('green'));
    f.write('widgetbook/lib/buy_button.use_case.dart', useCase('Green'));
    f.write('legacy/lib/buy_button.dart', widget('blue'));
    f.write('lib/price.dart', "String price(int cents) => '\\$\${cents / 100.0}';\n");
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['legacy/lib/buy_button.dart', 'lib/buy_button.dart,widgetbook/lib/buy_button.use_case.dart', 'lib/price.dart']);
    const merged = r.data.cohorts.find((c) => c.files.includes('lib/buy_button.dart'))!;
    expect(merged.grouping).not.toBe('path');
  });

  it('Kotlin: a call through an import in another Gradle module merges; a same-name function of another package does not', async () => {
    const f = fixture();
    const calc = (n: number) => `package com.acme.calc\n\nfun g(x: Int): Int {\n    return x + ${n}\n}\n`;
    const app = (n: number) => `package com.acme.app\n\nimport com.acme.calc.g\n\nfun f(x: Int): Int {\n    return g(x) * ${n}\n}\n`;
    const other = (n: number) => `package com.acme.other\n\nfun g(x: Int): Int {\n    return x * ${n}\n}\n`;
    f.write('calc/src/main/kotlin/com/acme/calc/Calc.kt', calc(1));
    f.write('app/src/main/kotlin/com/acme/app/App.kt', app(2));
    f.write('other/src/main/kotlin/com/acme/other/Other.kt', other(3));
    const base = f.commit('base');
    f.write('calc/src/main/kotlin/com/acme/calc/Calc.kt', calc(2));
    f.write('app/src/main/kotlin/com/acme/app/App.kt', app(3));
    f.write('other/src/main/kotlin/com/acme/other/Other.kt', other(4));
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['app/src/main/kotlin/com/acme/app/App.kt,calc/src/main/kotlin/com/acme/calc/Calc.kt', 'other/src/main/kotlin/com/acme/other/Other.kt']);
  });

  /** `callee`, `caller`, `other`: text for a version number; caller calls callee, other has a same-name definition. */
  async function callerCalleeOther(files: Record<'callee' | 'caller' | 'other', [string, (n: number) => string]>, extra: Record<string, string> = {}): Promise<string[]> {
    const f = fixture();
    for (const [p, text] of Object.entries(extra)) f.write(p, text);
    for (const [p, text] of Object.values(files)) f.write(p, text(1));
    const base = f.commit('base');
    for (const [p, text] of Object.values(files)) f.write(p, text(2));
    const head = f.commit('head');
    return groups(await compute(f, base, head));
  }

  it('Dart: a call to a static method through a package: import merges; the same-name class of another package does not', async () => {
    const calc = (n: number) => `class Calc {\n  static int g(int x) {\n    return x + ${n};\n  }\n}\n`;
    const g = await callerCalleeOther({
      callee: ['lib/src/calc.dart', calc],
      caller: ['lib/app.dart', (n) => `import 'package:shop/src/calc.dart';\n\nint f(int x) {\n  return Calc.g(x) * ${n};\n}\n`],
      other: ['tools/lib/calc.dart', (n) => calc(n + 10)],
    }, { 'pubspec.yaml': 'name: shop\n', 'tools/pubspec.yaml': 'name: shop_tools\n' });
    expect(g).toEqual(['lib/app.dart,lib/src/calc.dart', 'tools/lib/calc.dart']);
  });

  it('Swift: a call into an imported SwiftPM target merges; the same-name type of another target does not', async () => {
    const calc = (n: number) => `public struct Calc {\n    public static func g(_ x: Int) -> Int {\n        return x + ${n}\n    }\n}\n`;
    const g = await callerCalleeOther({
      callee: ['Sources/CalcKit/Calc.swift', calc],
      caller: ['Sources/App/main.swift', (n) => `import CalcKit\n\nfunc run() -> Int {\n    return Calc.g(${n})\n}\n`],
      other: ['Sources/OtherKit/Calc.swift', (n) => calc(n + 10)],
    });
    expect(g).toEqual(['Sources/App/main.swift,Sources/CalcKit/Calc.swift', 'Sources/OtherKit/Calc.swift']);
  });

  it('C#: a call into a `using` namespace merges; the same-name class of another namespace does not', async () => {
    const g = await callerCalleeOther({
      callee: ['src/Calc/Calc.cs', (n) => `namespace Acme.Calc;\n\npublic static class Calc\n{\n    public static int G(int x)\n    {\n        return x + ${n};\n    }\n}\n`],
      caller: ['src/App/App.cs', (n) => `using Acme.Calc;\n\nnamespace Acme.App;\n\npublic class App\n{\n    public int F(int x)\n    {\n        return Calc.G(x) * ${n};\n    }\n}\n`],
      other: ['src/Other/Calc.cs', (n) => `namespace Acme.Other;\n\npublic static class Calc\n{\n    public static int G(int x)\n    {\n        return x * ${n};\n    }\n}\n`],
    });
    expect(g).toEqual(['src/App/App.cs,src/Calc/Calc.cs', 'src/Other/Calc.cs']);
  });

  it('C# projects: a call into a referenced project merges; the same namespace and class in an unreferenced project (first in tree order) does not', async () => {
    const calc = (n: number) => `namespace Acme.Calc;\n\npublic static class Calc\n{\n    public static int G(int x)\n    {\n        return x + ${n};\n    }\n}\n`;
    const proj = (refs: string[]) => `<Project Sdk="Microsoft.NET.Sdk">\n  <ItemGroup>\n${refs.map((r) => `    <ProjectReference Include="${r}" />\n`).join('')}  </ItemGroup>\n</Project>\n`;
    const g = await callerCalleeOther({
      callee: ['src/Calc/Calc.cs', calc],
      caller: ['src/App/App.cs', (n) => `using Acme.Calc;\n\nnamespace Acme.App;\n\npublic class App\n{\n    public int F(int x)\n    {\n        return Calc.G(x) * ${n};\n    }\n}\n`],
      other: ['src/Calc-Old/Calc.cs', (n) => calc(n + 10)],
    }, { 'src/Calc/Calc.csproj': proj([]), 'src/Calc-Old/Calc-Old.csproj': proj([]), 'src/App/App.csproj': proj(['..\\Calc\\Calc.csproj']) });
    expect(g).toEqual(['src/App/App.cs,src/Calc/Calc.cs', 'src/Calc-Old/Calc.cs']);
  });

  it('Gradle modules: a Kotlin call into a module the caller depends on merges; the same package and function in another module (first in tree order) does not', async () => {
    const calc = (n: number) => `package com.acme.calc\n\nfun g(x: Int): Int {\n    return x + ${n}\n}\n`;
    const g = await callerCalleeOther({
      callee: ['calc/src/main/kotlin/com/acme/calc/Calc.kt', calc],
      caller: ['app/src/main/kotlin/com/acme/app/App.kt', (n) => `package com.acme.app\n\nimport com.acme.calc.g\n\nfun f(x: Int): Int {\n    return g(x) * ${n}\n}\n`],
      other: ['calc-old/src/main/kotlin/com/acme/calc/Calc.kt', (n) => calc(n + 10)],
    }, { 'settings.gradle.kts': 'include(":app", ":calc", ":calc-old")\n', 'app/build.gradle.kts': 'dependencies {\n    implementation(project(":calc"))\n}\n' });
    expect(g).toEqual(['app/src/main/kotlin/com/acme/app/App.kt,calc/src/main/kotlin/com/acme/calc/Calc.kt', 'calc-old/src/main/kotlin/com/acme/calc/Calc.kt']);
  });

  it('PHP: a call through a PSR-4 `use` merges; the same-name class outside the autoload roots does not', async () => {
    const g = await callerCalleeOther({
      callee: ['src/Models/User.php', (n) => `<?php\nnamespace App\\Models;\n\nclass User\n{\n    public static function find(int $id): int\n    {\n        return $id + ${n};\n    }\n}\n`],
      caller: ['src/Http/Controller.php', (n) => `<?php\nnamespace App\\Http;\n\nuse App\\Models\\User;\n\nclass Controller\n{\n    public function show(): int\n    {\n        return User::find(${n});\n    }\n}\n`],
      other: ['legacy/User.php', (n) => `<?php\nclass User\n{\n    public static function find(int $id): int\n    {\n        return $id * ${n};\n    }\n}\n`],
    }, { 'composer.json': JSON.stringify({ autoload: { 'psr-4': { 'App\\': 'src/' } } }) });
    expect(g).toEqual(['legacy/User.php', 'src/Http/Controller.php,src/Models/User.php']);
  });

  it('Zig: a call through `@import("calc.zig")` merges; the same-name function of another file does not', async () => {
    const g = await callerCalleeOther({
      callee: ['src/calc.zig', (n) => `pub fn g(x: i32) i32 {\n    return x + ${n};\n}\n`],
      caller: ['src/main.zig', (n) => `const calc = @import("calc.zig");\n\npub fn f(x: i32) i32 {\n    return calc.g(x) * ${n};\n}\n`],
      other: ['other/calc.zig', (n) => `pub fn g(x: i32) i32 {\n    return x * ${n};\n}\n`],
    });
    expect(g).toEqual(['other/calc.zig', 'src/calc.zig,src/main.zig']);
  });
});
