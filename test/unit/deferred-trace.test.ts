import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LoopwatchConfig } from '../../src/detector/config.js';
import { DeferredTrace, MAX_DEFERRED_CHARS } from '../../src/detector/deferred-trace.js';
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
    expect(trace.heldChars).toBe(2 * ('{"q":"x"}'.length + '"r"'.length));
    trace.record(at(3, 'a'), true);
    expect(trace.deferred).toBe(0);
    expect(trace.heldChars).toBe(0);
  });

  it('is eager for structured values, for thresholds below 2 and beyond the held-text budget', () => {
    const engine = new LoopEngine();
    const structured = new DeferredTrace(engine, 't');
    structured.record({ toolName: 'a', arguments: { q: 1 }, startTime: 0, endTime: 1, batch: 'b', callIndex: 1 }, true);
    expect(structured.deferred).toBe(0);
    const big = new DeferredTrace(engine, 't');
    big.record({ toolName: 'a', arguments: 'x'.repeat(MAX_DEFERRED_CHARS + 1), startTime: 0, endTime: 1, batch: 'b', callIndex: 1 }, true);
    expect(big.deferred).toBe(0);
    const eagerConfig = new DeferredTrace(new LoopEngine({ thresholds: { unknownTool: { warning: 1, critical: 2 } } }), 't');
    eagerConfig.record({ toolName: 'a', arguments: '{}', startTime: 0, endTime: 1, batch: 'b', callIndex: 1 }, true);
    expect(eagerConfig.deferred).toBe(0);
  });
});
