import { readModelUsage } from '../conventions/usage.js';
import type { PriceTable } from '../cost/prices.js';
import { TIME_QUANTUM_MS, TraceCost, withSpend, type LoopBill } from '../cost/trace-cost.js';
import type { LoopDetection } from '../detector/types.js';
import type { ReplaySpan } from './types.js';

/** A model call of an exported trace: when, in which order it arrived, and what it spent. */
export interface ModelCallRecord {
  readonly start: number;
  readonly end: number;
  /** Arrival order (see the replayer's `seq`). */
  readonly seq: number;
  readonly input: number;
  readonly output: number;
  /** NaN when not priced. */
  readonly usd: number;
}

/** The model call of a span, or undefined when it is none (or reports no usage). */
export function modelCallOf(span: ReplaySpan, seq: number, prices: PriceTable | undefined): ModelCallRecord | undefined {
  const u = readModelUsage(span);
  if (u === undefined) return undefined;
  return { start: span.startTime, end: span.endTime, seq, input: u.input, output: u.output, usd: prices !== undefined ? prices.usd(u) : Number.NaN };
}

/**
 * Gives a trace's model calls to a `TraceCost` in the order the live processor would have: each
 * before the first tool call that ended after it (by time, and by arrival within the millisecond
 * that timestamps cannot resolve), so that scan and serve report what the processor reports.
 */
export class CostReplay {
  private readonly cost: TraceCost;
  /** In arrival order; `fed` marks those given to the cost already, `next` the first not given. */
  private readonly models: ModelCallRecord[];
  private readonly fed: boolean[];
  private next = 0;
  /** Tool calls recorded so far, and the latest end among them. */
  private recorded = 0;
  private toolsEnded = Number.NEGATIVE_INFINITY;

  constructor(models: readonly ModelCallRecord[], window: number, priced: boolean) {
    this.cost = new TraceCost(window, priced);
    this.models = [...models].sort((a, b) => a.seq - b.seq);
    this.fed = this.models.map(() => false);
  }

  /** A tool call that ended at `end` (arrival `seq`) is recorded next: the model calls before it go first. */
  toolCall(end: number, seq: number): void {
    // Ends within a millisecond of each other say nothing about order (each span's times are
    // offset by its own start's rounding): there, arrival order decides. So this is no merge of
    // two sorted lists; every model call not given yet is asked (few: they are given as they come).
    for (let i = this.next; i < this.models.length; i++) {
      if (this.fed[i] === true) continue;
      const m = this.models[i] as ModelCallRecord;
      const before = m.end < end - TIME_QUANTUM_MS || (m.end <= end + TIME_QUANTUM_MS && m.seq < seq);
      if (!before) continue;
      this.cost.modelCall(this.recorded, m.start, m.input, m.output, m.usd, this.toolsEnded);
      this.fed[i] = true;
    }
    while (this.next < this.models.length && this.fed[this.next] === true) this.next++;
    this.recorded++;
    if (!(end <= this.toolsEnded)) this.toolsEnded = end;
  }

  /** `d`, completed by the call recorded last (which ended at `completedAt`), with what its repetitions cost. */
  detection(d: LoopDetection, completedAt: number): LoopDetection {
    return withSpend(d, this.cost.detection(d, this.recorded, completedAt).spend);
  }

  /** The rest of the trace's model calls, and its bill around its loops. */
  finish(): LoopBill | undefined {
    this.models.forEach((m, i) => {
      if (this.fed[i] !== true) this.cost.modelCall(this.recorded, m.start, m.input, m.output, m.usd, this.toolsEnded);
    });
    return this.cost.bill();
  }
}
