import { FactsCache } from '../../src/codegraph/facts-cache';
import { CodeGraph } from '../../src/codegraph/graph';
import { extractFacts } from '../../src/codegraph/extract';
import { loadGrammar } from '../../src/codegraph/languages/grammar-runtime';
import { swiftPrepareSource } from '../../src/codegraph/languages/lang-swift';
import { indexCommit } from '../../src/codegraph/indexer';
import { GitRepo } from '../../src/git/repo';
import { GitFixture } from '../support/git-fixture';

jest.setTimeout(60_000);

/** Builds a repository from `files`, indexes its commit and hands the graph to `check`. */
async function withGraph(files: Record<string, string>, check: (g: CodeGraph) => void | Promise<void>): Promise<void> {
  const f = new GitFixture('rl-seed-lang-');
  try {
    for (const [p, text] of Object.entries(files)) f.write(p, text);
    const sha = f.commit('seed');
    const repo = await GitRepo.open(f.dir);
    try {
      await check(new CodeGraph(await indexCommit(repo, sha, { cache: FactsCache.open(':memory:') })));
    } finally {
      repo.close();
    }
  } finally {
    f.cleanup();
  }
}

const crossFile = (g: CodeGraph) => [...new Set(g.edges.filter((e) => e.fromFile !== e.toFile).map((e) => `${e.fromFile} -> ${e.toFile}`))].sort();

async function errorFree(language: string, source: string): Promise<boolean> {
  const g = await loadGrammar(language);
  const tree = g.parser.parse(source)!;
  try {
    return !tree.rootNode.hasError;
  } finally {
    tree.delete();
  }
}

const DART_BUTTON = `import 'package:flutter/material.dart';

/// A button of the design system.
class PrimaryButton extends StatelessWidget {
  const PrimaryButton({super.key, required this.label});

  final String label;

  @override
  Widget build(BuildContext context) {
    return ElevatedButton(onPressed: _noop, child: Text(label));
  }

  static PrimaryButton small(String label) => PrimaryButton(label: label);
}

void _noop() {}

mixin Pressable on StatelessWidget {
  void press() {}
}

extension LabelX on String {
  String get shouted => toUpperCase();
}

const double kButtonHeight = 48;

String formatLabel(String s) => s.trim();
`;

