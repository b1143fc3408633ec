/**
 * What the model calls of one trace cost around its loops: per detection, the calls that asked
 * for the repetitions; per trace, what the loop went on costing. Pure bookkeeping (no
 * OpenTelemetry): the span processor feeds it live, the trace replayer (scan, serve) in the same
 * order from exported spans, so both report the same numbers.
 *
 * Order, not only time: SDKs take a span's start from `Date.now()` (whole milliseconds) and its
 * end as start plus the exact duration, so spans that follow each other within a millisecond
 * (instant tools, mock or cached models) cannot be ordered by their timestamps. What is exact is
 * the order things ended in: each model call remembers how many tool calls had been recorded
 * when it ended (its position), and each detection says how many calls back its evidence began
 * (`evidenceCalls`). A model call "started after the end of the first call of the evidence and
 * ended before the end of the call that completed it" when it ended after the first call was
 * recorded and before the completing one was, and did not start clearly (more than a
 * millisecond) before the first call ended: a streaming call that ran across the tool call is
 * not one of the calls that asked for the repetitions.
 */

/** Start times within this of an end time cannot be ordered by time alone (see above). */
export const TIME_QUANTUM_MS = 1;

/** Tokens of some model calls. */
export interface TokenCount {
  readonly input: number;
  readonly output: number;
}

/** What some model calls spent. */
export interface Spend {
  readonly tokens: TokenCount;
  /** How many model calls. */
  readonly modelCalls: number;
  /** USD, when a price table is configured and covers every one of those calls. */
  readonly costUsd?: number;
}

/** What one model call added to a trace's loop spend (metrics count these as they happen). */
export interface SpendDelta {
  readonly input: number;
  readonly output: number;
  /** NaN when the call is not priced. */
  readonly usd: number;
}

/** Where a detection's evidence begins: the `LoopDetection` fields. */
export interface EvidenceSpan {
  readonly evidenceStartTime: number;
  readonly evidenceCalls: number;
}

/** A trace's whole loop spend around its loops, when it ends. */
export interface LoopSpend {
  /**
   * From the end of the first call of the first detection's evidence to the end of the trace:
   * what the loop cost, the repetitions before it was detected included.
   */
  readonly loop: Spend;
  /** From the end of the call that completed the first detection to the end of the trace: what the loop went on costing once detected. */
  readonly afterDetection: Spend;
}

const F_START = 0;
const F_POS = 1;
const F_INPUT = 2;
const F_OUTPUT = 3;
/** Model calls the entry sums (see `modelCall`: clean calls of one position share an entry). */
const F_CALLS = 4;
/** Last, so that a window without prices has no column for it (every call's USD is NaN then). */
const F_USD = 5;
const PRICED_STRIDE = 6;
const UNPRICED_STRIDE = 5;
/** The start kept for an entry of clean calls: it passes every time filter (see `modelCall`). */
const CLEAN = Number.POSITIVE_INFINITY;
const INITIAL_SLOTS = 4;

class Sum {
  input = 0;
  output = 0;
  usd = 0;
  calls = 0;

  add(input: number, output: number, usd: number, calls = 1): void {
    this.input += input;
    this.output += output;
    this.usd += usd;
    this.calls += calls;
  }

  spend(priced: boolean): Spend {
    const tokens = { input: this.input, output: this.output };
    // to a billionth of a dollar: sums of per-million prices leave float dust in the last digits
    return priced && Number.isFinite(this.usd) ? { tokens, modelCalls: this.calls, costUsd: Math.round(this.usd * 1e9) / 1e9 } : { tokens, modelCalls: this.calls };
  }
}

/** A trace's loop, from its first detection: where its loop spend starts, and its running sums. */
interface LoopSums {
  /** The first detection's evidence start (epoch ms) and the record number of its first call. */
  readonly fromTime: number;
  readonly fromRecord: number;
  /** The end of the call that completed the first detection, and its record number. */
  readonly afterFromTime: number;
  readonly afterFromRecord: number;
  readonly sum: Sum;
  readonly after: Sum;
}

