import { context, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LoopDetectionSpanProcessor } from '../../../src/processor/index.js';
import type { LoopDetection } from '../../../src/detector/types.js';

export interface Harness {
  readonly tracer: Tracer;
  readonly exporter: InMemorySpanExporter;
  readonly loops: LoopDetectionSpanProcessor;
  readonly detections: LoopDetection[];
  shutdown(): Promise<void>;
}

let manager: AsyncLocalStorageContextManager | undefined;

export function enableContext(): void {
  if (manager) return;
  manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
}

export function disableContext(): void {
  context.disable();
  manager = undefined;
}

/**
 * A real SDK 2.x provider: the exporter first, loopwatch second (its onEnding still runs before
 * any onEnd). `withoutOnEnding` hides the hook, as on SDKs older than 2.3.
 */
export function harness(options: { withoutOnEnding?: boolean } = {}): Harness {
  enableContext();
  const exporter = new InMemorySpanExporter();
  const detections: LoopDetection[] = [];
  const loops = new LoopDetectionSpanProcessor({ onLoop: (d) => void detections.push(d) });
  const registered: SpanProcessor = options.withoutOnEnding
    ? {
        onStart: (span, ctx) => loops.onStart(span as never, ctx),
        onEnd: (span) => loops.onEnd(span as never),
        forceFlush: () => loops.forceFlush(),
        shutdown: () => loops.shutdown(),
      }
    : (loops as unknown as SpanProcessor);
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), registered] });
  return { tracer: provider.getTracer('agent'), exporter, loops, detections, shutdown: () => provider.shutdown() };
}

/** The agent run: the application's span around it, with the processor's signal for its trace. */
export async function inRun<T>(h: Harness, run: (processorSignal: AbortSignal) => Promise<T>): Promise<{ value?: T; error?: unknown; processorSignal: AbortSignal }> {
  return h.tracer.startActiveSpan('invoke_agent support-bot', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } }, async (span) => {
    const processorSignal = h.loops.abortSignal();
    try {
      return { value: await run(processorSignal), processorSignal };
    } catch (error) {
      return { error, processorSignal };
    } finally {
      span.end();
    }
  });
}

export function spansNamed(h: Harness, name: string): ReadableSpan[] {
  return h.exporter
    .getFinishedSpans()
    .filter((s) => s.name === name)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
}

export const loopEvents = (s: ReadableSpan | undefined): Array<Record<string, unknown>> =>
  (s?.events ?? []).filter((e) => e.name === 'loop.detected').map((e) => ({ ...(e.attributes ?? {}) }));

export function activeTraceId(): string | undefined {
  return trace.getActiveSpan()?.spanContext().traceId;
}
