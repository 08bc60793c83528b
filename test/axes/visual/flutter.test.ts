import './support/esm';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitRepo } from '../../../src/git/repo';
import { computeVisual, FLUTTER_UNAVAILABLE } from '../../../src/axes/visual';
import { findFlutterSdk } from '../../../src/axes/visual/harness/flutter';
import { GitFixture } from '../../support/git-fixture';

const APP_PUBSPEC = 'name: shop\ndependencies:\n  flutter:\n    sdk: flutter\n';
const WIDGETBOOK_PUBSPEC = 'name: shop_widgetbook\ndependencies:\n  flutter:\n    sdk: flutter\n  widgetbook: ^3.10.0\n  widgetbook_annotation: ^3.2.0\n';
const USE_CASE = "import 'package:widgetbook_annotation/widgetbook_annotation.dart' as widgetbook;\n\n@widgetbook.UseCase(name: 'Default', type: BuyButton)\nWidget buyButton(BuildContext context) => const BuyButton();\n";

describe('Flutter + Widgetbook harness', () => {
  let fx: GitFixture;
  let repo: GitRepo;
  let workspaceDir: string;

  beforeEach(async () => {
    fx = new GitFixture('rl-visual-flutter-');
    workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-visual-ws-'));
  });
  afterEach(() => {
    repo?.close();
    fx.cleanup();
    fs.rmSync(workspaceDir, { recursive: true, force: true });
  });

  async function prChangingDart(files: Record<string, string>): Promise<Awaited<ReturnType<typeof computeVisual>>> {
    for (const [f, c] of Object.entries(files)) fx.write(f, c);
    fx.write('lib/buy_button.dart', 'class BuyButton {}\n');
    const baseSha = fx.commit('base');
    fx.write('lib/buy_button.dart', 'class BuyButton { final bool big = true; }\n');
    const headSha = fx.commit('head');
    repo = await GitRepo.open(fx.dir);
    return computeVisual({ repo, baseSha, headSha, changedFiles: await repo.diffNameStatus(baseSha, headSha), workspaceDir });
  }

  it('the host running these tests has no Flutter SDK (precondition of the next test)', () => {
    expect(findFlutterSdk()).toBeUndefined();
  });

  it('is unavailable with "no Flutter SDK on the host" for a Widgetbook app with use cases, on this machine', async () => {
    const v = await prChangingDart({ 'pubspec.yaml': APP_PUBSPEC, 'widgetbook/pubspec.yaml': WIDGETBOOK_PUBSPEC, 'widgetbook/lib/buy_button.use_case.dart': USE_CASE });
    expect(v).toEqual({ status: 'unavailable', reason: `flutter: ${FLUTTER_UNAVAILABLE.noSdk}`, snapshots: [] });
  });

  it('is unavailable with "no Widgetbook app in the repo" when no package depends on widgetbook', async () => {
    const v = await prChangingDart({ 'pubspec.yaml': APP_PUBSPEC });
    expect(v).toMatchObject({ status: 'unavailable', reason: `flutter: ${FLUTTER_UNAVAILABLE.noWidgetbook}` });
  });

  it('is unavailable with "no golden-testable use case" when the Widgetbook app declares none', async () => {
    const v = await prChangingDart({ 'pubspec.yaml': APP_PUBSPEC, 'widgetbook/pubspec.yaml': WIDGETBOOK_PUBSPEC, 'widgetbook/lib/main.dart': 'void main() {}\n' });
    expect(v).toMatchObject({ status: 'unavailable', reason: `flutter: ${FLUTTER_UNAVAILABLE.noUseCase}` });
  });

  it('is not applicable to a Dart package that is not a Flutter app', async () => {
    const v = await prChangingDart({ 'pubspec.yaml': 'name: cli_tool\ndependencies:\n  args: ^2.0.0\n' });
    expect(v.status).toBe('not_applicable');
  });

  it('is not applicable to a Flutter repo when the PR changes no Dart code', async () => {
    fx.write('pubspec.yaml', APP_PUBSPEC);
    fx.write('README.md', 'a\n');
    const baseSha = fx.commit('base');
    fx.write('README.md', 'b\n');
    const headSha = fx.commit('head');
    repo = await GitRepo.open(fx.dir);
    const v = await computeVisual({ repo, baseSha, headSha, changedFiles: await repo.diffNameStatus(baseSha, headSha), workspaceDir });
    expect(v.status).toBe('not_applicable');
  });

  it('finds an SDK through FLUTTER_ROOT or PATH when one is installed', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-flutter-root-'));
    try {
      fs.mkdirSync(path.join(root, 'bin'));
      fs.writeFileSync(path.join(root, 'bin', 'flutter'), '#!/bin/sh\n', { mode: 0o755 });
      expect(findFlutterSdk({ FLUTTER_ROOT: root, PATH: '' })).toBe(path.join(root, 'bin', 'flutter'));
      expect(findFlutterSdk({ PATH: path.join(root, 'bin') })).toBe(path.join(root, 'bin', 'flutter'));
      expect(findFlutterSdk({ PATH: root })).toBeUndefined();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
