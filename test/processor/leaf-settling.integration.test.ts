/**
 * The processor looks at a span's start only when something else happens (another span starts or
 * ends, or `abortSignal` is asked for), so that a leaf span is tested once, at its end. That must
 * not change a thing: the same runs give the same detections, the same events and the same
 * attributes as a processor made to look at every start at once (here: by asking for
 * `trackedTraces`, which settles the waiting start, after every `onStart`). One difference is
 * wanted, and tested on its own: a leaf marked as a tool call only after it started now inherits
 * the names of its ancestors, where it used to take those of the span that started last.
 */
import { ROOT_CONTEXT, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor } from '../../src/index.js';
import { collectingProcessor } from '../support/collecting-processor.js';

/** What an agent does under its root span, step by step (spans are started and ended explicitly). */
type Step =
  | { kind: 'tool'; tool: string; args: string; result: string; fails: boolean; child: boolean }
  | { kind: 'parallel'; calls: Array<{ tool: string; args: string; result: string }>; endOrder: number[] }
  | { kind: 'llm' }
  | { kind: 'group'; prompt: string | undefined; agent: string | undefined; steps: Step[] }
  | { kind: 'lateTool'; tool: string; args: string };

const tool = fc.constantFrom('search', 'read_file', 'run_tests');
const text = fc.constantFrom('{"q":"a"}', '{"q":"b"}', '{"q":"a" }', '{"path":"x"}');
const result = fc.constantFrom('"none"', '"found"', '{"n":1}');

const leafStep: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('tool' as const), tool, args: text, result, fails: fc.boolean(), child: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.record({ tool, args: text, result }), { minLength: 2, maxLength: 3 })
      .chain((calls) => fc.shuffledSubarray([...calls.keys()], { minLength: calls.length, maxLength: calls.length }).map((endOrder) => ({ kind: 'parallel' as const, calls, endOrder }))),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'llm' as const }) },
);

const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: leafStep },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('group' as const),
        prompt: fc.option(fc.constantFrom('inner-a', 'inner-b'), { nil: undefined }),
        agent: fc.option(fc.constantFrom('helper'), { nil: undefined }),
        steps: fc.array(leafStep, { maxLength: 6 }),
      }),
    },
  ),
  { minLength: 1, maxLength: 24 },
);

