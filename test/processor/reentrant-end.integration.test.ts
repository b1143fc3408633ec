/**
 * The processor reuses its records from one tool call to the next (a leaf's start, the answer for
 * an ended tool span): a span ended by user code while another is being handled (here by the
 * prompt name resolver, which runs in the middle of it) must get records of its own, and both
 * calls must be judged in their own traces at their own places.
 */
import { context, ROOT_CONTEXT, trace, type Span, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor, type LoopDetection } from '../../src/index.js';

function toolCall(tracer: Tracer, parent: Span, tool: string, args: string): void {
  const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'gen_ai.tool.call.arguments': args, 'gen_ai.tool.call.result': '{"hits":[]}' };
  tracer.startSpan(`execute_tool ${tool}`, { attributes }, trace.setSpan(context.active(), parent)).end();
}

describe('a tool span ended while another is handled', () => {
  it('is judged in its own trace, and the call it interrupted in its own', async () => {
    const detections: LoopDetection[] = [];
    const exporter = new InMemorySpanExporter();
    // made below, once the processor exists
    const late: { tracer?: Tracer; other?: Span } = {};
    const loops = new LoopDetectionSpanProcessor({
      onLoop: (d) => void detections.push(d),
      // two calls of another trace end inside the handling of each 'search' call
      promptName: (span) => {
        const { tracer, other } = late;
        if (tracer !== undefined && other !== undefined && span.name === 'execute_tool search') {
          toolCall(tracer, other, 'lookup', '{"q":"y"}');
          toolCall(tracer, other, 'lookup', '{"q":"y"}');
        }
        return undefined;
      },
    });
    const provider = new BasicTracerProvider({ spanProcessors: [loops, new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('agent');
    late.tracer = tracer;
    const agent = tracer.startSpan('invoke_agent support', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } }, ROOT_CONTEXT);
    const other = tracer.startSpan('invoke_agent other', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } }, ROOT_CONTEXT);
    late.other = other;
    for (let i = 0; i < 5; i++) toolCall(tracer, agent, 'search', '{"q":"x"}');
    agent.end();
    other.end();
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    await provider.shutdown();

    const agentTrace = agent.spanContext().traceId;
    const otherTrace = other.spanContext().traceId;
    const seen = detections.map((d) => [d.toolName, d.traceId === agentTrace ? 'agent' : d.traceId === otherTrace ? 'other' : '?', d.level, d.callIndex]);
    expect(seen.filter((d) => d[0] === 'search')).toEqual([
      ['search', 'agent', 'warning', 3],
      ['search', 'agent', 'critical', 5],
    ]);
    // ten lookups, two inside each search call
    expect(seen.filter((d) => d[0] === 'lookup')).toEqual([
      ['lookup', 'other', 'warning', 3],
      ['lookup', 'other', 'critical', 5],
    ]);
    // each event on the span of the call that completed it (or, on SDKs without onEnding, its open parent, naming it)
    const nameOf = new Map(spans.map((s) => [s.spanContext().spanId, s.name]));
    const events = spans.flatMap((s) =>
      s.events
        .filter((e) => e.name === 'loop.detected')
        .map((e) => [s.spanContext().traceId === agentTrace ? 'agent' : 'other', nameOf.get(String(e.attributes?.['loop.span_id'] ?? s.spanContext().spanId))]),
    );
    expect(events.sort()).toEqual([
      ['agent', 'execute_tool search'],
      ['agent', 'execute_tool search'],
      ['other', 'execute_tool lookup'],
      ['other', 'execute_tool lookup'],
    ]);
  });
});
