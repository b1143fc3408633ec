import { describe, expect, it } from 'vitest';
import { decodeTracesData } from '../../src/formats/otlp-json.js';
import { TraceReplayer } from '../../src/replay/trace-replay.js';
import type { ReplayedTrace } from '../../src/replay/types.js';
import { defaultAdapters } from '../../src/conventions/index.js';
import { LoopEngine } from '../../src/detector/engine.js';
import { agentTrace, tracesData, type OtlpSpan } from '../support/otlp.js';

function replayer(opts: { lingerSpans?: number; maxOpenTraces?: number } = {}): { r: TraceReplayer; done: ReplayedTrace[] } {
  const done: ReplayedTrace[] = [];
  const r = new TraceReplayer({ engine: new LoopEngine(), adapters: defaultAdapters, onTrace: (t) => done.push(t), ...opts });
  return { r, done };
}

const feed = (r: TraceReplayer, spans: OtlpSpan[]): void => {
  for (const s of decodeTracesData(tracesData(spans))) r.add(s);
};

const loop = (label: string): OtlpSpan[] =>
  agentTrace({ label, prompt: 'p', steps: Array.from({ length: 5 }, () => ({ tool: 'search', args: { q: 'x' }, result: 'same' })) });

describe('trace replay', () => {
  it('a root that arrives before its children (a tail sampler regrouping) does not cut the trace', () => {
    const { r, done } = replayer();
    const spans = loop('root-first');
    const root = spans.pop();
    if (!root) throw new Error('no root');
    feed(r, [spans[0] as OtlpSpan, root, ...spans.slice(1)]);
    r.finish();
    expect(done).toHaveLength(1);
    expect(done[0]?.detections.map((d) => [d.level, d.callIndex])).toEqual([
      ['warning', 3],
      ['critical', 5],
    ]);
  });

  it('evaluates a finished trace once enough spans of other traces have gone by, before the input ends', () => {
    const { r, done } = replayer({ lingerSpans: 2048 });
    feed(r, loop('early'));
    expect(done).toHaveLength(0);
    for (let i = 0; i < 1200; i++) feed(r, agentTrace({ label: `other-${i}`, steps: [{ tool: 't', args: { i }, result: i }] }));
    expect(done.map((t) => t.traceId)).toContain(decodeTracesData(tracesData(loop('early')))[0]?.traceId);
    expect(done.find((t) => t.detections.length > 0)?.detections).toHaveLength(2);
  });

  it('keeps a bounded number of traces open on endless input', () => {
    const { r, done } = replayer({ maxOpenTraces: 100 });
    // rootless traces (remote parents) never complete by themselves
    for (let i = 0; i < 1000; i++) feed(r, agentTrace({ label: `rootless-${i}`, steps: [{ tool: 't', args: {}, result: 1 }] }).slice(0, -1));
    expect(done.length).toBeGreaterThanOrEqual(900);
    r.finish();
    expect(done).toHaveLength(1000);
  });
});