/**
 * One trace's model calls, as a queue of six numbers each (start, position, input, output, calls,
 * USD; five without a price table, whose USD is always NaN), kept only while a detection could still count them, and the running sums of its loop.
 * Model calls of one position that started after every tool call recorded so far ended are
 * "clean": every detection that can count them counts all of them, so they share one entry (an
 * agent's tens of model calls between two tool calls cost one entry, not tens (bench/NOTES.md:
 * memory per active trace, the agent mix as run, with `loop` made at the first detection).
 */
export class ModelCallWindow {
  private data: number[] = [];
  private slots = 0;
  private head = 0;
  private count = 0;
  /** Some model call with usage was seen: without one, tokens are unknown, not zero. */
  private seen = false;
  /** The running sums of the trace's loop, made at its first detection. */
  private loop: LoopSums | undefined;

  /**
   * `window`: tool calls a detection's evidence may reach back (the engine's history size); model
   * calls older than that are dropped. `maxModelCalls`: the most kept however many model calls
   * come without a tool call. `priced`: a price table is configured.
   */
  constructor(
    private readonly window: number,
    private readonly priced: boolean,
    private readonly maxModelCalls = Math.max(64, window * 4),
  ) {}

  /** Numbers an entry holds: no USD column without a price table. */
  private get stride(): number {
    return this.priced ? PRICED_STRIDE : UNPRICED_STRIDE;
  }

  /** Usage of some model call is known (after the first tool call). */
  get known(): boolean {
    return this.seen;
  }

  /** Entries held (a model call, or clean model calls of one position: see `modelCall`). */
  get heldModelCalls(): number {
    return this.count;
  }

  /**
   * A model call ended, with its start (epoch ms) and usage, when `pos` tool calls of the trace
   * had been recorded (handed to the engine), the latest of them ending at `toolsEnded` (epoch
   * ms; the latest end of any). Returns what it added to the loop's spend once a loop has been
   * detected, for counters that follow the spend as it burns.
   */
  modelCall(pos: number, start: number, input: number, output: number, usd: number, toolsEnded: number): SpendDelta | undefined {
    // before the first tool call a model call can be in no window (each starts after a tool call)
    if (pos === 0) return undefined;
    this.seen = true;
    // A detection's evidence starts at the end of a call recorded by now: a call that started
    // after all of them passes the time filter of every detection (`windowSum`).
    const clean = start >= toolsEnded - TIME_QUANTUM_MS;
    if (!clean || !this.addToNewest(pos, input, output, usd)) this.push(clean ? CLEAN : start, pos, input, output, usd);
    const loop = this.loop;
    if (loop === undefined) return undefined;
    if (pos >= loop.afterFromRecord && start >= loop.afterFromTime - TIME_QUANTUM_MS) loop.after.add(input, output, usd);
    if (pos < loop.fromRecord || start < loop.fromTime - TIME_QUANTUM_MS) return undefined;
    loop.sum.add(input, output, usd);
    return { input, output, usd };
  }

  /**
   * What the model spent asking for the repetitions of a detection completed by tool call number
   * `completing` (the one recorded last), which ended at `completedAt`; undefined when no usage is
   * known. The first detection of the trace opens its loop spend: `opened` is what that adds to it.
   */
  detection(d: EvidenceSpan, completing: number, completedAt: number): { spend: Spend | undefined; opened: SpendDelta | undefined } {
    const firstRecord = completing - d.evidenceCalls + 1;
    const sum = this.windowSum(d.evidenceStartTime, firstRecord, completing);
    let opened: SpendDelta | undefined;
    if (this.loop === undefined) {
      const loopSum = new Sum();
      loopSum.add(sum.input, sum.output, sum.usd, sum.calls);
      this.loop = { fromTime: d.evidenceStartTime, fromRecord: firstRecord, afterFromTime: completedAt, afterFromRecord: completing, sum: loopSum, after: new Sum() };
      if (sum.calls > 0) opened = { input: sum.input, output: sum.output, usd: sum.usd };
    }
    return { spend: this.seen ? sum.spend(this.priced) : undefined, opened };
  }

  /** The trace's loop spend around its loops; undefined before a detection or without known usage. */
  loopSpend(): LoopSpend | undefined {
    if (this.loop === undefined || !this.seen) return undefined;
    return { loop: this.loop.sum.spend(this.priced), afterDetection: this.loop.after.spend(this.priced) };
  }

