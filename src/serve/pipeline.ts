import { ATTR_SERVICE_NAME } from '../conventions/attributes.js';
import type { ConventionAdapter } from '../conventions/types.js';
import type { PriceTable } from '../cost/prices.js';
import { spendIncrease } from '../cost/trace-cost.js';
import type { LoopEngine } from '../detector/engine.js';
import type { LoopDetection } from '../detector/types.js';
import type { LoopLogs } from '../otel/loop-logs.js';
import type { LoopMetrics } from '../otel/loop-metrics.js';
import type { ExportTraceServiceRequest } from '../formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import type { Span } from '../formats/protobuf/gen/opentelemetry/proto/trace/v1/trace_pb.js';
import { replaySpanOf, stringAttribute } from '../formats/protobuf/span-view.js';
import { TraceReplayer } from '../replay/trace-replay.js';
import type { CompletionReason, ReplayedTrace } from '../replay/types.js';
import { annotateTrace } from './annotate.js';
import type { MemoryBudget } from './budget.js';
import type { Forwarder } from './forwarder.js';
import { originsOf, type HeldSpan } from './held.js';
import { attributesBytes, spanBytes } from './span-size.js';
import type { SpoolLedger } from './ledger.js';
import { spanKey, type Spool, type SpoolSegment } from './spool.js';

export interface PipelineOptions {
  readonly engine: LoopEngine;
  readonly adapters: readonly ConventionAdapter[];
  readonly forwarder: Forwarder;
  /** Where the held and remembered bytes are bounded (its shares of the memory limit). */
  readonly budget: MemoryBudget;
  /** A trace whose local root arrived is complete after this long without a new span. */
  readonly quietAfterRootMs: number;
  /** Any trace is complete after this long without a new span (`--trace-wait`). */
  readonly traceWaitMs: number;
  /** Completed traces remembered so that late spans continue them. */
  readonly retainTraces: number;
  readonly normalizeToolSpans: boolean;
  /** Prices model calls (the configuration's `prices`). */
  readonly prices?: PriceTable | undefined;
  readonly metrics?: LoopMetrics | undefined;
  readonly logs?: LoopLogs | undefined;
  /** Where accepted spans are kept until forwarded (each span holds its file). */
  readonly spool?: Spool | undefined;
  /** With a spool: where the tool calls counted are written down, so that a replay after a restart does not count them again. */
  readonly ledger?: SpoolLedger | undefined;
  /** Each detection counted (the log line). */
  readonly onDetection?: ((detection: LoopDetection) => void) | undefined;
  readonly onTrace?: ((trace: ReplayedTrace<HeldSpan>, reason: CompletionReason) => void) | undefined;
  readonly onProblem?: (message: string) => void;
}

export interface IngestResult {
  readonly accepted: number;
  readonly rejected: number;
  /** Why spans were rejected (the partial success's message); '' when none were. */
  readonly message: string;
}

/** From the spool at a restart: where the spans were written, and what was done with them before. */
export interface Replayed {
  readonly segment: SpoolSegment;
  /** Keys of spans already forwarded or given up: not taken again. */
  readonly settled: ReadonlySet<string>;
}

export interface PipelineStats {
  receivedSpans: number;
  rejectedSpans: number;
  heldSpans: number;
  heldBytes: number;
  retainedBytes: number;
  openTraces: number;
  completedTraces: number;
  /** Completed early to make room (the held share of the memory limit). */
  tracesCutByBound: number;
  /** Cut because the trace alone outgrew its share of the memory limit (its later spans continue it). */
  tracesCut: number;
  toolCalls: number;
  detections: number;
}

/** Spans decoded or taken between two turns of the event loop: a 20 MB request does not stall /healthz. */
const SPANS_PER_TURN = 4096;

/** A step to call after each span: every `SPANS_PER_TURN`th call gives the event loop a turn. */
export function turnTaker(): () => Promise<void> | undefined {
  let sinceTurn = 0;
  return () => {
    if (++sinceTurn < SPANS_PER_TURN) return undefined;
    sinceTurn = 0;
    return new Promise((resolve) => setImmediate(resolve));
  };
}

const zero = (id: Uint8Array): boolean => id.every((b) => b === 0);

/** What OTLP requires of ids: a 16-byte trace id and an 8-byte span id, neither all zeros; a parent id empty or 8 bytes. */
function validIds(span: Span): boolean {
  return span.traceId.length === 16 && span.spanId.length === 8 && (span.parentSpanId.length === 0 || span.parentSpanId.length === 8) && !zero(span.traceId) && !zero(span.spanId);
}

export const REJECTED_IDS_MESSAGE = 'span(s) without a valid trace id (16 bytes, 32 hex digits in OTLP/JSON, not all zero), span id (8 bytes, 16 hex digits, not all zero) or parent span id were rejected';

/**
 * The serve path from a decoded request to the downstream: every span goes to the trace replayer
 * (the same one `loopwatch scan` uses) with the span itself as payload, weighed in bytes; a
 * completed trace is annotated with what the engine found, counted, and handed to the forwarder.
 */
export class ServePipeline {
  private readonly replayer: TraceReplayer<HeldSpan>;
  private readonly counts = { receivedSpans: 0, rejectedSpans: 0, tracesCutByBound: 0, tracesCut: 0, detections: 0, toolCalls: 0 };
  /** After a restart with a spool: tool-call spans counted before the restart. */
  private countedBefore: ReadonlySet<string> | undefined;

