import type { LoopDetection } from '../detector/types.js';
import { ModelCallWindow, withSpend, type LoopSpend, type SpendDelta } from './trace-cost.js';

/**
 * Model spend attached to one trace's loops, on every path: the span processor feeds it as spans
 * end, the trace replayer (scan, serve) in the order the processor would have met the same spans
 * (`ModelCallQueue`). Tool calls handed to the engine give the positions model calls and
 * detections are ordered by; model calls that report usage are kept while a detection can still
 * count them (`ModelCallWindow`); each detection gets what its repetitions cost; the first one opens
 * the trace's loop spend.
 */
export class TraceSpend {
  /** Tool calls handed to the engine so far. */
  private recorded = 0;
  /** The latest end (epoch ms) of those calls (see `ModelCallWindow.modelCall`). */
  private toolsEnded = Number.NEGATIVE_INFINITY;
  /** Made at the first model call with usage after a tool call, or the first detection. */
  private cost: ModelCallWindow | undefined;

  /**
   * `window`: tool calls a detection's evidence may reach back (the engine's history size).
   * `priced`: a price table is configured.
   */
  constructor(
    private readonly window: number,
    private readonly priced: boolean,
  ) {}

  /** A tool call that ended at `end` (epoch ms) went to the engine. */
  toolCall(end: number): void {
    this.recorded++;
    if (!(end <= this.toolsEnded)) this.toolsEnded = end;
  }

  /**
   * A model call that reports usage ended, having started at `start` (epoch ms); `usd` is NaN when
   * it is not priced. Before the trace's first tool call it can count for no loop. Returns what it
   * added to the loop spend once the trace has a loop (for counters that follow the spend).
   */
  modelCall(start: number, input: number, output: number, usd: number): SpendDelta | undefined {
    if (this.recorded === 0) return undefined;
    return this.traceCost().modelCall(this.recorded, start, input, output, usd, this.toolsEnded);
  }

  /**
   * `d`, completed by the tool call handed over last (which ended at `completedAt`), with what the
   * model spent asking for its repetitions; `opened`: what the trace's first detection put on its
   * loop spend.
   */
  detection(d: LoopDetection, completedAt: number): { readonly priced: LoopDetection; readonly opened: SpendDelta | undefined } {
    const { spend, opened } = this.traceCost().detection(d, this.recorded, completedAt);
    return { priced: withSpend(d, spend), opened };
  }

  /** The trace's loop spend around its loops; undefined before a detection or without known usage. */
  loopSpend(): LoopSpend | undefined {
    return this.cost?.loopSpend();
  }

  private traceCost(): ModelCallWindow {
    return (this.cost ??= new ModelCallWindow(this.window, this.priced));
  }
}