describe('Dart, Kotlin and Swift in the code graph', () => {
  it('Dart: definitions (classes, mixins, extensions, functions, methods, top-level constants) get stable ids; package: and relative imports resolve; dart: and pub packages stay external', async () => {
    expect(await errorFree('dart', DART_BUTTON)).toBe(true);
    await withGraph({
      'pubspec.yaml': 'name: shop\nenvironment:\n  sdk: ">=3.0.0 <4.0.0"\n',
      'lib/src/button.dart': DART_BUTTON,
      'lib/src/labels.dart': "import 'button.dart';\n\nString title() => formatLabel('Buy');\n",
      'lib/shop.dart': "export 'src/button.dart';\n",
      'lib/screen.dart': "import 'package:flutter/material.dart';\nimport 'package:shop/shop.dart';\n\nclass Screen extends StatelessWidget {\n  const Screen({super.key});\n\n  @override\n  Widget build(BuildContext context) {\n    return PrimaryButton.small('Buy');\n  }\n}\n",
      'lib/prefixed.dart': "import 'src/button.dart' as ui;\n\nString shout(String s) => ui.formatLabel(s);\n",
      'other/lib/button.dart': 'String formatLabel(String s) => s;\n',
    }, (g) => {
      for (const id of ['PrimaryButton', 'PrimaryButton.build', 'PrimaryButton.small', 'Pressable', 'Pressable.press', 'LabelX', 'LabelX.shouted', 'kButtonHeight', 'formatLabel', '_noop']) expect(g.symbols.has(`lib/src/button.dart#${id}`)).toBe(true);
      expect(g.symbols.get('lib/src/button.dart#_noop')!.def.exported).toBe(false);
      // A method spans its body (the signature and the body are siblings in the Dart tree).
      const build = g.symbols.get('lib/src/button.dart#PrimaryButton.build')!.def;
      expect(build.end - build.start).toBe(2);
      expect(g.outgoingOf('lib/screen.dart#Screen.build').map((e) => e.to).sort()).toEqual(['lib/src/button.dart#PrimaryButton', 'lib/src/button.dart#PrimaryButton.small']);
      expect(g.outgoingOf('lib/src/labels.dart#title').map((e) => e.to)).toEqual(['lib/src/button.dart#formatLabel']);
      expect(g.outgoingOf('lib/prefixed.dart#shout').map((e) => e.to)).toEqual(['lib/src/button.dart#formatLabel']);
      expect(crossFile(g)).toEqual(['lib/prefixed.dart -> lib/src/button.dart', 'lib/screen.dart -> lib/src/button.dart', 'lib/src/labels.dart -> lib/src/button.dart']);
    });
  });

  it('Dart 3 syntax parses without errors (records, patterns, switch expressions, class modifiers, extension types); `library;` and empty statements, which the grammar lacks, are blanked for a second parse with lines kept', async () => {
    const dart3 = `sealed class Shape {}

final class Square extends Shape {
  Square(this.side);
  final double side;
}

base mixin class Named {}

extension type const Meters(int value) implements Object {}

typedef Pair = (int, {String label});

double area(Shape s) => switch (s) {
      Square(side: final d) => d * d,
    };

(int, String) split(Pair p) {
  final (n, :label) = p;
  if (p case (final x, label: 'a')) return (x, label);
  return (n, label);
}
`;
    expect(await errorFree('dart', dart3)).toBe(true);
    const g = await loadGrammar('dart');
    const facts = extractFacts(g, dart3);
    expect(facts.hasErrors).toBeUndefined();
    expect(facts.defs.map((d) => d.qname).sort()).toEqual(['Meters', 'Named', 'Pair', 'Shape', 'Square', 'area', 'split']);
    const newer = `/// @docImport 'widget.dart';
@TestOn('vm')
library;

import 'calc.dart';

int run() {
  final x = g(1);
  ;
  return x;
}

int later() => run();
`;
    // The grammar itself still fails on these two constructs…
    expect(await errorFree('dart', newer)).toBe(false);
    // …which carry nothing the graph needs: the index parses the text with them blanked, lines unchanged.
    const repaired = extractFacts(g, newer);
    expect(repaired.hasErrors).toBeUndefined();
    expect(repaired.defs.map((d) => [d.qname, d.start, d.end])).toEqual([['run', 7, 11], ['later', 13, 13]]);
    expect(repaired.imports.map((i) => i.source)).toEqual(['calc.dart']);
    expect(repaired.refs.find((r) => r.name === 'g')).toMatchObject({ line: 8, from: 0 });
    // Any other parse error is left alone (and recorded).
    expect(extractFacts(g, 'int f() {\n  return 1 +;\n}\n').hasErrors).toBe(true);
    expect(extractFacts(g, 'library;\nint f() {\n  return 1 +;\n}\n').hasErrors).toBe(true);
  });

  it('Dart: a generic call with one type argument (`Box<Item>(…)`, which 1.1.6 parses as `(Box < Item) > (…)`), `Box<T>.named(…)` and an annotated typedef resolve across files', async () => {
    await withGraph({
      'pubspec.yaml': 'name: shop\n',
      'lib/box.dart': 'class Box<T> {\n  Box(this.value);\n  Box.named({required this.value});\n  final T value;\n}\n\nclass Item {}\n\n@Deprecated(\'x\')\ntypedef Maker = Box<Item> Function(Item item);\n',
      'lib/use.dart': "import 'package:shop/box.dart';\n\nList<Object> all(Maker m) {\n  return [\n    Box<Item>(Item()),\n    Box<Item>.named(value: Item()),\n  ];\n}\n\nObject one() => Box<int>(1);\n",
    }, (g) => {
      expect(g.symbols.has('lib/box.dart#Maker')).toBe(true);
      // Named constructors are no definitions of their own: `Box<Item>.named` binds the class.
      expect(g.outgoingOf('lib/use.dart#all').map((e) => e.to).sort()).toEqual(['lib/box.dart#Box', 'lib/box.dart#Item', 'lib/box.dart#Maker']);
      expect(g.outgoingOf('lib/use.dart#one').map((e) => e.to)).toEqual(['lib/box.dart#Box']);
    });
    const facts = extractFacts(await loadGrammar('dart'), 'Object f() => Box<int>.named(value: 1);\n');
    expect(facts.refs.find((r) => r.name === 'named')).toMatchObject({ qualifier: 'Box', kind: 'call' });
  });

  it('Kotlin: imports and same-package declarations resolve by package across Gradle source sets; a same-name declaration of another package does not', async () => {
    const user = 'package com.acme.model\n\ndata class User(val name: String) {\n    fun greet(): String = "hi $name"\n}\n\nfun makeUser(name: String): User = User(name)\n';
    expect(await errorFree('kotlin', user)).toBe(true);
    await withGraph({
      'model/src/main/kotlin/com/acme/model/User.kt': user,
      'model/src/main/kotlin/com/acme/model/Roles.kt': 'package com.acme.model\n\nobject Roles {\n    fun owner(): User = makeUser("root")\n}\n',
      'app/src/main/kotlin/com/acme/app/App.kt': 'package com.acme.app\n\nimport com.acme.model.User\nimport com.acme.model.makeUser as make\n\nclass App {\n    fun run(): String {\n        val u: User = make("a")\n        return u.greet()\n    }\n}\n',
      'app/src/test/kotlin/com/acme/app/AppTest.kt': 'package com.acme.app\n\nimport com.acme.model.*\n\nclass AppTest {\n    fun check() {\n        App().run()\n        Roles.owner()\n    }\n}\n',
      'other/src/main/kotlin/com/other/Util.kt': 'package com.other\n\nfun makeUser(name: String): String = name\n',
    }, (g) => {
      for (const id of ['User', 'User.greet', 'makeUser']) expect(g.symbols.has(`model/src/main/kotlin/com/acme/model/User.kt#${id}`)).toBe(true);
      expect(g.outgoingOf('app/src/main/kotlin/com/acme/app/App.kt#App.run').map((e) => e.to).sort()).toEqual(['model/src/main/kotlin/com/acme/model/User.kt#User', 'model/src/main/kotlin/com/acme/model/User.kt#makeUser']);
      expect(g.outgoingOf('model/src/main/kotlin/com/acme/model/Roles.kt#Roles.owner').map((e) => e.to).sort()).toEqual(['model/src/main/kotlin/com/acme/model/User.kt#User', 'model/src/main/kotlin/com/acme/model/User.kt#makeUser']);
      expect(g.outgoingOf('app/src/test/kotlin/com/acme/app/AppTest.kt#AppTest.check').map((e) => e.to).sort()).toEqual(['app/src/main/kotlin/com/acme/app/App.kt#App', 'model/src/main/kotlin/com/acme/model/Roles.kt#Roles', 'model/src/main/kotlin/com/acme/model/Roles.kt#Roles.owner']);
      expect(g.edges.some((e) => e.toFile === 'other/src/main/kotlin/com/other/Util.kt')).toBe(false);
    });
  });

  it('Kotlin: a nested class whose primary constructor starts on the next line (which the grammar rejects) is parsed with the newline moved, lines kept', async () => {
    const spec = 'package com.acme\n\npublic class Spec\nprivate constructor(builder: Builder) {\n  public val name: String = builder.name\n\n  public class Builder\n  internal constructor(internal val name: String) :\n    Base() {\n    public fun build(): Spec = Spec(this)\n  }\n}\n';
    expect(await errorFree('kotlin', spec)).toBe(false);
    const facts = extractFacts(await loadGrammar('kotlin'), spec);
    expect(facts.hasErrors).toBeUndefined();
    expect(facts.defs.map((d) => [d.qname, d.start, d.end])).toEqual([['Spec', 3, 12], ['Spec.Builder', 7, 11], ['Spec.Builder.build', 10, 10]]);
    expect(facts.refs.find((r) => r.name === 'Spec' && r.kind === 'call')).toMatchObject({ line: 10 });
  });

  it('Swift: declarations of one SwiftPM target resolve without an import, `import Target` opens another target; a same-name declaration of an unimported target does not', async () => {
    const calc = 'public struct Calc {\n    public static func g(_ x: Int) -> Int {\n        return x + 1\n    }\n}\n\npublic func twice(_ x: Int) -> Int {\n    return x * 2\n}\n';
    expect(await errorFree('swift', calc)).toBe(true);
    await withGraph({
      'Package.swift': '// swift-tools-version:5.9\nimport PackageDescription\n\nlet package = Package(name: "Shop", targets: [.target(name: "CalcKit"), .target(name: "OtherKit"), .executableTarget(name: "App", dependencies: ["CalcKit"])])\n',
      'Sources/CalcKit/Calc.swift': calc,
      'Sources/CalcKit/Extra.swift': 'func extra() -> Int {\n    return Calc.g(1) + twice(2)\n}\n',
      'Sources/App/main.swift': 'import Foundation\nimport CalcKit\n\nfunc run() -> Int {\n    let value = Calc.g(2)\n    return twice(value)\n}\n',
      'Sources/OtherKit/Calc.swift': 'public struct Calc {\n    public static func g(_ x: Int) -> Int {\n        return x\n    }\n}\n',
    }, (g) => {
      for (const id of ['Calc', 'Calc.g', 'twice']) expect(g.symbols.has(`Sources/CalcKit/Calc.swift#${id}`)).toBe(true);
      expect(g.outgoingOf('Sources/App/main.swift#run').map((e) => e.to).sort()).toEqual(['Sources/CalcKit/Calc.swift#Calc', 'Sources/CalcKit/Calc.swift#Calc.g', 'Sources/CalcKit/Calc.swift#twice']);
      expect(g.outgoingOf('Sources/CalcKit/Extra.swift#extra').map((e) => e.to).sort()).toEqual(['Sources/CalcKit/Calc.swift#Calc', 'Sources/CalcKit/Calc.swift#Calc.g', 'Sources/CalcKit/Calc.swift#twice']);
      expect(g.edges.some((e) => e.toFile === 'Sources/OtherKit/Calc.swift')).toBe(false);
    });
  });

  /** swiftPrepareSource keeps the length and every newline where it was (so every offset and line). */
  const sameShape = (a: string, b: string) => {
    expect(b.length).toBe(a.length);
    expect([...b].map((c, i) => (c === '\n' ? i : -1)).filter((i) => i >= 0)).toEqual([...a].map((c, i) => (c === '\n' ? i : -1)).filter((i) => i >= 0));
  };

  it('Swift: `#if` inside an argument list and between members is read as its first branch (lines unchanged, no duplicate definition)', async () => {
    const session = 'import Foundation\n\nfinal class Session {\n    func request(_ url: URL) -> Request {\n        let request = Request(url: url,\n        #if canImport(FoundationNetworking)\n                              delegate: nil,\n        #else\n                              delegate: self,\n        #endif\n                              queue: makeQueue())\n        return request\n    }\n\n    #if os(iOS)\n    func background() -> Int { 1 }\n    #else\n    func background() -> Int { 2 }\n    #endif\n\n    func makeQueue() -> DispatchQueue {\n        DispatchQueue(label: "org.alamofire.\\(#function)")\n    }\n}\n';
    expect(await errorFree('swift', session)).toBe(false);
    const prepared = swiftPrepareSource(session)!;
    sameShape(session, prepared);
    expect(prepared).not.toContain('#');
    expect(prepared).not.toContain('delegate: self');
    const facts = extractFacts(await loadGrammar('swift'), session);
    expect(facts.hasErrors).toBeUndefined();
    expect(facts.defs.map((d) => [d.qname, d.start, d.end])).toEqual([['Session', 3, 24], ['Session.request', 4, 13], ['Session.background', 16, 16], ['Session.makeQueue', 21, 23]]);
    expect(facts.refs.find((r) => r.name === 'makeQueue')).toMatchObject({ kind: 'call', line: 11, from: 1 });
    expect(facts.refs.find((r) => r.name === 'DispatchQueue' && r.kind === 'call')).toMatchObject({ line: 22, from: 3 });
  });

  it('Swift: `#expect`/`#require` macros are read as calls, `if`/`guard #available(…)` as a true condition; their callees resolve across files', async () => {
    const test = 'import Testing\n@testable import MimeKit\n\nstruct MIMETypeTests {\n    @Test\n    func wildcard() throws {\n        let mime = try #require(MIMEType("*/*"))\n        #expect(mime.matches(MIMEType("text/plain")))\n    }\n}\n';
    const headers = 'func encodings() -> [String] {\n    if #available(iOS 11.0, macOS 10.13, tvOS 11.0, watchOS 4.0, *) {\n        return modernEncodings()\n    } else {\n        return legacyEncodings()\n    }\n}\n\nfunc check() {\n    guard #available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *) else { return }\n    modernEncodings()\n}\n\nfunc modernEncodings() -> [String] { ["br"] }\nfunc legacyEncodings() -> [String] { ["gzip"] }\n';
    expect(await errorFree('swift', test)).toBe(false);
    expect(await errorFree('swift', headers)).toBe(false);
    sameShape(test, swiftPrepareSource(test)!);
    sameShape(headers, swiftPrepareSource(headers)!);
    const g = await loadGrammar('swift');
    const t = extractFacts(g, test);
    expect(t.hasErrors).toBeUndefined();
    expect(t.defs.map((d) => [d.qname, d.start, d.end])).toEqual([['MIMETypeTests', 4, 10], ['MIMETypeTests.wildcard', 5, 9]]);
    expect(t.refs.filter((r) => r.kind === 'call').map((r) => [r.name, r.line])).toEqual([['require', 7], ['MIMEType', 7], ['expect', 8], ['matches', 8]]);
    const h = extractFacts(g, headers);
    expect(h.hasErrors).toBeUndefined();
    expect(h.refs.filter((r) => r.kind === 'call').map((r) => [r.name, r.line])).toEqual([['modernEncodings', 3], ['legacyEncodings', 5], ['modernEncodings', 11]]);
    await withGraph({
      'Sources/MimeKit/MIMEType.swift': 'public struct MIMEType {\n    public init?(_ string: String) {}\n    public func matches(_ other: MIMEType?) -> Bool { true }\n}\n',
      'Sources/MimeKit/Headers.swift': headers,
      'Tests/MimeKitTests/MIMETypeTests.swift': test,
    }, (graph) => {
      expect(graph.outgoingOf('Tests/MimeKitTests/MIMETypeTests.swift#MIMETypeTests.wildcard').map((e) => e.to).sort()).toEqual(['Sources/MimeKit/MIMEType.swift#MIMEType']);
      expect(graph.outgoingOf('Sources/MimeKit/Headers.swift#check').map((e) => e.to)).toEqual(['Sources/MimeKit/Headers.swift#modernEncodings']);
    });
  });

  it('Swift: `()` arguments, a `sending` parameter, `nonisolated(unsafe)` and `consume` parse after the rewrite', async () => {
    const protectedSwift = 'final class Protected<Value> {\n    private nonisolated(unsafe) var value: Value\n\n    init(_ value: Value) {\n        self.value = value\n    }\n\n    func validate() -> Result<Void, Error> {\n        return .success(())\n    }\n\n    func perform(_ event: sending @escaping (Int) -> Void) {\n        let retrier = Retrier()\n        _ = consume retrier\n        event(1)\n    }\n}\n';
    expect(await errorFree('swift', protectedSwift)).toBe(false);
    sameShape(protectedSwift, swiftPrepareSource(protectedSwift)!);
    const facts = extractFacts(await loadGrammar('swift'), protectedSwift);
    expect(facts.hasErrors).toBeUndefined();
    expect(facts.defs.map((d) => [d.qname, d.start, d.end])).toEqual([['Protected', 1, 17], ['Protected.validate', 8, 10], ['Protected.perform', 12, 16]]);
    expect(facts.refs.find((r) => r.name === 'Retrier')).toMatchObject({ kind: 'call', line: 13, from: 2 });
  });

  it('Swift: a file the rewrite does not make error-free keeps its original text and reports its errors', async () => {
    const broken = 'func broken() -> Int {\n    #if DEBUG\n    let x = 1 +\n    #endif\n    return helper()\n}\n\nfunc helper() -> Int { 2 }\n';
    const g = await loadGrammar('swift');
    const prepared = swiftPrepareSource(broken)!;
    expect(prepared).toBeDefined();
    const tree = g.parser.parse(prepared)!;
    expect(tree.rootNode.hasError).toBe(true);
    tree.delete();
    const facts = extractFacts(g, broken);
    expect(facts.hasErrors).toBe(true);
    expect(facts.defs.map((d) => [d.qname, d.start])).toEqual([['broken', 1], ['helper', 8]]);
    // Nothing to rewrite: undefined, the text is parsed as it is.
    expect(swiftPrepareSource('func f() -> Int { 1 }\n')).toBeUndefined();
  });
});