  constructor(private readonly options: PipelineOptions) {
    const budget = options.budget;
    this.replayer = new TraceReplayer<HeldSpan>({
      engine: options.engine,
      adapters: options.adapters,
      clock: Date.now,
      quietAfterRootMs: options.quietAfterRootMs,
      traceWaitMs: options.traceWaitMs,
      weigh: (held) => held.bytes,
      maxHeldBytes: budget.heldShare,
      maxTraceBytes: budget.traceShare,
      maxRetainedBytes: budget.retainedShare,
      maxOpenTraces: Number.MAX_SAFE_INTEGER,
      retainTraces: options.retainTraces,
      prices: options.prices,
      ...(options.onProblem ? { onProblem: options.onProblem } : {}),
      onTrace: (trace, reason) => this.completed(trace, reason),
    });
  }

  get heldBytes(): number {
    return this.replayer.heldBytes;
  }

  get retainedBytes(): number {
    return this.replayer.retainedBytes;
  }

  /** Tool-call spans that were counted before a restart (read from the spool): not counted again. */
  countedBeforeRestart(keys: ReadonlySet<string>): void {
    this.countedBefore = keys.size > 0 ? keys : undefined;
  }

  /**
   * Takes the spans of a request (yielding to the event loop every few thousand spans). With a
   * spool, `spooled` is where the request was written; spans already settled before a restart
   * are skipped.
   */
  async ingest(request: ExportTraceServiceRequest, spooled?: SpoolSegment | Replayed): Promise<IngestResult> {
    const segment = spooled === undefined ? undefined : 'segment' in spooled ? spooled.segment : spooled;
    const settled = spooled !== undefined && 'settled' in spooled ? spooled.settled : undefined;
    const spool = this.options.spool;
    let accepted = 0;
    let rejected = 0;
    const step = turnTaker();
    for (const rs of request.resourceSpans) {
      const service = rs.resource ? stringAttribute(rs.resource.attributes, ATTR_SERVICE_NAME) : undefined;
      const resourceBytes = rs.resource ? attributesBytes(rs.resource.attributes) : 0;
      for (const { scopeSpans, origin } of originsOf(rs)) {
        const spans = scopeSpans.spans;
        // the resource and scope are shared by the request's spans: each carries its part
        const shared = spans.length > 0 ? Math.ceil((resourceBytes + (scopeSpans.scope ? attributesBytes(scopeSpans.scope.attributes) : 0)) / spans.length) : 0;
        for (const span of spans) {
          if (!validIds(span)) {
            rejected++;
            continue;
          }
          if (settled?.has(spanKey(span.traceId, span.spanId))) continue;
          const view = replaySpanOf(span, service);
          if (view === undefined) {
            rejected++;
            continue;
          }
          accepted++;
          if (segment && spool) spool.hold(segment);
          this.replayer.add(view, { span, origin, bytes: spanBytes(span) + shared, spooled: segment });
          const pause = step();
          if (pause) await pause;
        }
      }
    }
    this.counts.receivedSpans += accepted;
    this.counts.rejectedSpans += rejected;
    return { accepted, rejected, message: rejected > 0 ? `${rejected} ${REJECTED_IDS_MESSAGE}` : '' };
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
      heldBytes: this.replayer.heldBytes,
      retainedBytes: this.replayer.retainedBytes,
      openTraces: this.replayer.openTraces,
      completedTraces: this.replayer.traces,
    };
  }

  private completed(trace: ReplayedTrace<HeldSpan>, reason: CompletionReason): void {
    if (reason === 'bound') this.counts.tracesCutByBound++;
    if (reason === 'cut') this.counts.tracesCut++;
    try {
      annotateTrace(trace, { normalizeToolSpans: this.options.normalizeToolSpans });
      this.count(trace);
      this.options.onTrace?.(trace, reason);
    } catch (e) {
      this.options.onProblem?.(`annotating trace ${trace.traceId} failed; it is forwarded as received: ${e instanceof Error ? e.message : String(e)}`);
    }
    // forwarded whatever happened above: serve never loses a span it accepted
    this.options.forwarder.add(trace.payloads);
  }

  /** Counts the trace's calls and detections once: not those counted before a restart (the spool says which). */
  private count(trace: ReplayedTrace<HeldSpan>): void {
    const before = this.countedBefore;
    const key = (spanId: string): string => Buffer.from(trace.traceId + spanId, 'hex').toString('latin1');
    const calls = before ? trace.calls.filter((c) => !before.has(key(c.spanId))) : trace.calls;
    const { metrics, logs, ledger } = this.options;
    this.counts.toolCalls += calls.length;
    if (metrics) for (const c of calls) metrics.recordToolCall(c.toolName, c.promptName);
    trace.detections.forEach((d, i) => {
      if (before?.has(key(d.spanId))) return;
      this.counts.detections++;
      metrics?.recordDetection(d);
      logs?.emit(d, trace.detectionTimes[i]);
      this.options.onDetection?.(d);
    });
    // what the trace's loops cost, counted once: a continued trace adds only what is new
    const spend = spendIncrease(trace.loopSpend, trace.previousLoopSpend);
    if (metrics && spend !== undefined && calls.length === trace.calls.length) metrics.recordLoopSpend(spend, trace.loopPrompt);
    if (ledger && calls.length > 0) {
      const traceId = Buffer.from(trace.traceId, 'hex');
      ledger.counted(calls.map((c) => ({ traceId, spanId: Buffer.from(c.spanId, 'hex') })));
    }
  }
}
