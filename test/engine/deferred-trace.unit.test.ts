import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LoopwatchConfig } from '../../src/detector/config/index.js';
import { DeferredTrace } from '../../src/detector/deferred-trace.js';
import { LoopEngine } from '../../src/detector/engine.js';
import { buildToolCall, type RawToolCall } from '../../src/detector/tool-call.js';
import type { LoopDetection } from '../../src/detector/types.js';

/** One call of a generated script; `parallel` joins the previous call's batch. */
interface GenCall {
  tool: string;
  args: string | undefined;
  result: string | undefined;
  error: string | undefined;
  parallel: boolean;
  idle: number;
}

const callArb: fc.Arbitrary<GenCall> = fc.record({
  tool: fc.constantFrom('search', 'read_file', 'edit', 'get_status', 'sleep', 'ghost'),
  args: fc.option(fc.constantFrom('{"q":"x"}', '{"q":"y"}', '{"path":"a.ts"}', '{ "q" : "x" }', '{"q":"x","request_id":"r1"}'), { nil: undefined }),
  result: fc.option(fc.constantFrom('"same"', '"other"', 'No results found.', '{"ok":true}', '"running"'), { nil: undefined }),
  error: fc.option(fc.constantFrom('timeout', 'Unknown tool: ghost', '429 retry later'), { freq: 4, nil: undefined }),
  parallel: fc.boolean(),
  idle: fc.constantFrom(5, 1_000, 60_000),
});

function toRaw(script: readonly GenCall[]): Array<{ raw: RawToolCall; complete: boolean }> {
  const out: Array<{ raw: RawToolCall; complete: boolean }> = [];
  let t = 1_700_000_000_000;
  let batch = 0;
  script.forEach((c, i) => {
    if (!(c.parallel && i > 0)) batch++;
    t += c.idle;
    const raw: RawToolCall = {
      toolName: c.tool,
      ...(c.args !== undefined ? { arguments: c.args } : {}),
      ...(c.error === undefined && c.result !== undefined ? { result: c.result } : {}),
      ...(c.error !== undefined ? { error: { message: c.error } } : {}),
      startTime: t,
      endTime: t + 50,
      batch: `b${batch}`,
      callIndex: i + 1,
      spanId: `s${i + 1}`,
      promptName: 'p',
    };
    out.push({ raw, complete: !(script[i + 1]?.parallel ?? false) });
  });
  return out;
}

const key = (d: LoopDetection): string => JSON.stringify(d);

function both(script: readonly GenCall[], config: LoopwatchConfig): { eager: string[]; deferred: string[] } {
  const engine = new LoopEngine(config);
  const eagerTrace = engine.createTrace('t');
  const deferredTrace = new DeferredTrace(engine, 't');
  const eager: string[] = [];
  const deferred: string[] = [];
  for (const { raw, complete } of toRaw(script)) {
    eager.push(...eagerTrace.record(buildToolCall(engine, raw), complete).map(key));
    deferred.push(...deferredTrace.record(raw, complete).map(key));
  }
  return { eager, deferred };
}

describe('DeferredTrace', () => {
  it('reports exactly what recording every call at once reports (any script, any thresholds)', () => {
    const configs: LoopwatchConfig[] = [
      {},
      { thresholds: { repeat: { warning: 2, critical: 3 }, unknownTool: { warning: 1, critical: 2 } } },
      { thresholds: { cycle: { warning: 2, critical: 3 }, noProgress: { warning: 2, critical: 3 } } },
      { knownTools: ['search', 'read_file', 'edit'] },
    ];
    fc.assert(
      fc.property(fc.array(callArb, { minLength: 1, maxLength: 40 }), fc.constantFrom(...configs), (script, config) => {
        const { eager, deferred } = both(script, config);
        expect(deferred).toEqual(eager);
      }),
      { numRuns: 2_000 },
    );
  });

  it('holds calls to distinct tools and evaluates them when a tool comes back', () => {
    const engine = new LoopEngine();
    const trace = new DeferredTrace(engine, 't');
    const at = (i: number, tool: string): RawToolCall => ({ toolName: tool, arguments: '{"q":"x"}', result: '"r"', startTime: i * 1000, endTime: i * 1000 + 5, batch: `b${i}`, callIndex: i, spanId: `s${i}` });
    trace.record(at(1, 'a'), true);
    trace.record(at(2, 'b'), true);
    expect(trace.deferred).toBe(2);
    trace.record(at(3, 'a'), true);
    expect(trace.deferred).toBe(0);
  });

  it('fingerprints a waiting call at once: a structured value changed after the call does not change its evidence', () => {
    const engine = new LoopEngine();
    const deferred = new DeferredTrace(engine, 't');
    const eager = engine.createTrace('t');
    const args = { q: 'x' };
    const call = (i: number): RawToolCall => ({ toolName: 'a', arguments: args, result: '"same"', startTime: i * 1000, endTime: i * 1000 + 5, batch: `b${i}`, callIndex: i });
    const first = call(1);
    expect(deferred.record(first, true)).toEqual([]);
    eager.record(buildToolCall(engine, first), true);
    expect(deferred.deferred).toBe(1);
    // the app reuses its object for the next call's arguments
    args.q = 'y';
    const found = [2, 3].flatMap((i) => deferred.record(call(i), true).map(key));
    const expected = [2, 3].flatMap((i) => eager.record(buildToolCall(engine, call(i)), true).map(key));
    expect(found).toEqual(expected);
  });

  it('is eager for thresholds below 2', () => {
    const eagerConfig = new DeferredTrace(new LoopEngine({ thresholds: { unknownTool: { warning: 1, critical: 2 } } }), 't');
    eagerConfig.record({ toolName: 'a', arguments: '{}', startTime: 0, endTime: 1, batch: 'b', callIndex: 1 }, true);
    expect(eagerConfig.deferred).toBe(0);
  });
});