describe('resolved imports for C#, PHP and Zig', () => {
  it('C#: `using` namespaces, aliases and the enclosing namespace resolve; a same-name type of an unused namespace does not', async () => {
    await withGraph({
      'src/Calc/Calc.cs': 'namespace Acme.Calc;\n\npublic static class Calc\n{\n    public static int G(int x) => x + 1;\n}\n',
      'src/Core/Clock.cs': 'namespace Acme\n{\n    public class Clock\n    {\n        public static int Now() { return 0; }\n    }\n}\n',
      'src/App/App.cs': 'using System;\nusing Acme.Calc;\nusing Fmt = Acme.Text.Formatter;\n\nnamespace Acme.App\n{\n    public class App\n    {\n        public int F(int x)\n        {\n            return Calc.G(x) + Clock.Now() + Fmt.Len("a");\n        }\n    }\n}\n',
      'src/Text/Formatter.cs': 'namespace Acme.Text;\n\npublic class Formatter\n{\n    public static int Len(string s) => s.Length;\n}\n',
      'src/Other/Calc.cs': 'namespace Acme.Other;\n\npublic static class Calc\n{\n    public static int G(int x) => x;\n}\n',
    }, (g) => {
      expect(g.symbols.has('src/Calc/Calc.cs#Calc.G')).toBe(true);
      expect(g.symbols.has('src/Core/Clock.cs#Clock.Now')).toBe(true);
      expect(g.outgoingOf('src/App/App.cs#App.F').map((e) => e.to).sort()).toEqual(['src/Calc/Calc.cs#Calc', 'src/Calc/Calc.cs#Calc.G', 'src/Core/Clock.cs#Clock', 'src/Core/Clock.cs#Clock.Now', 'src/Text/Formatter.cs#Formatter', 'src/Text/Formatter.cs#Formatter.Len']);
      expect(g.edges.some((e) => e.toFile === 'src/Other/Calc.cs')).toBe(false);
    });
  });

  it('PHP: `use` (plain, aliased, grouped) resolves through composer.json PSR-4, and same-namespace classes without a `use`; a same-name class elsewhere does not', async () => {
    await withGraph({
      'composer.json': JSON.stringify({ autoload: { 'psr-4': { 'App\\': 'src/' } }, 'autoload-dev': { 'psr-4': { 'Tests\\': 'tests/' } } }),
      'src/Models/User.php': '<?php\nnamespace App\\Models;\n\nclass User\n{\n    public static function find(int $id): self\n    {\n        return new self();\n    }\n}\n',
      'src/Models/Team.php': '<?php\nnamespace App\\Models;\n\nclass Team\n{\n    public function owner(): User\n    {\n        return User::find(1);\n    }\n}\n',
      'src/Http/Controller.php': '<?php\nnamespace App\\Http;\n\nuse App\\Models\\User;\nuse App\\Models\\{Team as Squad};\n\nclass Controller\n{\n    public function show()\n    {\n        $t = new Squad();\n        return User::find(1);\n    }\n}\n',
      'legacy/User.php': '<?php\nclass User\n{\n    public static function find(int $id) { return null; }\n}\n',
    }, (g) => {
      expect(g.outgoingOf('src/Http/Controller.php#Controller.show').map((e) => e.to).sort()).toEqual(['src/Models/Team.php#Team', 'src/Models/User.php#User.find']);
      expect(g.outgoingOf('src/Models/Team.php#Team.owner').map((e) => e.to).sort()).toEqual(['src/Models/User.php#User', 'src/Models/User.php#User.find']);
      expect(g.edges.some((e) => e.toFile === 'legacy/User.php')).toBe(false);
    });
  });

  it('Zig: `@import("file.zig")` namespaces and `@import(…).Decl` bindings resolve; std stays external', async () => {
    await withGraph({
      'src/calc.zig': 'pub fn g(x: i32) i32 {\n    return x + 1;\n}\n',
      'src/util/shape.zig': 'pub const Shape = struct {\n    pub fn area() i32 {\n        return 1;\n    }\n};\n',
      'src/main.zig': 'const std = @import("std");\nconst calc = @import("calc.zig");\nconst Shape = @import("util/shape.zig").Shape;\n\npub fn f(x: i32) i32 {\n    std.debug.print("x", .{});\n    return calc.g(x) + Shape.area();\n}\n',
      'other/calc.zig': 'pub fn g(x: i32) i32 {\n    return x;\n}\n',
    }, (g) => {
      expect(g.outgoingOf('src/main.zig#f').map((e) => e.to).sort()).toEqual(['src/calc.zig#g', 'src/util/shape.zig#Shape.area']);
      expect(g.edges.some((e) => e.toFile === 'other/calc.zig')).toBe(false);
    });
  });
});
