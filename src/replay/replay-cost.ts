import { readModelUsage } from '../conventions/usage.js';
import type { PriceTable } from '../cost/prices.js';
import { TIME_QUANTUM_MS } from '../cost/trace-cost.js';
import type { TraceSpend } from '../cost/trace-spend.js';
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
 * A trace's model calls, given to its `TraceSpend` in the order the live processor would have:
 * each before the first tool call that ended after it (by time, and by arrival within the
 * millisecond that timestamps cannot resolve), so that scan and serve report what the processor
 * reports.
 */
export class ModelCallQueue {
  /** In arrival order; `fed` marks those given already, `next` the first not given. */
  private readonly models: ModelCallRecord[];
  private readonly fed: boolean[];
  private next = 0;

  constructor(
    models: readonly ModelCallRecord[],
    private readonly spend: TraceSpend,
  ) {
    this.models = [...models].sort((a, b) => a.seq - b.seq);
    this.fed = this.models.map(() => false);
  }

  /** A tool call that ended at `end` (arrival `seq`) is handed to the engine next: the model calls before it go first. */
  toolCall(end: number, seq: number): void {
    // Ends within a millisecond of each other say nothing about order (each span's times are
    // offset by its own start's rounding): there, arrival order decides. So this is no merge of
    // two sorted lists; every model call not given yet is asked (few: they are given as they come).
    for (let i = this.next; i < this.models.length; i++) {
      if (this.fed[i] === true) continue;
      const m = this.models[i] as ModelCallRecord;
      const before = m.end < end - TIME_QUANTUM_MS || (m.end <= end + TIME_QUANTUM_MS && m.seq < seq);
      if (!before) continue;
      this.spend.modelCall(m.start, m.input, m.output, m.usd);
      this.fed[i] = true;
    }
    while (this.next < this.models.length && this.fed[this.next] === true) this.next++;
    this.spend.toolCall(end);
  }

  /** The trace is over: the model calls not given yet go last. */
  finish(): void {
    this.models.forEach((m, i) => {
      if (this.fed[i] !== true) this.spend.modelCall(m.start, m.input, m.output, m.usd);
    });
  }
}
