import { COMMANDS } from '../../src/commands/registry';
import { bindTools, COMMAND_TOOLS, NOT_AGENT_TOOLS, QUERY_TOOLS, REVIEW_PARTS, resolveTools } from '../../src/mcp/tools';
import { QUERIES } from '../../src/readmodels/queries/queries';

describe('MCP tool bindings against the command and query registries', () => {
  it('every command is bound to a tool or listed, with a reason, as not for agents — exactly once', () => {
    const bound = COMMAND_TOOLS.map((b) => b.command);
    const excluded = COMMANDS.map((c) => c.name).filter((n) => Object.hasOwn(NOT_AGENT_TOOLS, n));
    expect([...bound, ...excluded].sort()).toEqual(COMMANDS.map((c) => c.name).sort());
    expect(bound.filter((n) => Object.hasOwn(NOT_AGENT_TOOLS, n))).toEqual([]);
  });

  it('every query is read by a tool (get_review or its own) or listed as not for agents — exactly once', () => {
    const read = [...QUERY_TOOLS.map((b) => b.query), ...REVIEW_PARTS];
    const excluded = QUERIES.map((q) => q.name).filter((n) => Object.hasOwn(NOT_AGENT_TOOLS, n));
    expect([...read, ...excluded].sort()).toEqual(QUERIES.map((q) => q.name).sort());
  });

  it('NOT_AGENT_TOOLS names only registered commands and queries, each with a reason', () => {
    const names = new Set([...COMMANDS.map((c) => c.name), ...QUERIES.map((q) => q.name)]);
    for (const [name, why] of Object.entries(NOT_AGENT_TOOLS)) expect([name, names.has(name), why.length > 10]).toEqual([name, true, true]);
  });

  it('get_review reads every part it names (no silently dropped query such as "axes")', () => {
    const review = resolveTools().find((t) => t.name === 'get_review')!;
    expect(review.queries!.map((q) => q.name)).toEqual(REVIEW_PARTS);
  });

  it('a binding to a missing command or query fails when the tools are resolved (server start-up)', () => {
    expect(() => bindTools([...COMMAND_TOOLS, { tool: 'ghost', command: 'noSuchCommand' }], QUERY_TOOLS, REVIEW_PARTS)).toThrow(/tool ghost names "noSuchCommand", not in the command registry/);
    expect(() => bindTools(COMMAND_TOOLS, [...QUERY_TOOLS, { tool: 'get_ghost', query: 'ghost' }], REVIEW_PARTS)).toThrow(/tool get_ghost names "ghost", not in the query registry/);
    expect(() => bindTools(COMMAND_TOOLS, QUERY_TOOLS, [...REVIEW_PARTS, 'axes'])).toThrow(/tool get_review names "axes", not in the query registry/);
  });
});
