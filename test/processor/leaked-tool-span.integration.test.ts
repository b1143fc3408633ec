/**
 * Issue 19: a tool span that never ends (leaked, or a call the app timed out and never ended)
 * must not hide the loops after it. A batch is the calls one model turn started together: it
 * takes new calls only until its first call ends.
 */
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor, type LoopDetection } from '../../src/index.js';

function setup(): { tracer: ReturnType<BasicTracerProvider['getTracer']>; detections: LoopDetection[]; provider: BasicTracerProvider } {
  const detections: LoopDetection[] = [];
  const provider = new BasicTracerProvider({ spanProcessors: [new LoopDetectionSpanProcessor({ onLoop: (d) => void detections.push(d) })] });
  return { tracer: provider.getTracer('agent'), detections, provider };
}

const toolAttributes = (tool: string, args: string) => ({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'gen_ai.tool.call.arguments': args, 'gen_ai.tool.call.result': '{"hits":[]}' });

describe('a tool span that never ends', () => {
  it('does not hide 20 identical calls made after it under the same parent', async () => {
    const { tracer, detections, provider } = setup();
    const agent = tracer.startSpan('invoke_agent support', {}, ROOT_CONTEXT);
    const ctx = trace.setSpan(context.active(), agent);
    tracer.startSpan('execute_tool slow_export', { attributes: toolAttributes('slow_export', '{"id":1}') }, ctx); // never ended
    for (let i = 0; i < 20; i++) tracer.startSpan('execute_tool search', { attributes: toolAttributes('search', '{"q":"x"}') }, ctx).end();
    agent.end();
    await provider.shutdown();
    expect(detections.map((d) => [d.level, d.toolName, d.callIndex])).toEqual([
      ['warning', 'search', 4],
      ['critical', 'search', 6],
    ]);
  });

  it('calls started together are still one batch, whatever order they end in', async () => {
    const { tracer, detections, provider } = setup();
    const agent = tracer.startSpan('invoke_agent support', {}, ROOT_CONTEXT);
    const ctx = trace.setSpan(context.active(), agent);
    for (let round = 0; round < 2; round++) {
      const spans = Array.from({ length: 12 }, (_, i) => tracer.startSpan('execute_tool get_flight_status', { attributes: { ...toolAttributes('get_flight_status', `{"flight":"HAT${100 + i}"}`), 'gen_ai.tool.call.result': 'available' } }, ctx));
      for (const i of [5, 0, 11, 3, 1, 2, 4, 6, 7, 8, 9, 10]) spans[i]?.end();
    }
    agent.end();
    await provider.shutdown();
    expect(detections).toEqual([]);
  });
});
