import { DomainError } from '../domain-error';
import type { DiagramInput, VerifiedDiagram } from '../events/catalogue/compute';
import type { CodeGraph } from './graph';

function requireDeclared(kind: string, ids: Set<string>, edges: Array<{ from: string; to: string }>, field: string): void {
  edges.forEach((e, i) => {
    for (const end of ['from', 'to'] as const) {
      if (!ids.has(e[end])) throw new DomainError('invalid_payload', `diagram.${field}.${i}.${end}: "${e[end]}" is not a declared ${kind}`);
    }
  });
}

/**
 * Checks every edge of a typed diagram against the code graph of the head (SPEC §8.6). Only resolved
 * edges confirm anything:
 * · sequence: a message A → B is verified when A's symbol (or one nested in it) has a resolved
 *   reference to B's symbol (or to the message's own `symbolId`, when given);
 * · entityRelation: verified when either entity's symbol references the other;
 * · stateMachine: verified when the transition names a `symbolId` that exists in the head and the
 *   graph holds a resolved reference from it (states themselves are not code symbols).
 * Anything else is stored `verified: false` and shown as unverified, never as fact.
 */
export function verifyDiagram(diagram: DiagramInput, graph: CodeGraph | undefined): VerifiedDiagram {
  const edge = (from?: string, to?: string) => !!graph && !!from && !!to && graph.symbols.has(from) && graph.symbols.has(to) && graph.hasResolvedEdge(from, to);
  switch (diagram.kind) {
    case 'sequence': {
      const ids = new Map(diagram.participants.map((p) => [p.id, p]));
      requireDeclared('participant', new Set(ids.keys()), diagram.messages, 'messages');
      return {
        ...diagram,
        messages: diagram.messages.map((m) => {
          const from = ids.get(m.from)?.symbolId;
          const to = m.symbolId ?? ids.get(m.to)?.symbolId;
          return { ...m, verified: edge(from, to) };
        }),
      };
    }
    case 'entityRelation': {
      const ids = new Map(diagram.entities.map((e) => [e.id, e]));
      requireDeclared('entity', new Set(ids.keys()), diagram.relations, 'relations');
      return {
        ...diagram,
        relations: diagram.relations.map((r) => {
          const a = ids.get(r.from)?.symbolId;
          const b = ids.get(r.to)?.symbolId;
          return { ...r, verified: edge(a, b) || edge(b, a) };
        }),
      };
    }
    case 'stateMachine': {
      const ids = new Set(diagram.states.map((s) => s.id));
      requireDeclared('state', ids, diagram.transitions, 'transitions');
      if (diagram.initial && !ids.has(diagram.initial)) throw new DomainError('invalid_payload', `diagram.initial: "${diagram.initial}" is not a declared state`);
      return {
        ...diagram,
        transitions: diagram.transitions.map((t) => ({ ...t, verified: !!graph && !!t.symbolId && graph.symbols.has(t.symbolId) && graph.outgoingOf(t.symbolId).length > 0 })),
      };
    }
  }
}
