import type { CodeGraph } from '../codegraph/graph';
import { ancestors } from './cite';
import { signalsOf } from './registry';
import type { EdgeRule, FormationFile, FormationInput, FormationSignal, Link, LinkContext } from './types';

/**
 * Resolved edges between changed fragments of different files (SPEC §8.3), from the head graph and, for deleted
 * definitions, from the base graph; paths are normalized to head paths. The active `edge` signals shape the walk (which
 * checker edges count, which edges say nothing about the change, which definitions are no target, one hop past a
 * target); then the active `link` signals add their links. Sorted, each link once.
 */
export function changedLinks(input: FormationInput, semanticFiles: FormationFile[], active: ReadonlySet<FormationSignal>): Link[] {
  const fileOfSymbol = new Map<string, string>();
  const residualFiles = new Set<string>();
  const baseToHead = new Map<string, string>();
  for (const f of semanticFiles) {
    baseToHead.set(f.oldPath ?? f.path, f.path);
    for (const fr of f.fragments) {
      if (fr.symbolId) fileOfSymbol.set(fr.symbolId, f.path);
      else residualFiles.add(f.path);
    }
  }
  const rules: EdgeRule[] = signalsOf('edge').filter((s) => active.has(s.id)).map((s) => s.edge);
  const unlinkable = new Set(rules.flatMap((r) => (r.unlinkable ? [...r.unlinkable(semanticFiles)] : [])));
  const links: Link[] = [];
  const seen = new Set<string>();
  const ctx: LinkContext = {
    input,
    active,
    files: semanticFiles,
    fileOfSymbol,
    residualFiles,
    testFiles: new Set(semanticFiles.filter((f) => f.role === 'test').map((f) => f.path)),
    baseToHead,
    linkable: (symbol) => !unlinkable.has(symbol),
    onChangedLine: (file, side, line) => Boolean(input.changedLines?.get(file)?.[side].has(line)),
    addLink: (link) => {
      const key = `${link.fromFile}\0${link.toFile}\0${link.fromSymbol}\0${link.toSymbol}`;
      if (seen.has(key)) return;
      seen.add(key);
      links.push(link);
    },
  };
  const admits = rules.flatMap((r) => (r.admitsCheckerEdge ? [r.admitsCheckerEdge] : []));
  const skips = rules.flatMap((r) => (r.skips ? [r.skips] : []));
  const hops = rules.flatMap((r) => (r.hop ? [r.hop] : []));
  const byLine = rules.some((r) => r.linesProveChange);
  const liveHeadFiles = new Set(semanticFiles.filter((f) => f.status !== 'deleted').map((f) => f.path));
  const visit = (graph: CodeGraph | undefined, side: 'head' | 'base') => {
    if (!graph) return;
    const hop = (to: string): string | undefined => {
      for (const h of hops) {
        const target = h(ctx, graph, to);
        if (target) return target;
      }
      return undefined;
    };
    for (const e of graph.edges) {
      // An edge only TypeScript's checker found joins when an active signal admits it (`type-edges`, `type-bindings`);
      // never a field read landing on its owner class.
      if (e.provenance === 'checker' && (e.member || !admits.some((a) => a(e)))) continue;
      const fromFile = side === 'head' ? e.fromFile : baseToHead.get(e.fromFile);
      if (!fromFile || (side === 'head' && !liveHeadFiles.has(fromFile))) continue;
      if (skips.some((s) => s(ctx, e, fromFile, side))) continue;
      let fromSymbol: string | undefined;
      if (ctx.testFiles.has(fromFile)) fromSymbol = e.from; // a changed test exercises whatever it references
      else if (e.from === e.fromFile) fromSymbol = residualFiles.has(fromFile) || byLine ? e.from : undefined;
      else fromSymbol = [e.from, ...ancestors(e.from)].find((s) => fileOfSymbol.has(s)) ?? (byLine ? e.from : undefined);
      if (!fromSymbol) continue;
      // Exactly the changed definition: naming a class (a type annotation, `new X`) says nothing about
      // which of its changed methods runs, and treating it so turns every widely used class into a hub.
      const direct = fileOfSymbol.has(e.to) && ctx.linkable(e.to) ? e.to : undefined;
      const toSymbol = direct ?? hop(e.to);
      if (!toSymbol) continue;
      const toFile = fileOfSymbol.get(toSymbol)!;
      if (toFile === fromFile) continue;
      ctx.addLink({ fromFile, toFile, fromSymbol, toSymbol, ...(direct ? {} : { via: e.to }) });
    }
  };
  visit(input.head, 'head');
  visit(input.base, 'base');
  for (const s of signalsOf('link')) if (active.has(s.id)) s.apply(ctx);
  return links.sort((a, b) => `${a.fromFile}\0${a.toFile}\0${a.fromSymbol}\0${a.toSymbol}`.localeCompare(`${b.fromFile}\0${b.toFile}\0${b.fromSymbol}\0${b.toSymbol}`));
}
