import { RecencyList } from './recency.js';
import type { LoopSpend } from '../cost/trace-cost.js';
import { STATE_BYTES, type PendingTrace, type RetainedTrace } from './trace-state.js';

/**
 * Completed traces remembered for their late spans (calls and span links, not payloads), bounded
 * in count and in estimated bytes: the oldest are forgotten first, and a trace larger than half
 * the byte bound is not kept (its late spans start over).
 */
export class RetainedTraces {
  private readonly byId = new Map<string, RetainedTrace>();
  private readonly order = new RecencyList<RetainedTrace>();
  /** Estimated bytes of the remembered traces. */
  bytes = 0;
  /** Completed traces not remembered because their state alone was too large. */
  forgotten = 0;

  constructor(
    private readonly maxTraces: number,
    private readonly maxBytes: number,
  ) {}

  get enabled(): boolean {
    return this.maxTraces > 0;
  }

  /** Removes and returns what a trace left behind, if it is remembered. */
  take(traceId: string): RetainedTrace | undefined {
    if (!this.enabled) return undefined;
    const kept = this.byId.get(traceId);
    if (kept) this.forget(kept);
    return kept;
  }

  /** Remembers a completed trace (see `PendingTrace.retained`). */
  keep(trace: PendingTrace<unknown>, loopSpend: LoopSpend | undefined): void {
    const bytes = trace.stateBytes;
    if (bytes > this.maxBytes / 2) {
      this.forgotten++;
      return;
    }
    const kept = trace.retained(loopSpend);
    this.byId.set(kept.traceId, kept);
    this.order.touch(kept);
    this.bytes += bytes;
    while (this.byId.size > this.maxTraces || this.bytes > this.maxBytes) {
      const oldest = this.order.oldest;
      if (!oldest) break;
      this.forget(oldest);
    }
  }

  private forget(kept: RetainedTrace): void {
    this.byId.delete(kept.traceId);
    this.order.remove(kept);
    this.bytes -= kept.stateBytes + STATE_BYTES.trace;
  }
}