describe('trace replay on a clock (serve)', () => {
  function clocked(opts: { quietAfterRootMs?: number; traceWaitMs?: number; maxHeldSpans?: number; retainTraces?: number } = {}) {
    let now = 0;
    const done: { trace: ReplayedTrace<string>; reason: string }[] = [];
    const r = new TraceReplayer<string>({
      engine: new LoopEngine(),
      adapters: defaultAdapters,
      clock: () => now,
      onTrace: (trace, reason) => done.push({ trace, reason }),
      ...opts,
    });
    const add = (spans: OtlpSpan[]): void => {
      for (const s of decodeTracesData(tracesData(spans))) r.add(s, s.spanId);
    };
    return { r, done, add, tick: (ms: number) => void (now += ms) };
  }

  it('completes a trace once its root has arrived and it has been quiet, not before', () => {
    const { r, done, add, tick } = clocked({ quietAfterRootMs: 500, traceWaitMs: 10_000 });
    const spans = loop('clock-root');
    add(spans.slice(0, 3));
    tick(5_000);
    expect(r.expire()).toBe(0);
    add(spans.slice(3));
    tick(499);
    expect(r.expire()).toBe(0);
    tick(1);
    expect(r.expire()).toBe(1);
    expect(done[0]?.reason).toBe('root');
    expect(done[0]?.trace.payloads).toHaveLength(spans.length);
    expect(done[0]?.trace.detections.map((d) => d.level)).toEqual(['warning', 'critical']);
    expect(r.heldSpans).toBe(0);
  });

  it('completes a rootless trace after the trace wait', () => {
    const { r, done, add, tick } = clocked({ quietAfterRootMs: 500, traceWaitMs: 3_000 });
    add(loop('rootless').slice(0, -1));
    tick(2_999);
    expect(r.expire()).toBe(0);
    tick(1);
    expect(r.expire()).toBe(1);
    expect(done[0]?.reason).toBe('quiet');
  });

  it('bounds the spans it holds: the least recently active trace is completed early', () => {
    const { r, done, add } = clocked({ maxHeldSpans: 20 });
    for (let i = 0; i < 10; i++) add(loop(`held-${i}`).slice(0, -1));
    expect(r.heldSpans).toBeLessThanOrEqual(20);
    expect(done.length).toBeGreaterThanOrEqual(7);
    expect(done.every((d) => d.reason === 'bound')).toBe(true);
  });

  it('late spans continue a completed trace: the history counts, nothing is reported twice', () => {
    const { r, done, add, tick } = clocked({ quietAfterRootMs: 100, traceWaitMs: 1_000, retainTraces: 100 });
    const spans = agentTrace({ label: 'late', prompt: 'p', steps: Array.from({ length: 6 }, () => ({ tool: 'search', args: { q: 'x' }, result: 'same' })) });
    const root = spans.pop() as OtlpSpan;
    // first three calls (a chat span and a tool span per step), quiet for the whole wait: completed without its root
    add(spans.slice(0, 6));
    tick(1_000);
    r.expire();
    expect(done[0]?.trace.detections.map((d) => [d.level, d.callIndex])).toEqual([['warning', 3]]);
    expect(done[0]?.trace.continued).toBe(false);
    // the rest arrives later: the engine sees six calls, only new detections come out
    add([...spans.slice(6), root]);
    tick(100);
    r.expire();
    expect(done).toHaveLength(2);
    expect(done[1]?.trace.continued).toBe(true);
    expect(done[1]?.trace.toolCalls).toBe(3);
    expect(done[1]?.trace.detections.map((d) => [d.level, d.callIndex])).toEqual([['critical', 5]]);
    expect(done[1]?.trace.payloads).toHaveLength(7);
  });

  it('late spans that are earlier calls (a batch retried after a kill): the critical still comes out, the warning not twice', () => {
    const { r, done, add, tick } = clocked({ quietAfterRootMs: 100, traceWaitMs: 1_000, retainTraces: 100 });
    const spans = agentTrace({ label: 'late-early', prompt: 'p', steps: Array.from({ length: 5 }, () => ({ tool: 'search', args: { q: 'x' }, result: 'same' })) });
    const root = spans.pop() as OtlpSpan;
    // calls 3 to 5 and the root first: three repetitions, a warning on the last of them
    add([...spans.slice(4), root]);
    tick(100);
    r.expire();
    expect(done.map((d) => d.trace.detections.map((x) => x.level))).toEqual([['warning']]);
    // calls 1 and 2 afterwards: five repetitions in all, so the critical, on a call already forwarded
    add(spans.slice(0, 4));
    tick(1_000);
    r.expire();
    expect(done).toHaveLength(2);
    expect(done[1]?.trace.continued).toBe(true);
    expect(done[1]?.trace.detections.map((d) => [d.level, d.callIndex])).toEqual([['critical', 5]]);
    // once more: nothing new
    add(spans.slice(0, 1));
    tick(1_000);
    r.expire();
    expect(done[2]?.trace.detections).toEqual([]);
  });
});

