/**
 * Issue 19, misuse: the processor's own numeric options are checked when it is made, with an
 * error that names the option and the value (before: `maxTraces: -1` hung inside span.end(),
 * `NaN` meant no bound).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, LoopDetectionSpanProcessor } from '../../src/index.js';

describe('processor options', () => {
  it.each([
    [{ maxTraces: -1 }, 'maxTraces: expected a whole number of at least 1, got -1'],
    [{ maxTraces: Number.NaN }, 'maxTraces: expected a whole number of at least 1, got NaN'],
    [{ maxTraces: 2.5 }, 'maxTraces: expected a whole number of at least 1, got 2.5'],
    [{ maxTraces: Number.POSITIVE_INFINITY }, 'maxTraces: expected a whole number of at least 1, got Infinity'],
    [{ traceIdleMs: 0 }, 'traceIdleMs: expected a number of at least 1, got 0'],
    [{ traceIdleMs: '60000' as unknown as number }, 'traceIdleMs: expected a number of at least 1, got string'],
  ])('%o is refused at construction', (options, message) => {
    let error: unknown;
    try {
      new LoopDetectionSpanProcessor(options);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(message);
  });

  it('good values are taken', () => {
    expect(() => new LoopDetectionSpanProcessor({ maxTraces: 1, traceIdleMs: 1 })).not.toThrow();
    expect(() => new LoopDetectionSpanProcessor({ maxTraces: 100_000, traceIdleMs: 30 * 60_000 })).not.toThrow();
  });
});

describe('after shutdown', () => {
  it('abortSignal() keeps no state and gives a signal that never aborts', async () => {
    const loops = new LoopDetectionSpanProcessor();
    loops.abortSignal('0af7651916cd43dd8448eb211c80319c');
    expect(loops.trackedTraces).toBe(1);
    await loops.shutdown();
    const before = loops.trackedTraces;
    for (let i = 0; i < 100; i++) expect(loops.abortSignal(`${String(i).padStart(32, '1')}`).aborted).toBe(false);
    expect(loops.trackedTraces).toBe(before);
  });
});

describe('onAbort', () => {
  it('is told once per stopped trace with the ToolLoopError, and a throwing onAbort reaches neither the app nor the signal', async () => {
    const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
    const { trace, context } = await import('@opentelemetry/api');
    const told: Array<[string, string]> = [];
    const loops = new LoopDetectionSpanProcessor({
      onAbort: (error, traceId) => {
        told.push([error.name, traceId]);
        throw new Error('onAbort exploded');
      },
    });
    const provider = new BasicTracerProvider({ spanProcessors: [loops] });
    const tracer = provider.getTracer('agent');
    const agent = tracer.startSpan('invoke_agent support');
    const ctx = trace.setSpan(context.active(), agent);
    const signal = loops.abortSignal(agent);
    for (let i = 0; i < 7; i++) {
      const tool = tracer.startSpan('execute_tool search', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":"x"}', 'gen_ai.tool.call.result': '{"hits":[]}' } }, ctx);
      expect(() => tool.end()).not.toThrow();
    }
    agent.end();
    await provider.shutdown();
    expect(signal.aborted).toBe(true);
    expect(told).toEqual([['ToolLoopError', agent.spanContext().traceId]]);
  });
});
