import { UnorderedHash, type Hash } from '../fingerprint/hash.js';
import { EVIDENCE_BY_RANK } from './call-rules.js';

export interface CycleFinding {
  readonly period: number;
  /** Complete repetitions of the period seen in a row (the first pass included). */
  readonly laps: number;
  /** Identity of the cycle, the same whichever step of it is current (rotation-invariant). */
  readonly key: Hash;
  /** Tool ids of the steps, oldest first, one per step (the first call of the step). */
  readonly tools: readonly number[];
  /** Weakest evidence rank among the steps (see `TraceDetector`). */
  readonly evidenceRank: number;
  /** Every call in the cycle is a poller (status checks round-robin over several jobs). */
  readonly allPollers: boolean;
  /** Shortest idle time before any step of the cycle (ms): spaced-out cycles weigh less. */
  readonly minIdle: number;
  /** End (epoch ms) of the first call of the run's first step: where the evidence begins. */
  readonly firstEnd: number;
  /** Record number (the caller's count of calls) of that call. */
  readonly firstRecord: number;
}

/** What the tracker keeps about one step besides its signature. */
export interface StepInfo {
  readonly tool: number;
  readonly evidenceRank: number;
  readonly allPollers: boolean;
  /** Idle time between the end of the previous step and the start of this one. */
  readonly idleBefore: number;
  /** End (epoch ms) of the step's first-recorded call, and that call's record number. */
  readonly firstEnd: number;
  readonly firstRecord: number;
}

/** Numbers kept per step, in `data`: signature, then the `StepInfo` fields. */
const F_SIG = 0;
const F_TOOL = 1;
/**
 * The first call's record number, the evidence rank and "all pollers" in one number:
 * `(record · 4 + rank) · 2 + (all pollers ? 1 : 0)`, exact below 2^53 (bench/NOTES.md: memory
 * per active trace, the agent mix as run).
 */
const F_RECORD_RANK_POLLERS = 2;
const F_IDLE = 3;
const F_FIRST_END = 4;
const STRIDE = 5;
/** Evidence ranks are 0 to RANKS - 1. */
const RANKS = EVIDENCE_BY_RANK.length;

function packStep(firstRecord: number, rank: number, allPollers: boolean): number {
  return (firstRecord * RANKS + rank) * 2 + (allPollers ? 1 : 0);
}

function firstRecordOf(packed: number): number {
  return Math.floor(packed / (2 * RANKS));
}

/** Numbers kept per period, in `runs`: the run's length, then its first step's end and record number. */
const R_LENGTH = 0;
const R_FIRST_END = 1;
const R_FIRST_RECORD = 2;
const RUN_STRIDE = 3;

/**
 * Finds periodic runs in the sequence of steps (a step is one batch of parallel calls).
 * For each period p it keeps how many trailing steps equal the step p before them: O(maxPeriod)
 * per step and no history beyond the last maxPeriod steps. A cycle is reported for the smallest
 * period that has at least two full laps; period 1 is a plain repeat and left to the call rules.
 * The last steps are packed into one array of doubles (5 numbers a step, oldest first): one of
 * these lives in every active trace, so no object per step.
 */
export class CycleTracker {
  /** The last `stored` steps, `maxPeriod` slots made at the first step (exact size, no slack). */
  private data: number[] | undefined;
  private stored = 0;
  /**
   * Per period p (1 to `maxPeriod`), at `(p - 1) * RUN_STRIDE`: how many trailing steps equal the step p before, and the
   * first step of the current run (`StepInfo.firstEnd`, `firstRecord`), taken when it began, in
   * one array (see `CallHistory`).
   */
  private readonly runs: number[];
  private n = 0;
  private found: CycleFinding | undefined;

  constructor(private readonly maxPeriod: number) {
    this.runs = new Array<number>(maxPeriod * RUN_STRIDE).fill(0);
  }

  /** Last step pushed is part of a cycle of period ≥ 2 with at least two laps. */
  get inCycle(): boolean {
    return this.found !== undefined;
  }

