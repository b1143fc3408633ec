import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { LoopDetectionSpanProcessor, type LoopDetection, type TraceLoopSummary } from '../../../src/index.js';
import { E2E_PRICES } from './agent-traffic.js';

/**
 * Counts what the OTLP exporter sent and what failed, so a test can tell "the collector lost
 * it" from "the app never delivered it".
 */
class CountingExporter implements SpanExporter {
  exportedSpans = 0;
  readonly failures: string[] = [];
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.exportedSpans += spans.length;
      else this.failures.push(result.error?.message ?? 'export failed');
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** An instrumented agent process: SDK 2.x provider, loopwatch's processor, OTLP/HTTP export. */
export interface AgentApp {
  readonly tracer: Tracer;
  /** Every detection loopwatch reported through `onLoop`: the in-process truth. */
  readonly detections: LoopDetection[];
  /** What every looping trace cost, reported through `onTraceEnd`: the truth for the loop-spend counters. */
  readonly summaries: TraceLoopSummary[];
  readonly exporter: CountingExporter;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface AgentAppOptions {
  readonly serviceName: string;
  /** OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces. */
  readonly otlpTracesUrl: string;
  /** Small batches make one round of traffic several OTLP requests (several count batches). */
  readonly maxExportBatchSize?: number;
  readonly resourceAttributes?: Record<string, string>;
}

export function createAgentApp(options: AgentAppOptions): AgentApp {
  const detections: LoopDetection[] = [];
  const summaries: TraceLoopSummary[] = [];
  const loops = new LoopDetectionSpanProcessor({ prices: E2E_PRICES, onLoop: (d) => void detections.push(d), onTraceEnd: (s) => void summaries.push(s) });
  const exporter = new CountingExporter(new OTLPTraceExporter({ url: options.otlpTracesUrl, timeoutMillis: 10_000 }));
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, ...options.resourceAttributes }),
    spanProcessors: [
      loops,
      new BatchSpanProcessor(exporter, {
        maxExportBatchSize: options.maxExportBatchSize ?? 16,
        maxQueueSize: 20_000,
        scheduledDelayMillis: 50,
      }),
    ],
  });
  return {
    tracer: provider.getTracer('loopwatch-e2e-agent', '0.1.0'),
    detections,
    summaries,
    exporter,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
