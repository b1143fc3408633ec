import type { LoopBill } from './trace-cost.js';

/** The loop bills of many traces added up (one prompt template, or all). */
export interface CostTotals {
  /** Traces with a loop bill (a detection and model calls that report usage). */
  traces: number;
  modelCalls: number;
  input: number;
  output: number;
  /** After the first detection of each trace. */
  afterInput: number;
  afterOutput: number;
  /** USD of the traces whose whole bill is priced. */
  usd: number;
  /** Traces whose bill has no cost (no price table, or a model it does not cover). */
  unpriced: number;
}

const empty = (): CostTotals => ({ traces: 0, modelCalls: 0, input: 0, output: 0, afterInput: 0, afterOutput: 0, usd: 0, unpriced: 0 });

/** What loops cost across a scan, per prompt template and in total. */
export class LoopCostTotals {
  readonly total: CostTotals = empty();
  readonly byTemplate = new Map<string, CostTotals>();

  add(template: string, bill: LoopBill): void {
    let t = this.byTemplate.get(template);
    if (!t) this.byTemplate.set(template, (t = empty()));
    for (const sum of [t, this.total]) {
      sum.traces++;
      sum.modelCalls += bill.loop.modelCalls;
      sum.input += bill.loop.tokens.input;
      sum.output += bill.loop.tokens.output;
      sum.afterInput += bill.afterDetection.tokens.input;
      sum.afterOutput += bill.afterDetection.tokens.output;
      if (bill.loop.costUsd !== undefined) sum.usd += bill.loop.costUsd;
      else sum.unpriced++;
    }
  }

  get empty(): boolean {
    return this.total.traces === 0;
  }

  /** Templates by tokens spent in loops, most first. */
  ranked(): Array<[string, CostTotals]> {
    return [...this.byTemplate].sort(([a, x], [b, y]) => y.input + y.output - (x.input + x.output) || a.localeCompare(b));
  }
}
