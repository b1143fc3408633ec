import type { Hash } from '../fingerprint/hash.js';
import type { TraceDetector } from '../detector/trace-detector.js';
import type { LoopDetection } from '../detector/types.js';
import type { ToolLoopError } from '../errors.js';
import type { GuardedCallRecord } from './events.js';

/** An intervention on one loop signature (a detection fingerprint). */
interface Strike {
  count: number;
  /** Batch of the latest strike: parallel duplicates in one batch are one strike, not two. */
  batch: string;
  /** Tool + arguments of the call that was refused; running that call again means the loop broke. */
  readonly trigger: Hash;
}

type MutableRecord = { -readonly [K in keyof GuardedCallRecord]: GuardedCallRecord[K] };

/**
 * Everything the guard knows about one user turn: the engine's history of calls that really ran,
 * the guard's own interventions, the calls in flight and the stop. `reset()` replaces it whole.
 */
export class GuardSession {
  readonly controller = new AbortController();
  stopped: ToolLoopError | undefined;
  attempts = 0;
  private readonly strikes = new Map<string, Strike>();
  private readonly records: MutableRecord[] = [];
  private readonly inFlight = new Map<string, number>();
  private autoBatch: string | undefined;
  private autoBatchFresh = false;
  /**
   * A call of the current automatic batch has finished: a call that starts after it belongs to a
   * later step, even while another call of the batch still runs (a call that hangs, which the app
   * timed out, would otherwise gather every later call into its batch, where repeats do not count).
   */
  private autoBatchEnded = false;
  private batchSeq = 0;
  /** Report keys already used, so that a loop the call keeps continuing is reported once, not per call. */
  private readonly reported = new Set<string>();
  /** Transient judgement of the last failure of each (tool, arguments), by trigger hash. */
  private readonly transient = new Map<Hash, boolean>();
  /** Successful calls declared to change state (see `changesState`), counted. */
  private changes = 0;
  /** `changes` when each (tool, arguments) last finished, by trigger hash. */
  private readonly changesSeen = new Map<Hash, number>();
  /** Calls (tool + arguments) whose loop was stopped, with the detection (`stopScope: 'loop'`): refused again whatever the engine says. */
  private readonly refused = new Map<Hash, LoopDetection>();

  constructor(
    readonly detector: TraceDetector,
    readonly generation: number,
    private readonly maxRecords: number,
  ) {}

  /**
   * A batch key for a call starting now. Without an explicit key, calls form one parallel step
   * when they overlap in time, or start in the same synchronous run (`Promise.all` over a step's
   * calls, where a hinted call is over at once).
   */
  batchFor(explicit: string | undefined): string {
    if (explicit !== undefined) return `b:${explicit}`;
    if (this.autoBatch === undefined || (!this.autoBatchFresh && (this.autoBatchEnded || this.running(this.autoBatch) === 0))) {
      this.autoBatch = `auto:${this.batchSeq++}`;
      this.autoBatchFresh = true;
      this.autoBatchEnded = false;
      queueMicrotask(() => {
        this.autoBatchFresh = false;
      });
    }
    return this.autoBatch;
  }

  running(batch: string): number {
    return this.inFlight.get(batch) ?? 0;
  }

  enter(batch: string): void {
    this.inFlight.set(batch, this.running(batch) + 1);
  }

  /** A call of `batch` finished; true when none of its batch is still running. */
  leave(batch: string): boolean {
    const n = Math.max(0, this.running(batch) - 1);
    if (batch === this.autoBatch) this.autoBatchEnded = true;
    if (n === 0) {
      this.inFlight.delete(batch);
      // A call that finished before the next one started was not parallel to it.
      if (batch === this.autoBatch) this.autoBatchFresh = false;
    } else this.inFlight.set(batch, n);
    return n === 0;
  }