describe('trace replay bounded in bytes (serve, issue 28)', () => {
  /** Minimal rootless one-span traces, as a flood of distinct traces sends them. */
  const oneSpan = (i: number) => ({ traceId: i.toString(16).padStart(32, '0'), spanId: (i + 1).toString(16).padStart(16, '0'), parentSpanId: 'ffffffffffffffff', name: 's', attributes: {}, status: { code: 0 }, startTime: 0, endTime: 1, service: undefined });

  /** Milliseconds to add `n` one-span traces to a replayer that holds `held` of them (the rest are completed early). */
  function evictionMs(held: number, n: number): number {
    const r = new TraceReplayer<number>({ engine: new LoopEngine(), adapters: defaultAdapters, clock: () => 0, maxHeldSpans: held, onTrace: () => undefined });
    for (let i = 0; i < held; i++) r.add(oneSpan(i), i);
    const t0 = performance.now();
    for (let i = held; i < held + n; i++) r.add(oneSpan(i), i);
    return performance.now() - t0;
  }

  it('evicting the least recently active trace costs the same however many traces are held (the 320 000-trace request stalled for seconds)', () => {
    evictionMs(500, 10_000); // warm-up
    const few = Math.min(evictionMs(500, 10_000), evictionMs(500, 10_000));
    const many = Math.min(evictionMs(100_000, 10_000), evictionMs(100_000, 10_000));
    // a Map walked from its front (the old way) makes this ratio grow with the held traces
    expect(many / few).toBeLessThan(5);
  });

  it('holds at most maxHeldBytes, cuts a trace past maxTraceBytes (its later spans continue it), and bounds what it remembers', () => {
    const done: { reason: string; spans: number; continued: boolean }[] = [];
    const r = new TraceReplayer<number>({
      engine: new LoopEngine(),
      adapters: defaultAdapters,
      clock: () => 0,
      weigh: (bytes) => bytes,
      maxHeldBytes: 200_000,
      maxTraceBytes: 50_000,
      maxRetainedBytes: 120_000,
      retainTraces: 1_000,
      onTrace: (t, reason) => done.push({ reason, spans: t.payloads.length, continued: t.continued }),
    });
    // one trace that never ends: 300 spans of 1 KB
    const growing = (k: number) => ({ ...oneSpan(7), spanId: (k + 1).toString(16).padStart(16, '0') });
    let maxHeld = 0;
    for (let k = 0; k < 300; k++) {
      r.add(growing(k), 1_000);
      maxHeld = Math.max(maxHeld, r.heldBytes);
    }
    const cuts = done.filter((d) => d.reason === 'cut');
    expect(cuts.length).toBeGreaterThanOrEqual(5);
    expect(cuts.slice(1).every((d) => d.continued)).toBe(true);
    expect(maxHeld).toBeLessThanOrEqual(50_000 + 1_000 + 1_000);
    // many traces: the held ones stay under their bound, the remembered ones under theirs
    for (let i = 100; i < 2_100; i++) {
      r.add(oneSpan(i), 500);
      maxHeld = Math.max(maxHeld, r.heldBytes);
    }
    expect(maxHeld).toBeLessThanOrEqual(200_000 + 2_000);
    expect(done.some((d) => d.reason === 'bound')).toBe(true);
    expect(r.retainedBytes).toBeLessThanOrEqual(120_000);
    expect(r.retainedBytes).toBeGreaterThan(0);
    r.finish();
    expect(r.heldBytes).toBe(0);
  });

  it('forgets a completed trace whose state alone is over half of maxRetainedBytes (a huge trace is not kept for its late spans)', () => {
    const r = new TraceReplayer<number>({ engine: new LoopEngine(), adapters: defaultAdapters, clock: () => 0, weigh: () => 0, maxRetainedBytes: 80_000, retainTraces: 1_000, onTrace: () => undefined });
    for (let k = 0; k < 500; k++) r.add({ ...oneSpan(9), spanId: (k + 1).toString(16).padStart(16, '0') }, 0);
    r.finish();
    expect(r.forgottenTraces).toBe(1);
    expect(r.retainedBytes).toBe(0);
  });
});

describe('trace replay: what the user says', () => {
  // each model call's input holds the whole conversation so far, as the gen_ai conventions record it
  const withUser = (label: string, says: (i: number) => string): OtlpSpan[] =>
    agentTrace({
      label,
      steps: Array.from({ length: 6 }, () => ({ tool: 'get_order', args: { id: 'W-12' }, result: { status: 'processing' } })),
      model: (i) => ({
        name: 'chat mock-model',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': JSON.stringify(Array.from({ length: i + 1 }, (_, k) => ({ role: 'user', parts: [{ type: 'text', content: says(k) }] }))),
        },
      }),
    });

  it('a re-check the user asked for before each call is no loop', () => {
    const { r, done } = replayer();
    feed(r, withUser('rechecks', (k) => `Please check order W-12 again (${k + 1}), I was told it shipped.`));
    r.finish();
    expect(done[0]?.detections).toEqual([]);
  });

  it('the user saying the same thing before each call adds nothing: a loop, stopped at the 5th', () => {
    const { r, done } = replayer();
    feed(r, withUser('same-words', () => 'Please check my order.'));
    r.finish();
    expect(done[0]?.detections.map((d) => [d.rule, d.level, d.callIndex])).toEqual([
      ['identical_calls', 'warning', 3],
      ['identical_calls', 'critical', 5],
    ]);
  });
});
