import * as fs from 'node:fs';
import * as path from 'node:path';
import { frozenView, type Frozen, type PendingEvent } from '../../src/events/kernel-types';

const ROOT = path.resolve(__dirname, '../..');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/**
 * `x.data as …` where `.data` is not an event's: each with why it is not a fold reading an event. An
 * event's data is typed by the catalogue (src/events/catalogue/event-types.ts): narrow with
 * `catalogued(e)` + `switch (ev.type)`, `isEvent(e, 'T')` or `events.find(ofType('T'))`.
 */
const NOT_EVENT_DATA: Record<string, string> = {
  'src/publish/github-client.ts': "an HTTP error's response body (Octokit)",
  'src/stores/kurrentdb/kurrentdb-event-store.ts': "a new event's data handed to the KurrentDB client's jsonEvent (writing, not folding)",
  'src/codegraph/facts-cache.ts': 'a cache row: JSON.parse(row.data)',
  'src/mcp/server.ts': "zod's parsed.data of a tool call",
};
/** Upcasters read data of an older schema version than the catalogue types; each declares its own old shape. */
const OLD_VERSION_DATA = new Set(['src/events/upcasters.ts']);

/** Issue #22: folds switch on the catalogue's discriminated union, so TypeScript narrows `data`; nothing casts it. */
describe('no event data is cast (folds, deciders, results, sagas read the typed catalogue)', () => {
  const files = sources(path.join(ROOT, 'src')).map((f) => path.relative(ROOT, f).split(path.sep).join('/'));

  it('no `<x>.data as …` outside the listed non-event sites, and no `data: any` parameter', () => {
    const found: string[] = [];
    for (const f of files) {
      const lines = fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
        const cast = /\.data\)?\s+as\s/.test(line) && !Object.hasOwn(NOT_EVENT_DATA, f);
        const anyData = /\b(d|data)\s*:\s*any\b/.test(line) && !OLD_VERSION_DATA.has(f);
        if (cast || anyData) found.push(`${f}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('each listed exception still exists (the list only shrinks)', () => {
    for (const f of Object.keys(NOT_EVENT_DATA)) expect([f, /\.data\)?\s+as\s/.test(fs.readFileSync(path.join(ROOT, f), 'utf8'))]).toEqual([f, true]);
  });

  it('the detector catches the casts it exists for', () => {
    const caught = (line: string) => /\.data\)?\s+as\s/.test(line);
    expect(['const d = e.data as any;', 'const d = events[0]?.data as { nodeId: string };', "s.h = (e.data as { headSha: string }).headSha;", "events.find((e) => e.type === 'X')?.data as Y"].map(caught)).toEqual([true, true, true, true]);
    expect(['const d = ev.data;', "events.find(ofType('ReviewPublished'))?.data;"].map(caught)).toEqual([false, false]);
  });
});

/** Issue #42: `decide` returns the catalogue's event union; `tsc --noEmit` (CI) checks these expectations. */
describe('a decider returns the typed event union', () => {
  it('an unknown type or data of another shape does not compile; a catalogue event does', () => {
    // @ts-expect-error 'NoSuchEvent' is not in the catalogue's union
    const unknownType: PendingEvent = { type: 'NoSuchEvent', data: {} };
    // @ts-expect-error ReviewLevelSet's data is { level }, not { levels }
    const wrongShape: PendingEvent = { type: 'ReviewLevelSet', data: { levels: 'light' } };
    const typed: PendingEvent = { type: 'ReviewLevelSet', data: { level: 'light' } };
    expect([unknownType.type, wrongShape.type, typed.type]).toEqual(['NoSuchEvent', 'ReviewLevelSet', 'ReviewLevelSet']);
  });
});

/** Issue #42: a decider sees its folded state frozen (Frozen<S>): assigning into it does not compile. */
describe('a decider cannot assign into the state it decides on', () => {
  it('property writes at any depth are compile errors; reads are not', () => {
    type State = { level: string; members: Record<string, { role: string }>; rounds: Array<{ headSha: string }> };
    const live: State = { level: 'light', members: { 'user:ann': { role: 'owner' } }, rounds: [{ headSha: 'a' }] };
    const decide = (state: Frozen<State>): string[] => {
      // @ts-expect-error top-level property is read-only
      if (state.level === 'never') state.level = 'x';
      // @ts-expect-error nested record entry is read-only
      if (state.level === 'never') state.members['user:ann'].role = 'viewer';
      // @ts-expect-error array element's property is read-only
      if (state.level === 'never') state.rounds[0].headSha = 'b';
      return [state.level, state.members['user:ann'].role, state.rounds[0].headSha];
    };
    expect(decide(frozenView(live))).toEqual(['light', 'owner', 'a']);
  });
});