function toolSpan(tracer: Tracer, parent: Context, name: string, args: string): Span {
  return tracer.startSpan(
    `execute_tool ${name}`,
    { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.call.arguments': args } },
    parent,
  );
}

function run(tracer: Tracer, parent: Context, list: Step[]): void {
  for (const s of list) {
    if (s.kind === 'tool') {
      const span = toolSpan(tracer, parent, s.tool, s.args);
      if (s.child) tracer.startSpan('GET', { attributes: { 'http.request.method': 'GET' } }, trace.setSpan(parent, span)).end();
      if (s.fails) span.setStatus({ code: SpanStatusCode.ERROR, message: 'timeout after 30s' });
      else span.setAttribute('gen_ai.tool.call.result', s.result);
      span.end();
    } else if (s.kind === 'parallel') {
      const spans = s.calls.map((c) => toolSpan(tracer, parent, c.tool, c.args));
      for (const i of s.endOrder) {
        spans[i]?.setAttribute('gen_ai.tool.call.result', s.calls[i]?.result ?? '');
        spans[i]?.end();
      }
    } else if (s.kind === 'llm') {
      const span = tracer.startSpan('chat gpt-4.1', { attributes: { 'gen_ai.operation.name': 'chat' } }, parent);
      span.setAttribute('gen_ai.usage.output_tokens', 12);
      span.end();
    } else if (s.kind === 'lateTool') {
      // marked as a tool call only after it started
      const span = tracer.startSpan(s.tool, {}, parent);
      span.setAttributes({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': s.tool, 'gen_ai.tool.call.arguments': s.args });
      span.setAttribute('gen_ai.tool.call.result', '"none"');
      span.end();
    } else {
      const attributes: Record<string, string> = {};
      if (s.prompt !== undefined) attributes['gen_ai.prompt.name'] = s.prompt;
      if (s.agent !== undefined) attributes['gen_ai.agent.name'] = s.agent;
      const group = tracer.startSpan('step', { attributes }, parent);
      run(tracer, trace.setSpan(parent, group), s.steps);
      group.end();
    }
  }
}

interface Outcome {
  readonly detections: unknown[];
  readonly spans: unknown[];
}

function outcome(list: Step[], eager: boolean): Outcome {
  const exporter = new InMemorySpanExporter();
  const { loops, detections } = collectingProcessor();
  const first: SpanProcessor = eager
    ? {
        onStart: (span, ctx) => {
          loops.onStart(span as never, ctx);
          void loops.trackedTraces; // settles the start at once
        },
        onEnding: (span) => loops.onEnding(span as never),
        onEnd: (span) => loops.onEnd(span as never),
        forceFlush: () => loops.forceFlush(),
        shutdown: () => loops.shutdown(),
      }
    : (loops as unknown as SpanProcessor);
  const provider = new BasicTracerProvider({ spanProcessors: [first, new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('leaf-settling');
  const root = tracer.startSpan('invoke_agent support', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': 'support-v1', 'gen_ai.agent.name': 'support' } }, ROOT_CONTEXT);
  run(tracer, trace.setSpan(ROOT_CONTEXT, root), list);
  root.end();
  const names = new Map(exporter.getFinishedSpans().map((s, i) => [s.spanContext().spanId, `#${i}`]));
  // where evidence begins is the end of a call (which one: evidenceCalls; times differ between runs)
  const ends = new Set(exporter.getFinishedSpans().map((s) => s.endTime[0] * 1000 + s.endTime[1] / 1e6));
  const view = (s: ReadableSpan): unknown => ({
    name: s.name,
    attributes: s.attributes,
    events: s.events.map((e) => ({ name: e.name, attributes: { ...e.attributes, 'loop.span_id': undefined } })),
  });
  return {
    detections: detections.map((d) => ({ ...d, traceId: undefined, spanId: names.get(d.spanId ?? ''), evidenceStartTime: ends.has(d.evidenceStartTime) ? 'the end of a span' : d.evidenceStartTime })),
    spans: exporter.getFinishedSpans().map(view),
  };
}

describe('leaf spans, tested once at their end', () => {
  it('give the same detections, events and attributes as starts looked at at once', () => {
    fc.assert(
      fc.property(steps, (list) => {
        expect(outcome(list, false)).toEqual(outcome(list, true));
      }),
      { numRuns: 400 },
    );
  });

  it('a leaf marked as a tool call after its start inherits its ancestors\' names', () => {
    const list: Step[] = [
      { kind: 'group', prompt: 'inner-a', agent: undefined, steps: [] },
      { kind: 'lateTool', tool: 'search', args: '{"q":"a"}' },
    ];
    const promptOf = (o: Outcome): unknown =>
      (o.spans as Array<{ name: string; attributes: Record<string, unknown> }>).find((s) => s.name === 'search')?.attributes['gen_ai.prompt.name'];
    // its parent is the root (support-v1); the group that started last is a sibling
    expect(promptOf(outcome(list, false))).toBe('support-v1');
    expect(promptOf(outcome(list, true))).toBe('inner-a');
  });

  it('a leaf that is the local root of a tracked trace ends the trace', () => {
    const loops = new LoopDetectionSpanProcessor();
    const provider = new BasicTracerProvider({ spanProcessors: [loops as unknown as SpanProcessor] });
    const tracer = provider.getTracer('tool-server');
    // a tool server: each call arrives with a remote parent, and a tool call keeps the trace
    const remote = trace.setSpanContext(ROOT_CONTEXT, { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1, isRemote: true });
    toolSpan(tracer, remote, 'search', '{"q":"a"}').end();
    expect(loops.trackedTraces).toBe(1);
    // then a plain leaf span of the same trace, also a local root
    tracer.startSpan('GET /health', {}, remote).end();
    expect(loops.trackedTraces).toBe(0);
  });

  it('a span ending inside onLoop leaves the end of the looping span as it was', () => {
    // A tool server's calls are local roots that keep their trace because they are tool calls.
    // The app's onLoop ends another span of the trace (a named step) while the looping call is
    // still ending: that second ending must not change what the first one keeps.
    let step: Span | undefined;
    const { loops, detections } = collectingProcessor({
      onLoop: () => {
        step?.end();
        step = undefined;
      },
    });
    const provider = new BasicTracerProvider({ spanProcessors: [loops as unknown as SpanProcessor] });
    const tracer = provider.getTracer('tool-server');
    const remote = trace.setSpanContext(ROOT_CONTEXT, { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: 1, isRemote: true });
    const agent = tracer.startSpan('invoke_agent helper', { attributes: { 'gen_ai.agent.name': 'helper' } }, remote);
    step = tracer.startSpan('plan', { attributes: { 'gen_ai.prompt.name': 'plan-v1' } }, trace.setSpan(remote, agent));
    for (let k = 0; k < 6; k++) {
      const call = toolSpan(tracer, remote, 'search', '{"q":"a"}');
      call.setAttribute('gen_ai.tool.call.result', '"none"');
      call.end();
      expect(loops.trackedTraces, `after call ${k + 1}`).toBe(1);
    }
    expect(step).toBeUndefined();
    expect(detections.map((d) => d.level)).toEqual(['warning', 'critical']);
    agent.end();
    expect(loops.trackedTraces).toBe(0);
  });

  it('the runs above do loop: detections are compared, not only their absence', () => {
    const list: Step[] = Array.from({ length: 6 }, () => ({ kind: 'tool' as const, tool: 'search', args: '{"q":"a"}', result: '"none"', fails: false, child: false }));
    const found = outcome(list, false).detections as Array<{ level: string }>;
    expect(found.map((d) => d.level)).toEqual(['warning', 'critical']);
  });
});
