import { ROOT_CONTEXT, SpanKind, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LoopDetectionSpanProcessor, type LoopDetectionSpanProcessorOptions } from '../../dist/index.js';
import { JsonParseProcessor, NaiveProcessor, PlainHashProcessor } from './naive.js';

/**
 * Accepts every batch and keeps nothing: the export step costs what the SDK itself costs. With
 * `serialize`, each batch is first encoded as an OTLP/protobuf request, as an OTLP exporter does
 * before it sends (the bytes are dropped: nothing is sent).
 */
class NoopExporter implements SpanExporter {
  exported = 0;
  bytes = 0;
  constructor(private readonly serialize = false) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.exported += spans.length;
    if (this.serialize) this.bytes += ProtobufTraceSerializer.serializeRequest(spans)?.length ?? 0;
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** A provider as an app sets it up: (loopwatch +) a batch processor exporting to a no-op exporter. */
export interface Pipeline {
  readonly tracer: Tracer;
  readonly loops: LoopDetectionSpanProcessor | undefined;
  readonly exporter: NoopExporter;
  /** Exports everything buffered: part of each measured round, so export cost is counted. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** A span processor with empty hooks: what any second processor costs, whatever it does. */
class IdleProcessor implements SpanProcessor {
  onStart(): void {}
  onEnding(): void {}
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * What runs ahead of the batch processor: nothing, a processor that does nothing, the naive
 * detector, the plain hash of arguments and results, V8's JSON parser run on them (`support/naive.ts`),
 * loopwatch.
 */
export const PIPELINE_KINDS = ['bare', 'idle', 'naive', 'plain', 'parse', 'loopwatch'] as const;
export type PipelineKind = (typeof PIPELINE_KINDS)[number];

/** What the batch processor exports to: nothing done with the spans, or their OTLP/protobuf encoding made and dropped. */
export type ExportKind = 'noop' | 'otlp-protobuf';

/** The processor ahead of the batch processor for a kind other than loopwatch (none for bare). */
function yardstick(kind: boolean | PipelineKind): SpanProcessor | undefined {
  switch (kind) {
    case 'idle':
      return new IdleProcessor();
    case 'naive':
      return new NaiveProcessor();
    case 'plain':
      return new PlainHashProcessor();
    case 'parse':
      return new JsonParseProcessor();
    default:
      return undefined;
  }
}

/** `true` (or `'loopwatch'`): loopwatch ahead of the batch processor; `false` (`'bare'`): nothing there. */
export function pipeline(
  kind: boolean | PipelineKind,
  options: LoopDetectionSpanProcessorOptions = {},
  queue = 1 << 16,
  spanLimits?: { attributeValueLengthLimit: number },
  exportKind: ExportKind = 'noop',
): Pipeline {
  const exporter = new NoopExporter(exportKind === 'otlp-protobuf');
  const loops = kind === true || kind === 'loopwatch' ? new LoopDetectionSpanProcessor(options) : undefined;
  const batch = new BatchSpanProcessor(exporter, { maxQueueSize: queue, maxExportBatchSize: 512, scheduledDelayMillis: 60_000 });
  const first = loops ? (loops as unknown as SpanProcessor) : yardstick(kind);
  const processors: SpanProcessor[] = first ? [first, batch] : [batch];
  const provider = new BasicTracerProvider({ spanProcessors: processors, ...(spanLimits ? { spanLimits } : {}) });
  const tracer = provider.getTracer('loopwatch-bench', '1.0.0');
  providers.set(tracer, provider);
  return {
    tracer,
    loops,
    exporter,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

const providers = new WeakMap<Tracer, BasicTracerProvider>();

/**
 * The tracer another instrumentation of the same app gets: its own scope, from the provider of
 * `appTracer` (a pipeline's `tracer`), as each of an app's instrumentations gets one.
 */
export function instrumentationTracer(appTracer: Tracer, scope: string, version: string): Tracer {
  const provider = providers.get(appTracer);
  if (provider === undefined) throw new Error('instrumentationTracer: not the tracer of a bench pipeline');
  return provider.getTracer(scope, version);
}

/** A child span of `parent`, started with attributes, given more, ended: one span lifecycle. */
/** A span started in `parent` with `start`, given `late` after it started, and ended (returned ended). */
export function childSpan(tracer: Tracer, parent: Context, name: string, start: Attributes, late?: Attributes, kind = SpanKind.INTERNAL): Span {
  const span = tracer.startSpan(name, { attributes: start, kind }, parent);
  if (late) span.setAttributes(late);
  span.end();
  return span;
}

export function rootSpan(tracer: Tracer, name: string, attributes: Attributes, kind = SpanKind.INTERNAL): { span: Span; context: Context } {
  const span = tracer.startSpan(name, { attributes, kind }, ROOT_CONTEXT);
  return { span, context: trace.setSpan(ROOT_CONTEXT, span) };
}
