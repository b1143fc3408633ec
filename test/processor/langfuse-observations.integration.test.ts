/**
 * Issue 18: Langfuse users see detections in Langfuse. With `langfuseObservations` on, the tool
 * span that completed a loop carries Langfuse's observation level (WARNING / ERROR) and status
 * message, which Langfuse reads from OpenTelemetry spans; off by default.
 */
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor } from '../../src/index.js';
import { langfuseAdapter } from '../../src/conventions/langfuse.js';

async function run(langfuseObservations: boolean | undefined): Promise<Array<[unknown, unknown]>> {
  const exporter = new InMemorySpanExporter();
  const loops = new LoopDetectionSpanProcessor(langfuseObservations === undefined ? {} : { langfuseObservations });
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), loops] });
  const tracer = provider.getTracer('agent');
  const agent = tracer.startSpan('invoke_agent support', {}, ROOT_CONTEXT);
  const ctx = trace.setSpan(context.active(), agent);
  for (let i = 0; i < 5; i++) {
    tracer.startSpan('execute_tool search', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":"secret-123"}', 'gen_ai.tool.call.result': '{"hits":[]}' } }, ctx).end();
  }
  agent.end();
  await provider.forceFlush();
  const tools = exporter.getFinishedSpans().filter((s) => s.name === 'execute_tool search');
  await provider.shutdown();
  return tools.map((s) => [s.attributes['langfuse.observation.level'], s.attributes['langfuse.observation.status_message']]);
}

describe('langfuseObservations', () => {
  it('marks the span of a warning WARNING and of a critical ERROR, with the message (never the arguments)', async () => {
    const marks = await run(true);
    expect(marks.map(([level]) => level)).toEqual([undefined, undefined, 'WARNING', undefined, 'ERROR']);
    expect(marks[2]?.[1]).toBe("'search' was called 3 times with identical arguments and returned the same result each time");
    expect(marks[4]?.[1]).toContain('5 times');
    expect(JSON.stringify(marks)).not.toContain('secret-123');
  });

  it('is off by default', async () => {
    expect((await run(undefined)).every(([level, message]) => level === undefined && message === undefined)).toBe(true);
    expect((await run(false)).every(([level]) => level === undefined)).toBe(true);
  });
});

describe('the Langfuse adapter reading such a span back (scan, serve)', () => {
  const span = (events: Array<{ name: string; attributes?: Record<string, unknown> }>) => ({
    name: 'search',
    attributes: { 'langfuse.observation.type': 'tool', 'langfuse.observation.input': '{"q":"x"}', 'langfuse.observation.output': '{"hits":[]}', 'langfuse.observation.level': 'ERROR', 'langfuse.observation.status_message': "'search' was called 5 times" },
    events,
  });
  it("takes loopwatch's own ERROR mark for no failure of the call", () => {
    const fields = langfuseAdapter.readToolCall(span([{ name: 'loop.detected', attributes: { 'loop.message': "'search' was called 5 times" } }]));
    expect(fields?.error).toBeUndefined();
  });
  it("still reads the app's ERROR level as a failure", () => {
    expect(langfuseAdapter.readToolCall(span([]))?.error).toEqual({ message: "'search' was called 5 times" });
    expect(langfuseAdapter.readToolCall(span([{ name: 'loop.detected', attributes: { 'loop.message': 'another message' } }]))?.error).toBeDefined();
  });
});
