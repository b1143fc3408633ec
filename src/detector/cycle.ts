import { UnorderedHash, type Hash } from '../fingerprint/hash.js';

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
}

/** What the tracker keeps about one step besides its signature. */
export interface StepInfo {
  readonly tool: number;
  readonly evidenceRank: number;
  readonly allPollers: boolean;
  /** Idle time between the end of the previous step and the start of this one. */
  readonly idleBefore: number;
}

/**
 * Finds periodic runs in the sequence of steps (a step is one batch of parallel calls).
 * For each period p it keeps how many trailing steps equal the step p before them: O(maxPeriod)
 * per step and no history beyond the last maxPeriod steps. A cycle is reported for the smallest
 * period that has at least two full laps; period 1 is a plain repeat and left to the call rules.
 */
export class CycleTracker {
  private readonly steps: number[] = [];
  private readonly infos: StepInfo[] = [];
  private readonly runs: Int32Array;
  private n = 0;
  private found: CycleFinding | undefined;

  constructor(private readonly maxPeriod: number) {
    this.runs = new Int32Array(maxPeriod + 1);
  }

  /** Last step pushed is part of a cycle of period ≥ 2 with at least two laps. */
  get inCycle(): boolean {
    return this.found !== undefined;
  }

  /** An independent copy (the dispatcher guard's side-effect-free preview pushes into one). */
  clone(): CycleTracker {
    const copy = new CycleTracker(this.maxPeriod);
    copy.steps.push(...this.steps);
    copy.infos.push(...this.infos);
    copy.runs.set(this.runs);
    copy.n = this.n;
    copy.found = this.found;
    return copy;
  }

  push(step: Hash, info: StepInfo): CycleFinding | undefined {
    const P = this.maxPeriod;
    for (let p = 1; p <= P; p++) {
      const back = this.steps.length - p;
      this.runs[p] = back >= 0 && this.steps[back] === step ? (this.runs[p] ?? 0) + 1 : 0;
    }
    this.steps.push(step);
    this.infos.push(info);
    if (this.steps.length > P) {
      this.steps.shift();
      this.infos.shift();
    }
    this.n++;
    this.found = undefined;
    for (let p = 1; p <= P; p++) {
      const run = this.runs[p] ?? 0;
      if (run < p) continue;
      if (p === 1) return undefined;
      const last = this.steps.length;
      const key = new UnorderedHash();
      let rank = Number.POSITIVE_INFINITY;
      let allPollers = true;
      let minIdle = Number.POSITIVE_INFINITY;
      const tools: number[] = [];
      for (let k = last - p; k < last; k++) {
        key.add(this.steps[k] ?? 0);
        const info = this.infos[k];
        if (!info) continue;
        rank = Math.min(rank, info.evidenceRank);
        allPollers &&= info.allPollers;
        minIdle = Math.min(minIdle, info.idleBefore);
        tools.push(info.tool);
      }
      this.found = {
        period: p,
        laps: Math.floor((run + p) / p),
        key: key.digest(0x43),
        tools,
        evidenceRank: rank,
        allPollers,
        minIdle,
      };
      return this.found;
    }
    return undefined;
  }
}
