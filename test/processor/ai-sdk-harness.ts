import { context, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { LoopDetectionSpanProcessor} from '../../src/index.js';
import { type LoopDetection, type LoopDetectionSpanProcessorOptions } from '../../src/index.js';
import { collectingProcessor } from '../support/collecting-processor.js';

/**
 * A real SDK 2.x provider for the AI SDK tests: the exporting processor first, loopwatch second
 * (its onEnding still runs before any onEnd), an AsyncLocalStorage context manager so that the
 * AI SDK's spans nest under the caller's span. No global provider: the tracer is handed to the AI SDK.
 */
export interface AiHarness {
  readonly tracer: Tracer;
  readonly exporter: InMemorySpanExporter;
  readonly loops: LoopDetectionSpanProcessor;
  readonly detections: LoopDetection[];
  readonly provider: BasicTracerProvider;
  shutdown(): Promise<void>;
}

let contextManager: AsyncLocalStorageContextManager | undefined;

export function useContextManager(): void {
  if (contextManager) return;
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
}

export function aiHarness(options: LoopDetectionSpanProcessorOptions = {}): AiHarness {
  useContextManager();
  const exporter = new InMemorySpanExporter();
  const { loops, detections } = collectingProcessor(options);
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), loops as unknown as SpanProcessor] });
  return { tracer: provider.getTracer('app'), exporter, loops, detections, provider, shutdown: () => provider.shutdown() };
}

/**
 * The binding documented in the README: the application's own span around the agent run, and
 * `abortSignal()` asked for inside it, so the signal belongs to the trace the AI SDK's spans join.
 */
export async function inRunSpan<T>(h: AiHarness, name: string, run: (signal: AbortSignal) => Promise<T>): Promise<{ value?: T; error?: unknown; traceId: string }> {
  return h.tracer.startActiveSpan(name, async (span) => {
    const traceId = span.spanContext().traceId;
    try {
      return { value: await run(h.loops.abortSignal()), traceId };
    } catch (error) {
      return { error, traceId };
    } finally {
      span.end();
    }
  });
}

export const toolSpans = (spans: readonly ReadableSpan[], name: string): ReadableSpan[] =>
  spans.filter((s) => s.name === name).sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);

export const loopEvents = (s: ReadableSpan) => s.events.filter((e) => e.name === 'loop.detected').map((e) => e.attributes ?? {});