  /** Model calls at positions [firstRecord, completing) that did not start clearly before `firstEnd`. */
  private windowSum(firstEnd: number, firstRecord: number, completing: number): Sum {
    const sum = new Sum();
    // newest first; positions only grow, so the walk stops at the first call before the window
    for (let i = this.count - 1; i >= 0; i--) {
      const o = this.offset(i);
      const d = this.data;
      const pos = d[o + F_POS] as number;
      if (pos < firstRecord) break;
      if (pos >= completing || (d[o + F_START] as number) < firstEnd - TIME_QUANTUM_MS) continue;
      sum.add(d[o + F_INPUT] as number, d[o + F_OUTPUT] as number, this.priced ? (d[o + F_USD] as number) : Number.NaN, d[o + F_CALLS] as number);
    }
    return sum;
  }

  /** Adds a clean call to the newest entry when that holds clean calls of the same position. */
  private addToNewest(pos: number, input: number, output: number, usd: number): boolean {
    if (this.count === 0) return false;
    const o = this.offset(this.count - 1);
    const d = this.data;
    if (d[o + F_START] !== CLEAN || d[o + F_POS] !== pos) return false;
    d[o + F_INPUT] = (d[o + F_INPUT] as number) + input;
    d[o + F_OUTPUT] = (d[o + F_OUTPUT] as number) + output;
    d[o + F_CALLS] = (d[o + F_CALLS] as number) + 1;
    if (this.priced) d[o + F_USD] = (d[o + F_USD] as number) + usd;
    return true;
  }

  private push(start: number, pos: number, input: number, output: number, usd: number): void {
    // calls no detection can reach any more: positions before the engine's window
    const oldest = pos - this.window;
    while (this.count > 0 && (this.data[this.offset(0) + F_POS] as number) < oldest) this.dropOldest();
    if (this.count === this.maxModelCalls) this.dropOldest();
    if (this.count === this.slots) this.grow();
    const o = ((this.head + this.count) % this.slots) * this.stride;
    const d = this.data;
    d[o + F_START] = start;
    d[o + F_POS] = pos;
    d[o + F_INPUT] = input;
    d[o + F_OUTPUT] = output;
    d[o + F_CALLS] = 1;
    if (this.priced) d[o + F_USD] = usd;
    this.count++;
  }

  private dropOldest(): void {
    this.head = (this.head + 1) % this.slots;
    this.count--;
  }

  /**
   * Room for more entries: a quarter more at a time (4, 5, 6, 7, 8, 10, ...), since one window
   * lives in every active trace with tool calls and an agent run holds a handful of entries; the
   * copies are a few dozen numbers.
   */
  private grow(): void {
    const slots = Math.min(this.maxModelCalls, Math.max(INITIAL_SLOTS, this.slots + Math.max(1, this.slots >> 2)));
    const stride = this.stride;
    const next = new Array<number>(slots * stride).fill(0);
    for (let i = 0; i < this.count; i++) {
      const from = this.offset(i);
      for (let f = 0; f < stride; f++) next[i * stride + f] = this.data[from + f] as number;
    }
    this.data = next;
    this.slots = slots;
    this.head = 0;
  }

  private offset(i: number): number {
    return ((this.head + i) % this.slots) * this.stride;
  }
}

/** What a trace's loop spend grew by since `before` (a continued trace's earlier loop spend); undefined when nothing. */
export function spendIncrease(now: LoopSpend | undefined, before: LoopSpend | undefined): SpendDelta | undefined {
  if (now === undefined) return undefined;
  const was = before?.loop;
  const input = now.loop.tokens.input - (was?.tokens.input ?? 0);
  const output = now.loop.tokens.output - (was?.tokens.output ?? 0);
  const usd = now.loop.costUsd !== undefined ? now.loop.costUsd - (was?.costUsd ?? 0) : Number.NaN;
  return input > 0 || output > 0 ? { input, output, usd } : undefined;
}

/** A detection with what its repetitions cost (`tokens`, `costUsd`), when known. */
export function withSpend<D extends { readonly tokens?: TokenCount; readonly costUsd?: number }>(d: D, spend: Spend | undefined): D {
  if (spend === undefined) return d;
  return spend.costUsd !== undefined ? { ...d, tokens: spend.tokens, costUsd: spend.costUsd } : { ...d, tokens: spend.tokens };
}
