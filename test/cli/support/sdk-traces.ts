/**
 * Agent runs recorded by the real OpenTelemetry SDK (BasicTracerProvider, in-memory exporter) and
 * serialized by the SDK's own OTLP serializers: the trace files the format and fuzz tests read.
 */
import { context, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { LoopDetectionSpanProcessor, type LoopDetection } from '../../../src/index.js';

interface Call {
  readonly tool: string;
  readonly args: unknown;
  readonly result?: unknown;
  readonly error?: string;
}

/** One run: a root span, then each step's tool spans (parallel steps start before any ends). */
function agent(tracer: Tracer, clock: { t: number }, prompt: string, steps: ReadonlyArray<Call | Call[]>): void {
  tracer.startActiveSpan(`invoke_agent ${prompt}`, { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': prompt }, startTime: clock.t }, (root) => {
    for (const step of steps) {
      clock.t += 700;
      const calls = Array.isArray(step) ? step : [step];
      const spans = calls.map((c, i) =>
        tracer.startSpan(
          `execute_tool ${c.tool}`,
          { startTime: clock.t + i, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': c.tool, 'gen_ai.tool.call.arguments': JSON.stringify(c.args) } },
          trace.setSpan(context.active(), root),
        ),
      );
      calls.forEach((c, i) => {
        const s = spans[i];
        if (!s) return;
        if (c.error) {
          s.setStatus({ code: SpanStatusCode.ERROR, message: c.error });
          s.recordException({ name: 'ToolError', message: c.error });
        } else s.setAttribute('gen_ai.tool.call.result', JSON.stringify(c.result));
      });
      clock.t += 40;
      for (const s of [...spans].reverse()) s.end(clock.t++);
    }
    root.end(clock.t + 5);
  });
}

export interface SdkTraces {
  readonly spans: readonly ReadableSpan[];
  /** What the live processor reported while the runs went on. */
  readonly live: readonly LoopDetection[];
  /** OTLP/JSON as the SDK's exporter sends it (one request). */
  readonly json: string;
  /** OTLP protobuf as the SDK's exporter sends it (one ExportTraceServiceRequest). */
  readonly protobuf: Uint8Array;
}

/** Loops of each kind and honest work, recorded once per process. */
export async function sdkTraces(): Promise<SdkTraces> {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  try {
    const exporter = new InMemorySpanExporter();
    const live: LoopDetection[] = [];
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'support-agent' }),
      spanProcessors: [new LoopDetectionSpanProcessor({ mode: 'observe', onLoop: (d) => live.push(d) }), new SimpleSpanProcessor(exporter)],
    });
    const tracer = provider.getTracer('agent', '1.0.0');
    const clock = { t: Date.parse('2026-11-21T09:00:00Z') };
    const same: Call = { tool: 'search', args: { q: 'refund' }, result: { hits: ['policy'] } };
    agent(tracer, clock, 'repeat', Array.from({ length: 6 }, () => same));
    agent(tracer, clock, 'cycle', Array.from({ length: 10 }, (_, i) => ({ tool: i % 2 ? 'read' : 'grep', args: { i: i % 2 }, result: 'same' })));
    agent(tracer, clock, 'errors', Array.from({ length: 6 }, (_, i) => ({ tool: 'fetch', args: { u: 'x' }, error: `503 try again in ${i}s` })));
    agent(tracer, clock, 'parallel', [[same, same, { tool: 'x', args: {}, result: 1 }], [same, same], [same], [same], [same]]);
    agent(tracer, clock, 'honest', Array.from({ length: 6 }, (_, i) => ({ tool: 'page', args: { n: i }, result: { items: [i] } })));
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const json = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans));
    const protobuf = ProtobufTraceSerializer.serializeRequest(spans);
    await provider.shutdown();
    if (!protobuf) throw new Error('the SDK serialized nothing');
    return { spans, live, json, protobuf };
  } finally {
    manager.disable();
    context.disable();
  }
}

/** Length-prefixed messages, as the collector's file exporter writes with `format: proto`. */
export function framed(...messages: Uint8Array[]): Buffer {
  return Buffer.concat(
    messages.flatMap((m) => {
      const prefix = Buffer.alloc(4);
      prefix.writeUInt32BE(m.length);
      return [prefix, Buffer.from(m)];
    }),
  );
}
