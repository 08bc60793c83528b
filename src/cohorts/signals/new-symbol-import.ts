import { changeOfSymbols, importsOf, isModuleImport } from '../import-links';
import type { SignalDef } from '../types';

/**
 * An import (or re-export) of a symbol the change adds (head) or removes (base): that import line changed with it.
 * A whole module imported or re-exported (`export * from './cache'`, `from .x import *`, `import * as ns`,
 * `import './x'`) names no symbol to follow: the line links to the module itself when the change adds it (head) or
 * deletes it (base). Not merely a module the change touches: a new example's `import click` is no part of a fix to
 * click.py (measured on click, docs/cohorts-history.md).
 */
export const newSymbolImport: SignalDef = {
  id: 'new-symbol-import',
  stage: 'link',
  default: true,
  measured: 'click median 0.667 → 0.793, h3 0.700 → 0.800; whole modules (review-20): h3 0.800 / 0.750 → 0.833 / 0.762, 24 others unchanged',
  joins: 'a file importing or re-exporting a symbol (or a whole module) the change adds or deletes, and that symbol\'s file',
  evidence: 'changed references: pkg/__init__.py → shout',
  test: 'test/compute/formation-signals.test.ts',
  apply: (ctx) => {
    const changeOf = changeOfSymbols(ctx.files);
    const statusOf = new Map(ctx.files.map((f) => [f.status === 'deleted' ? f.oldPath ?? f.path : f.path, f]));
    for (const [graph, side, want] of [[ctx.input.head, 'head', 'added'], [ctx.input.base, 'base', 'deleted']] as const) {
      if (!graph) continue;
      for (const { file: f, decl, target } of importsOf(ctx.files, graph, side)) {
        if (isModuleImport(decl)) {
          const to = statusOf.get(target);
          if (!to || to.path === f.path || to.status !== want) continue;
          ctx.addLink({ fromFile: f.path, toFile: to.path, fromSymbol: f.path, toSymbol: to.path });
          continue;
        }
        for (const b of decl.bindings) {
          if (b.imported === '*') continue;
          const to = graph.resolveExport(target, b.imported, 0);
          if (!to || changeOf.get(to) !== want || !ctx.linkable(to)) continue;
          const toFile = ctx.fileOfSymbol.get(to)!;
          if (toFile !== f.path) ctx.addLink({ fromFile: f.path, toFile, fromSymbol: f.path, toSymbol: to });
        }
      }
    }
  },
};
