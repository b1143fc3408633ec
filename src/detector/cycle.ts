import { UnorderedHash, type Hash } from '../fingerprint/hash.js';
import { EVIDENCE_BY_RANK } from './call-rules.js';
import { doubles } from './doubles.js';

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

/** Numbers kept per period, at the start of `data`: the run's length, then its first step's end and record number. */
const R_LENGTH = 0;
const R_FIRST_END = 1;
const R_FIRST_RECORD = 2;
const RUN_STRIDE = 3;

/**
 * The state one `CycleTracker.mark` saved (its numbers in `saved`, a scratch array reused). One
 * for all trackers: a trial (`TraceDetector.preview`) is synchronous and never nested.
 */
const trial: { data: number[] | undefined; saved: number[]; stored: number; found: CycleFinding | undefined } = { data: undefined, saved: [], stored: 0, found: undefined };

/**
 * Finds periodic runs in the sequence of steps (a step is one batch of parallel calls).
 * For each period p it keeps how many trailing steps equal the step p before them: O(maxPeriod)
 * per step and no history beyond the last maxPeriod steps. A cycle is reported for the smallest
 * period that has at least two full laps; period 1 is a plain repeat and left to the call rules.
 * The last steps are packed into one array of doubles (5 numbers a step, oldest first): one of
 * these lives in every active trace, so no object per step.
 */
export class CycleTracker {
  /**
   * One array, since one tracker lives in every active trace: first, per period p (1 to
   * `maxPeriod`), at `(p - 1) * RUN_STRIDE`, how many trailing steps equal the step p before, and
   * the first step of the current run (`StepInfo.firstEnd`, `firstRecord`), taken when it began;
   * then, from `steps`, the last `stored` steps, `STRIDE` numbers each (see `CallHistory`). Made at
   * the first step with room for it alone, and made again one step larger at each step until it
   * holds `maxPeriod` (exact size, no slack: most traces make fewer steps).
   */
  private data: number[] | undefined;
  private stored = 0;
  private found: CycleFinding | undefined;

  constructor(private readonly maxPeriod: number) {}

  /** Where the steps begin in `data`, after the runs. */
  private get steps(): number {
    return this.maxPeriod * RUN_STRIDE;
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
    // period 1's run is the first in `data`
    const d = this.data;
    const run = d?.[R_LENGTH] ?? 0;
    if (d === undefined || run < 1) return undefined;
    return { laps: run + 1, firstEnd: d[R_FIRST_END] ?? Number.NaN, firstRecord: d[R_FIRST_RECORD] ?? Number.NaN };
  }

  /** Remembers the state the next `push` changes: `rollback` undoes that `push`. */
  mark(): void {
    trial.data = this.data;
    trial.stored = this.stored;
    trial.found = this.found;
    const d = this.data;
    if (d === undefined) return;
    const saved = trial.saved;
    for (let i = 0; i < d.length; i++) saved[i] = d[i] ?? 0;
  }

  /** Back to the state at `mark`, the one `push` since then undone. */
  rollback(): void {
    // a push that made room replaced `data` and left the marked array as it was
    const d = trial.data;
    if (d !== undefined) for (let i = 0; i < d.length; i++) d[i] = trial.saved[i] ?? 0;
    this.data = d;
    this.stored = trial.stored;
    this.found = trial.found;
    trial.data = undefined;
    trial.found = undefined;
  }

  /** Forgets every step (a user message told the agent something new: laps start over). */
  reset(): void {
    this.stored = 0;
    this.data?.fill(0, 0, this.steps);
    this.found = undefined;
  }

  /** `data`, with room for one step more than the `stored` it holds (it may have more after `reset`). */
  private roomForStep(stored: number): number[] {
    const size = this.steps + (stored + 1) * STRIDE;
    const old = this.data;
    if (old !== undefined && old.length >= size) return old;
    const d = doubles(size);
    if (old !== undefined) for (let i = 0; i < old.length; i++) d[i] = old[i] ?? 0;
    this.data = d;
    return d;
  }

  private at(k: number, field: number): number {
    return this.data?.[this.steps + k * STRIDE + field] ?? 0;
  }

  push(step: Hash, info: StepInfo): CycleFinding | undefined {
    const P = this.maxPeriod;
    const stored = this.stored;
    const d = stored < P ? this.roomForStep(stored) : (this.data as number[]);
    for (let p = 1; p <= P; p++) {
      const back = stored - p;
      const r = (p - 1) * RUN_STRIDE;
      const run = back >= 0 && this.at(back, F_SIG) === step ? (d[r + R_LENGTH] ?? 0) + 1 : 0;
      d[r + R_LENGTH] = run;
      if (run === 1) {
        // a run begins: the step p back is its first (it is about to leave the stored window)
        d[r + R_FIRST_END] = this.at(back, F_FIRST_END);
        d[r + R_FIRST_RECORD] = firstRecordOf(this.at(back, F_RECORD_RANK_POLLERS));
      }
    }
    const steps = this.steps;
    let o = steps + stored * STRIDE;
    if (stored >= P) {
      // drop the oldest step: shift the others down (P is small)
      for (let i = steps + STRIDE; i < steps + P * STRIDE; i++) d[i - STRIDE] = d[i] ?? 0;
      o = steps + (P - 1) * STRIDE;
    } else {
      this.stored++;
    }
    d[o + F_SIG] = step;
    d[o + F_TOOL] = info.tool;
    d[o + F_RECORD_RANK_POLLERS] = packStep(info.firstRecord, info.evidenceRank, info.allPollers);
    d[o + F_IDLE] = info.idleBefore;
    d[o + F_FIRST_END] = info.firstEnd;
    this.found = undefined;
    for (let p = 1; p <= P; p++) {
      const run = d[(p - 1) * RUN_STRIDE + R_LENGTH] ?? 0;
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
        firstEnd: d[(p - 1) * RUN_STRIDE + R_FIRST_END] ?? Number.NaN,
        firstRecord: d[(p - 1) * RUN_STRIDE + R_FIRST_RECORD] ?? Number.NaN,
      };
      return this.found;
    }
    return undefined;
  }
}
