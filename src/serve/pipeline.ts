import { ATTR_SERVICE_NAME } from '../conventions/attributes.js';
import type { ConventionAdapter } from '../conventions/types.js';
import type { PriceTable } from '../cost/prices.js';
import { spendIncrease } from '../cost/trace-cost.js';
import type { LoopEngine } from '../detector/engine.js';
import type { LoopLogs } from '../otel/loop-logs.js';
import type { LoopMetrics } from '../otel/loop-metrics.js';
import type { ExportTraceServiceRequest } from '../formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import { replaySpanOf, stringAttribute } from '../formats/protobuf/span-view.js';
import { TraceReplayer, type CompletionReason, type ReplayedTrace } from '../replay/trace-replay.js';
import { annotateTrace } from './annotate.js';
import type { Forwarder } from './forwarder.js';
import { originsOf, type HeldSpan } from './held.js';

export interface PipelineOptions {
  readonly engine: LoopEngine;
  readonly adapters: readonly ConventionAdapter[];
  readonly forwarder: Forwarder;
  /** A trace whose local root arrived is complete after this long without a new span. */
  readonly quietAfterRootMs: number;
  /** Any trace is complete after this long without a new span (`--trace-wait`). */
  readonly traceWaitMs: number;
  /** Spans held in open traces; beyond it the least recently active trace is completed early. */
  readonly maxHeldSpans: number;
  /** Completed traces remembered so that late spans continue them. */
  readonly retainTraces: number;
  readonly normalizeToolSpans: boolean;
  /** Prices model calls (the configuration's `prices`). */
  readonly prices?: PriceTable | undefined;
  readonly metrics?: LoopMetrics | undefined;
  readonly logs?: LoopLogs | undefined;
  readonly onTrace?: ((trace: ReplayedTrace<HeldSpan>, reason: CompletionReason) => void) | undefined;
  readonly onProblem?: (message: string) => void;
}

export interface IngestResult {
  readonly accepted: number;
  readonly rejected: number;
  /** Why spans were rejected (the partial success's message); '' when none were. */
  readonly message: string;
}

export interface PipelineStats {
  receivedSpans: number;
  rejectedSpans: number;
  heldSpans: number;
  openTraces: number;
  completedTraces: number;
  /** Completed early because of the held-spans bound. */
  tracesCutByBound: number;
  toolCalls: number;
  detections: number;
}

/**
 * The serve path from a decoded request to the downstream: every span goes to the trace replayer
 * (the same one `loopwatch scan` uses) with the span itself as payload; a completed trace is
 * annotated with what the engine found, counted, and handed to the forwarder.
 */
export class ServePipeline {
  private readonly replayer: TraceReplayer<HeldSpan>;
  private readonly counts = { receivedSpans: 0, rejectedSpans: 0, tracesCutByBound: 0, detections: 0, toolCalls: 0 };

  constructor(private readonly options: PipelineOptions) {
    this.replayer = new TraceReplayer<HeldSpan>({
      engine: options.engine,
      adapters: options.adapters,
      clock: Date.now,
      quietAfterRootMs: options.quietAfterRootMs,
      traceWaitMs: options.traceWaitMs,
      maxHeldSpans: options.maxHeldSpans,
      maxOpenTraces: Number.MAX_SAFE_INTEGER,
      retainTraces: options.retainTraces,
      prices: options.prices,
      ...(options.onProblem ? { onProblem: options.onProblem } : {}),
      onTrace: (trace, reason) => this.completed(trace, reason),
    });
  }

  ingest(request: ExportTraceServiceRequest): IngestResult {
    let accepted = 0;
    let rejected = 0;
    for (const rs of request.resourceSpans) {
      const service = rs.resource ? stringAttribute(rs.resource.attributes, ATTR_SERVICE_NAME) : undefined;
      for (const { scopeSpans, origin } of originsOf(rs)) {
        for (const span of scopeSpans.spans) {
          const view = replaySpanOf(span, service);
          if (view === undefined) {
            rejected++;
            continue;
          }
          accepted++;
          this.replayer.add(view, { span, origin });
        }
      }
    }
    this.counts.receivedSpans += accepted;
    this.counts.rejectedSpans += rejected;
    const message = rejected > 0 ? `${rejected} span(s) without a 16-byte trace id or an 8-byte span id were rejected` : '';
    return { accepted, rejected, message };
  }

  /** Completes the traces that are done (quiet after their root, or past the trace wait). */
  tick(now = Date.now()): void {
    this.replayer.expire(now);
  }

  /** Completes every trace still held (shutdown). */
  finish(): void {
    this.replayer.finish();
  }

  get stats(): PipelineStats {
    return {
      ...this.counts,
      heldSpans: this.replayer.heldSpans,
      openTraces: this.replayer.openTraces,
      completedTraces: this.replayer.traces,
    };
  }

  private completed(trace: ReplayedTrace<HeldSpan>, reason: CompletionReason): void {
    if (reason === 'bound') this.counts.tracesCutByBound++;
    try {
      annotateTrace(trace, { normalizeToolSpans: this.options.normalizeToolSpans });
      this.counts.toolCalls += trace.calls.length;
      this.counts.detections += trace.detections.length;
      const { metrics, logs } = this.options;
      if (metrics) for (const c of trace.calls) metrics.recordToolCall(c.toolName, c.promptName);
      trace.detections.forEach((d, i) => {
        metrics?.recordDetection(d);
        logs?.emit(d, trace.detectionTimes[i]);
      });
      // what the trace's loops cost, counted once: a continued trace adds only what is new
      const spend = spendIncrease(trace.loopSpend, trace.previousLoopSpend);
      if (metrics && spend !== undefined) metrics.recordLoopSpend(spend, trace.loopPrompt);
      this.options.onTrace?.(trace, reason);
    } catch (e) {
      this.options.onProblem?.(`annotating trace ${trace.traceId} failed; it is forwarded as received: ${e instanceof Error ? e.message : String(e)}`);
    }
    // forwarded whatever happened above: serve never loses a span it accepted
    this.options.forwarder.add(trace.payloads);
  }
}
