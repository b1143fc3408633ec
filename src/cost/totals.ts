import type { LoopSpend } from './trace-cost.js';

/** The loop spends of many traces added up (one prompt template, or all). */
export interface SpendTotals {
  /** Traces with a loop spend (a detection and model calls that report usage). */
  traces: number;
  modelCalls: number;
  input: number;
  output: number;
  /** After the first detection of each trace. */
  afterInput: number;
  afterOutput: number;
  /** USD of the traces whose whole loop spend is priced. */
  usd: number;
  /** Traces whose loop spend has no cost (no price table, or a model it does not cover). */
  unpriced: number;
}

const empty = (): SpendTotals => ({ traces: 0, modelCalls: 0, input: 0, output: 0, afterInput: 0, afterOutput: 0, usd: 0, unpriced: 0 });

/** What loops cost across a scan, per prompt template and in total. */
export class LoopSpendTotals {
  readonly total: SpendTotals = empty();
  readonly byTemplate = new Map<string, SpendTotals>();

  add(template: string, loopSpend: LoopSpend): void {
    let t = this.byTemplate.get(template);
    if (!t) this.byTemplate.set(template, (t = empty()));
    for (const sum of [t, this.total]) {
      sum.traces++;
      sum.modelCalls += loopSpend.loop.modelCalls;
      sum.input += loopSpend.loop.tokens.input;
      sum.output += loopSpend.loop.tokens.output;
      sum.afterInput += loopSpend.afterDetection.tokens.input;
      sum.afterOutput += loopSpend.afterDetection.tokens.output;
      if (loopSpend.loop.costUsd !== undefined) sum.usd += loopSpend.loop.costUsd;
      else sum.unpriced++;
    }
  }

  get empty(): boolean {
    return this.total.traces === 0;
  }

  /** Templates by tokens spent in loops, most first. */
  ranked(): Array<[string, SpendTotals]> {
    return [...this.byTemplate].sort(([a, x], [b, y]) => y.input + y.output - (x.input + x.output) || a.localeCompare(b));
  }
}