  /** Strikes already given on any of these loops, and whether one was given in this very batch. */
  strikesOn(fingerprints: readonly string[], batch: string): { count: number; sameBatch: boolean } {
    let count = 0;
    let sameBatch = false;
    for (const fp of fingerprints) {
      const s = this.strikes.get(fp);
      if (!s) continue;
      count = Math.max(count, s.count);
      if (s.batch === batch) sameBatch = true;
    }
    return { count, sameBatch };
  }

  strike(fingerprints: readonly string[], batch: string, trigger: Hash, count: number): void {
    for (const fp of fingerprints) {
      const s = this.strikes.get(fp);
      if (s) {
        s.count = Math.max(s.count, count);
        s.batch = batch;
      } else {
        // Bounded like everything per turn: past 256 loops, the oldest strikes are forgotten.
        if (this.strikes.size >= 256) {
          const oldest = this.strikes.keys().next();
          if (!oldest.done) this.strikes.delete(oldest.value);
        }
        this.strikes.set(fp, { count, batch, trigger });
      }
    }
  }

  /**
   * The refused call ran after all: the guard only lets it through once the engine sees no loop
   * any more (other work broke the streak), so earlier strikes on it no longer apply.
   */
  clearStrikes(trigger: Hash): void {
    for (const [fp, s] of this.strikes) if (s.trigger === trigger) this.strikes.delete(fp);
  }

  /** True the first time `key` is seen in this turn (bounded: an old key may be reported again). */
  firstReport(key: string): boolean {
    if (this.reported.has(key)) return false;
    if (this.reported.size >= 1024) this.reported.clear();
    this.reported.add(key);
    return true;
  }

  setTransient(trigger: Hash, transient: boolean | undefined): void {
    if (transient === undefined) this.transient.delete(trigger);
    else this.transient.set(trigger, transient);
    if (this.transient.size > this.maxRecords * 2) {
      const oldest = this.transient.keys().next();
      if (!oldest.done) this.transient.delete(oldest.value);
    }
  }

  wasTransient(trigger: Hash): boolean {
    return this.transient.get(trigger) === true;
  }

  /** A declared change of state finished after this (tool, arguments) last did. */
  changedSince(trigger: Hash): boolean {
    const seen = this.changesSeen.get(trigger);
    return seen !== undefined && seen < this.changes;
  }

  /** This (tool, arguments) finished; `changed`: it was a declared change of state. */
  finished(trigger: Hash, changed: boolean): void {
    if (changed) this.changes++;
    this.changesSeen.delete(trigger); // re-inserted last: the oldest entry is the one to forget
    this.changesSeen.set(trigger, this.changes);
    if (this.changesSeen.size > this.maxRecords * 2) {
      const oldest = this.changesSeen.keys().next();
      if (!oldest.done) this.changesSeen.delete(oldest.value);
    }
  }

  /** It ran before with nothing changed since (undefined history: no). */
  unchangedRepeat(trigger: Hash): boolean {
    return this.changesSeen.get(trigger) === this.changes;
  }

  refuse(trigger: Hash, detection: LoopDetection): void {
    if (this.refused.size >= 256 && !this.refused.has(trigger)) {
      const oldest = this.refused.keys().next();
      if (!oldest.done) this.refused.delete(oldest.value);
    }
    this.refused.set(trigger, detection);
  }

  /** The stopped loop this call belongs to, when it was refused before. */
  refusedAs(trigger: Hash): LoopDetection | undefined {
    return this.refused.get(trigger);
  }

  addRecord(record: GuardedCallRecord): MutableRecord {
    const r: MutableRecord = { ...record };
    this.records.push(r);
    if (this.records.length > this.maxRecords) this.records.shift();
    return r;
  }

  recentRecords(limit: number): GuardedCallRecord[] {
    const from = Math.max(0, this.records.length - Math.max(0, limit));
    return this.records.slice(from).map((r) => ({ ...r }));
  }

  stop(error: ToolLoopError): boolean {
    if (this.stopped) return false;
    this.stopped = error;
    this.controller.abort(error);
    return true;
  }
}
