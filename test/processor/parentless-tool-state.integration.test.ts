/**
 * Tool spans with no parent at all (a tool server called without trace context, an app without a
 * context manager): each is a trace of its own, over when it ends, so loopwatch keeps nothing for
 * it (issue 17), while still reading it as a tool call and detecting what one call can show.
 */
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor, type LoopDetection, type LoopDetectionSpanProcessorOptions } from '../../src/index.js';

function setup(options: LoopDetectionSpanProcessorOptions = {}) {
  const detections: LoopDetection[] = [];
  const loops = new LoopDetectionSpanProcessor({ ...options, onLoop: (d) => void detections.push(d) });
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [loops as unknown as SpanProcessor, new SimpleSpanProcessor(exporter)] });
  return { loops, exporter, detections, tracer: provider.getTracer('tool-server') };
}

function parentlessCall(tracer: ReturnType<typeof setup>['tracer'], tool: string, args: string, result: string): void {
  const span = tracer.startSpan(`execute_tool ${tool}`, { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'gen_ai.tool.call.arguments': args } }, ROOT_CONTEXT);
  span.setAttribute('gen_ai.tool.call.result', result);
  span.end();
}

describe('tool spans with no parent', () => {
  it('keep no state, however many arrive (nothing to evict)', () => {
    const { loops, exporter, tracer } = setup({ maxTraces: 100 });
    for (let i = 0; i < 1_000; i++) {
      parentlessCall(tracer, 'search', `{"q":"same"}`, '"no results"');
      expect(loops.trackedTraces, `after call ${i + 1}`).toBe(0);
    }
    // each is its own trace: the same call a thousand times over is no loop
    expect(exporter.getFinishedSpans().flatMap((s) => s.events.map((e) => e.name))).toEqual([]);
    // and each was still read as a tool call: named in the vocabulary the collector counts by
    expect(exporter.getFinishedSpans().every((s) => s.attributes['gen_ai.tool.name'] === 'search')).toBe(true);
  });

  it('still get what one call can show (a threshold of 1), and an abort signal asked for during the call', () => {
    const { loops, detections, tracer } = setup({ knownTools: ['search'], thresholds: { unknownTool: { warning: 1, critical: 2 } } });
    parentlessCall(tracer, 'ghost', '{}', '"?"');
    expect(detections.map((d) => `${d.kind}:${d.level}:${d.toolName}`)).toEqual(['unknown_tool:warning:ghost']);
    expect(loops.trackedTraces).toBe(0);
    // a span whose trace the app asked a signal for is tracked like any other until it ends
    const span = tracer.startSpan('execute_tool search', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' } }, ROOT_CONTEXT);
    const signal = loops.abortSignal(trace.setSpan(ROOT_CONTEXT, span));
    expect(loops.trackedTraces).toBe(1);
    span.end();
    expect(signal.aborted).toBe(false);
    expect(loops.trackedTraces).toBe(0);
  });

  it('a plain span with no parent forgets a trace it was asked a signal for, and costs no lookup otherwise', () => {
    const { loops, tracer } = setup();
    const span = tracer.startSpan('POST /api', {}, ROOT_CONTEXT);
    loops.abortSignal(trace.setSpan(ROOT_CONTEXT, span));
    expect(loops.trackedTraces).toBe(1);
    span.end();
    expect(loops.trackedTraces).toBe(0);
    // other traces stay
    const agent = tracer.startSpan('invoke_agent a', { attributes: { 'gen_ai.agent.name': 'a' } }, ROOT_CONTEXT);
    parentlessCall(tracer, 'search', '{}', '"x"');
    tracer.startSpan('GET /health', {}, ROOT_CONTEXT).end();
    expect(loops.trackedTraces).toBe(1);
    agent.end();
    expect(loops.trackedTraces).toBe(0);
  });

  it('a parentless tool span that calls tools itself (an agent as a tool) is a trace like any other: its calls loop, and its end ends the trace', () => {
    const { loops, detections, tracer } = setup();
    const outer = tracer.startSpan('execute_tool research', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'research' } }, ROOT_CONTEXT);
    const ctx = trace.setSpan(ROOT_CONTEXT, outer);
    for (let i = 0; i < 5; i++) {
      const inner = tracer.startSpan('execute_tool search', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":"same"}' } }, ctx);
      inner.setAttribute('gen_ai.tool.call.result', '"no results"');
      inner.end();
    }
    expect(detections.map((d) => `${d.kind}:${d.level}:${d.toolName}`)).toEqual(['repeat:warning:search', 'repeat:critical:search']);
    expect(loops.trackedTraces).toBe(1);
    outer.setAttribute('gen_ai.tool.call.result', '"done"');
    outer.end();
    expect(loops.trackedTraces).toBe(0);
  });
});
