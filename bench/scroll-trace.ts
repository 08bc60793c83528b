/**
 * Where the scroll's frames go: a Chromium trace (CDP Tracing, devtools.timeline categories) recorded
 * around `measureScroll`, summarised per event kind on the renderer's main thread, for all frames and for
 * the long ones (> 25 ms between BeginMainThreadFrame events). Used by `bench:review-page -- --trace FILE`.
 */
import * as fs from 'node:fs';
import type { Page } from 'playwright-core';

const CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'disabled-by-default-devtools.timeline.frame', 'blink', 'cc', 'viz', 'benchmark', 'toplevel'];

interface TraceEvent { name: string; ph: string; ts: number; dur?: number; pid: number; tid: number; args?: any; cat?: string }

export async function traceScroll<T>(page: Page, file: string, body: () => Promise<T>): Promise<{ result: T; summary: unknown }> {
  const cdp = await page.context().newCDPSession(page);
  const events: TraceEvent[] = [];
  cdp.on('Tracing.dataCollected', (d) => void events.push(...(d.value as unknown as TraceEvent[])));
  await cdp.send('Tracing.start', { traceConfig: { includedCategories: CATEGORIES, recordMode: 'recordContinuously' }, transferMode: 'ReportEvents' } as any);
  const result = await body();
  const done = new Promise<void>((r) => cdp.once('Tracing.tracingComplete', () => r()));
  await cdp.send('Tracing.end');
  await done;
  fs.writeFileSync(file, JSON.stringify({ traceEvents: events }));
  return { result, summary: summarise(events) };
}

const KINDS: Array<[RegExp, string]> = [
  [/^(FunctionCall|EvaluateScript|v8\.execute|TimerFire|FireAnimationFrame|FireIdleCallback|EventDispatch|V8\.GCScavenger|MinorGC|MajorGC|V8\.GC.*)$/, 'script'],
  [/^(UpdateLayoutTree|RecalculateStyles|ScheduleStyleRecalculation)$/, 'RecalcStyle'],
  [/^Layout$/, 'Layout'],
  [/^(PrePaint|UpdateLayer|UpdateLayerTree)$/, 'PrePaint'],
  [/^(Paint|PaintImage|Rasterize|RasterTask)$/, 'Paint'],
  [/^(Layerize|Commit|CompositeLayers|ProxyMain::BeginMainFrame::commit)$/, 'Commit/Composite'],
  [/^(IntersectionObserverController::computeIntersections|ComputeIntersections|IntersectionObservation|UpdateIntersectionObservations?)$/i, 'IntersectionObserver'],
  [/^(HitTest)$/, 'HitTest'],
  [/^ParseHTML$/, 'ParseHTML'],
];

function summarise(all: TraceEvent[]) {
  const meta = all.filter((e) => e.ph === 'M' && e.name === 'thread_name');
  const main = meta.find((e) => e.args?.name === 'CrRendererMain');
  if (!main) return { error: 'no CrRendererMain thread' };
  const ev = all.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.dur !== undefined);
  const frames = all.filter((e) => e.pid === main.pid && (e.name === 'BeginMainThreadFrame' || e.name === 'BeginFrame') && e.tid === main.tid).map((e) => e.ts).sort((a, b) => a - b);
  // Top-level (non-nested) self time by kind, per frame interval.
  const byKind = new Map<string, number>();
  const longKind = new Map<string, number>();
  const names = new Map<string, number>();
  const longNames = new Map<string, number>();
  const longIntervals: Array<[number, number]> = [];
  for (let i = 1; i < frames.length; i++) if (frames[i] - frames[i - 1] > 25_000) longIntervals.push([frames[i - 1], frames[i]]);
  const inLong = (ts: number) => longIntervals.some(([a, b]) => ts >= a && ts < b);
  const first = frames[0] ?? 0;
  const last = frames[frames.length - 1] ?? 0;
  ev.sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
  // self time: subtract children (events on one thread nest properly)
  const stack: Array<TraceEvent & { self: number }> = [];
  const flush = (x: TraceEvent & { self: number }) => {
    if (x.ts < first || x.ts > last) return;
    const kind = KINDS.find(([re]) => re.test(x.name))?.[1] ?? 'other';
    byKind.set(kind, (byKind.get(kind) ?? 0) + x.self);
    names.set(x.name, (names.get(x.name) ?? 0) + x.self);
    if (inLong(x.ts)) {
      longKind.set(kind, (longKind.get(kind) ?? 0) + x.self);
      longNames.set(x.name, (longNames.get(x.name) ?? 0) + x.self);
    }
  };
  for (const e of ev) {
    while (stack.length && stack[stack.length - 1].ts + stack[stack.length - 1].dur! <= e.ts) flush(stack.pop()!);
    const x = { ...e, self: e.dur! };
    if (stack.length) stack[stack.length - 1].self -= e.dur!;
    stack.push(x);
  }
  while (stack.length) flush(stack.pop()!);
  const ms = (m: Map<string, number>, n = 12) => Object.fromEntries([...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => [k, Math.round(v / 100) / 10]));
  return {
    mainThreadFrames: frames.length,
    spanMs: Math.round((last - first) / 1000),
    longIntervals: longIntervals.length,
    selfMsByKind: ms(byKind),
    selfMsByKindInLongFrames: ms(longKind),
    topEvents: ms(names, 18),
    topEventsInLongFrames: ms(longNames, 12),
  };
}