  /**
   * The last step pushed repeated the one before (period 1: the same batch sent again): how many
   * times it was sent in a row (2 or more), and where the first of them began; undefined otherwise.
   */
  resent(): { laps: number; firstEnd: number; firstRecord: number } | undefined {
    const run = this.runs[R_LENGTH] ?? 0;
    if (run < 1) return undefined;
    return { laps: run + 1, firstEnd: this.runs[R_FIRST_END] ?? Number.NaN, firstRecord: this.runs[R_FIRST_RECORD] ?? Number.NaN };
  }

  /** An independent copy (the dispatcher guard's side-effect-free preview pushes into one). */
  clone(): CycleTracker {
    const copy = new CycleTracker(this.maxPeriod);
    copy.data = this.data?.slice();
    copy.stored = this.stored;
    for (let i = 0; i < this.runs.length; i++) copy.runs[i] = this.runs[i] ?? 0;
    copy.n = this.n;
    copy.found = this.found;
    return copy;
  }

  /** Forgets every step (a user message told the agent something new: laps start over). */
  reset(): void {
    this.stored = 0;
    this.runs.fill(0);
    this.found = undefined;
  }

  private at(k: number, field: number): number {
    return this.data?.[k * STRIDE + field] ?? 0;
  }

  push(step: Hash, info: StepInfo): CycleFinding | undefined {
    const P = this.maxPeriod;
    const stored = this.stored;
    for (let p = 1; p <= P; p++) {
      const back = stored - p;
      const r = (p - 1) * RUN_STRIDE;
      const run = back >= 0 && this.at(back, F_SIG) === step ? (this.runs[r + R_LENGTH] ?? 0) + 1 : 0;
      this.runs[r + R_LENGTH] = run;
      if (run === 1) {
        // a run begins: the step p back is its first (it is about to leave the stored window)
        this.runs[r + R_FIRST_END] = this.at(back, F_FIRST_END);
        this.runs[r + R_FIRST_RECORD] = firstRecordOf(this.at(back, F_RECORD_RANK_POLLERS));
      }
    }
    const d = (this.data ??= newSlots(P));
    let o = stored * STRIDE;
    if (stored >= P) {
      // drop the oldest step: shift the others down (P is small)
      for (let i = STRIDE; i < P * STRIDE; i++) d[i - STRIDE] = d[i] ?? 0;
      o = (P - 1) * STRIDE;
    } else {
      this.stored++;
    }
    d[o + F_SIG] = step;
    d[o + F_TOOL] = info.tool;
    d[o + F_RECORD_RANK_POLLERS] = packStep(info.firstRecord, info.evidenceRank, info.allPollers);
    d[o + F_IDLE] = info.idleBefore;
    d[o + F_FIRST_END] = info.firstEnd;
    this.n++;
    this.found = undefined;
    for (let p = 1; p <= P; p++) {
      const run = this.runs[(p - 1) * RUN_STRIDE + R_LENGTH] ?? 0;
      if (run < p) continue;
      if (p === 1) return undefined;
      const last = this.stored;
      const key = new UnorderedHash();
      let rank = Number.POSITIVE_INFINITY;
      let allPollers = true;
      let minIdle = Number.POSITIVE_INFINITY;
      const tools: number[] = [];
      for (let k = last - p; k < last; k++) {
        key.add(this.at(k, F_SIG));
        const packed = this.at(k, F_RECORD_RANK_POLLERS);
        rank = Math.min(rank, Math.floor(packed / 2) % RANKS);
        allPollers &&= packed % 2 === 1;
        minIdle = Math.min(minIdle, this.at(k, F_IDLE));
        tools.push(this.at(k, F_TOOL));
      }
      this.found = {
        period: p,
        laps: Math.floor((run + p) / p),
        key: key.digest(0x43),
        tools,
        evidenceRank: rank,
        allPollers,
        minIdle,
        firstEnd: this.runs[(p - 1) * RUN_STRIDE + R_FIRST_END] ?? Number.NaN,
        firstRecord: this.runs[(p - 1) * RUN_STRIDE + R_FIRST_RECORD] ?? Number.NaN,
      };
      return this.found;
    }
    return undefined;
  }
}

function newSlots(steps: number): number[] {
  return new Array<number>(steps * STRIDE).fill(0);
}
