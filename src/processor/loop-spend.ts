import { readModelUsage } from '../conventions/usage.js';
import { PriceTable } from '../cost/prices.js';
import { traceLoopSummary, type TraceLoopSummary } from '../cost/summary.js';
import { TraceCost, withSpend } from '../cost/trace-cost.js';
import type { ModelPriceInput } from '../detector/config/index.js';
import type { LoopDetection } from '../detector/types.js';
import { log, notifyContained } from '../otel/diag.js';
import { LOOP_SUMMARY_EVENT_NAME, loopSummaryAttributes } from '../otel/event-attributes.js';
import type { LoopMetrics } from '../otel/loop-metrics.js';
import { hrTimeToMs, type ReadableToolSpan, type WritableToolSpan } from '../otel/span-types.js';
import type { TraceState } from './trace-state.js';

export interface LoopSpendOptions {
  readonly prices: Readonly<Record<string, ModelPriceInput>> | undefined;
  readonly historySize: number;
  readonly metrics: LoopMetrics | undefined;
  readonly onTraceEnd: ((summary: TraceLoopSummary) => unknown) | undefined;
}

/**
 * What loops cost, in the processor: model calls' usage in the traces it tracks (only after a
 * trace's first tool call, so a trace without tools costs nothing here), the tokens and USD of
 * each detection's repetitions, the loop-spend counters, and a looping trace's bill when its root
 * ends (`loop.summary` on the root, `onTraceEnd`).
 */
export class LoopSpend {
  private readonly prices: PriceTable | undefined;

  constructor(private readonly options: LoopSpendOptions) {
    this.prices = PriceTable.of(options.prices, (model) => log.warn(`no price for model ${model} in the prices option; loops on it are reported in tokens only`));
  }

  /** A tool call of the trace, ended at `end` (epoch ms), went to the engine: the position model calls and detections are ordered by. */
  toolCallRecorded(state: TraceState, end: number): number {
    if (!(end <= state.toolsEnded)) state.toolsEnded = end;
    return ++state.toolRecords;
  }

  /** `d` with what the model spent asking for its repetitions; the trace's first detection opens its loop bill. */
  withCost(d: LoopDetection, state: TraceState, completing: number, completedAt: number): LoopDetection {
    const cost = (state.cost ??= this.newTraceCost());
    const { spend, opened } = cost.detection(d, completing, completedAt);
    if (opened !== undefined) this.options.metrics?.recordLoopSpend(opened, (state.firstDetection ?? d).promptName);
    const priced = withSpend(d, spend);
    this.detected(state, priced);
    return priced;
  }

  /** A detection of the trace (the engine's, or the dispatcher guard's decision, which carries no tokens). */
  detected(state: TraceState, d: LoopDetection): void {
    state.countDetection(d);
  }

  /**
   * A span of a tracked trace that is not a tool call ended: if it is a model call that reports
   * usage, after the trace's first tool call, it is kept for the detections that may count it, and
   * added to the loop-spend counters once the trace has a loop.
   */
  spanEnded(span: ReadableToolSpan, state: TraceState | undefined): void {
    if (state === undefined || state.toolRecords === 0) return;
    const u = readModelUsage(span);
    if (u === undefined) return;
    const cost = (state.cost ??= this.newTraceCost());
    const usd = this.prices !== undefined ? this.prices.usd(u) : Number.NaN;
    const delta = cost.modelCall(state.toolRecords, hrTimeToMs(span.startTime), u.input, u.output, usd, state.toolsEnded);
    if (delta !== undefined) this.options.metrics?.recordLoopSpend(delta, state.firstDetection?.promptName);
  }

  /** The local root of a trace ended: for a trace with a loop, its `loop.summary` event (when the root can still be written) and `onTraceEnd`. */
  traceEnded(state: TraceState, root: WritableToolSpan | undefined): void {
    const first = state.firstDetection;
    if (first === undefined) return;
    const summary = traceLoopSummary(first, state.detections, state.isStopped, state.cost?.bill());
    root?.addEvent(LOOP_SUMMARY_EVENT_NAME, loopSummaryAttributes(summary));
    const onTraceEnd = this.options.onTraceEnd;
    if (onTraceEnd) notifyContained('onTraceEnd', () => onTraceEnd(summary));
  }

  private newTraceCost(): TraceCost {
    return new TraceCost(this.options.historySize, this.prices !== undefined);
  }
}
