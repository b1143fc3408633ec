import { ModelUsageReading } from '../conventions/usage.js';
import { PriceTable } from '../cost/prices.js';
import { traceLoopSummary, type TraceLoopSummary } from '../cost/summary.js';
import { TraceSpend } from '../cost/trace-spend.js';
import type { ModelPriceInput } from '../detector/config/index.js';
import type { LoopDetection } from '../detector/types.js';
import { log, notifyContained } from '../otel/diag.js';
import { LOOP_SUMMARY_EVENT_NAME, loopSummaryAttributes } from '../otel/event-attributes.js';
import type { LoopMetrics } from '../otel/loop-metrics.js';
import { hrTimeToMs, type ReadableToolSpan, type WritableToolSpan } from '../otel/span-types.js';
import type { TraceState } from './trace-state.js';

export interface SpendOutputOptions {
  readonly prices: Readonly<Record<string, ModelPriceInput>> | undefined;
  readonly historySize: number;
  readonly metrics: LoopMetrics | undefined;
  readonly onTraceEnd: ((summary: TraceLoopSummary) => unknown) | undefined;
}

/**
 * What loops cost, as the processor reports it: each trace's spend (`TraceSpend`, from its first
 * tool call on, so a trace without tools costs nothing here) fed as spans end, the loop-spend
 * counters as the spend burns, and a looping trace's summary when its root ends (`loop.summary`
 * on the root, `onTraceEnd`).
 */
export class SpendOutputs {
  private readonly prices: PriceTable | undefined;
  /** The usage of the model call being read (one object for all of them). */
  private readonly usage = new ModelUsageReading();

  constructor(private readonly options: SpendOutputOptions) {
    this.prices = PriceTable.of(options.prices, (model) => log.warn(`no price for model ${model} in the prices option; loops on it are reported in tokens only`));
  }

  /** A tool call of the trace, ended at `end` (epoch ms), went to the engine. */
  toolCallRecorded(state: TraceState, end: number): void {
    (state.spend ??= new TraceSpend(this.options.historySize, this.prices !== undefined)).toolCall(end);
  }

  /** `d` with what the model spent asking for its repetitions (the trace's first detection opens its loop spend), counted in the trace. */
  priced(d: LoopDetection, state: TraceState, completedAt: number): LoopDetection {
    const spend = (state.spend ??= new TraceSpend(this.options.historySize, this.prices !== undefined));
    const { priced, opened } = spend.detection(d, completedAt);
    if (opened !== undefined) this.options.metrics?.recordLoopSpend(opened, (state.firstDetection ?? d).promptName);
    state.countDetection(priced);
    return priced;
  }

  /**
   * A span of a tracked trace that is not a tool call ended: if it is a model call that reports
   * usage, after the trace's first tool call, it is kept for the detections that may count it, and
   * added to the loop-spend counters once the trace has a loop.
   */
  spanEnded(span: ReadableToolSpan, state: TraceState | undefined): void {
    const spend = state?.spend;
    if (spend === undefined) return;
    const u = this.usage;
    if (!u.read(span)) return;
    const delta = spend.modelCall(hrTimeToMs(span.startTime), u.input, u.output, this.prices !== undefined ? this.prices.usd(u) : Number.NaN);
    if (delta !== undefined) this.options.metrics?.recordLoopSpend(delta, state?.firstDetection?.promptName);
  }

  /** The local root of a trace ended: for a trace with a loop, its `loop.summary` event (when the root can still be written) and `onTraceEnd`. */
  traceEnded(state: TraceState, root: WritableToolSpan | undefined): void {
    const first = state.firstDetection;
    if (first === undefined) return;
    const summary = traceLoopSummary(first, state.detections, state.isStopped, state.spend?.loopSpend());
    root?.addEvent(LOOP_SUMMARY_EVENT_NAME, loopSummaryAttributes(summary));
    const onTraceEnd = this.options.onTraceEnd;
    if (onTraceEnd) notifyContained('onTraceEnd', () => onTraceEnd(summary));
  }
}
