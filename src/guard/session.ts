import { toHex, type Hash } from '../fingerprint/hash.js';
import type { TraceDetector } from '../detector/trace-detector.js';
import type { LoopDetection, ToolCall } from '../detector/types.js';
import { CallSequence, type Batch } from '../sequence/call-sequence.js';
import type { ToolLoopError } from '../errors.js';
import type { GuardedCallRecord } from './events.js';
import { RecentOutcomes } from './recent-outcomes.js';

/** An intervention on one loop signature (a detection fingerprint). */
interface Strike {
  count: number;
  /** Batch of the latest strike: parallel duplicates in one batch are one strike, not two. */
  batch: string;
  /** Tool + arguments of the call that was refused; running that call again means the loop broke. */
  readonly trigger: Hash;
}

/**
 * A call's record as the session keeps it (its owner updates it as the call ends): the arguments'
 * fingerprint as the hash, made hex only when the records are read, off the call's path.
 */
export type CallRecord = { -readonly [K in keyof KeptRecord]: KeptRecord[K] } & { readonly argsHash: Hash | undefined };
type KeptRecord = Omit<GuardedCallRecord, 'argsFingerprint'>;

/**
 * Everything the guard knows about one user turn: the engine's history of calls that really ran,
 * the guard's own interventions, the calls in flight and the stop. `reset()` replaces it whole.
 */
export class GuardSession {
  readonly controller = new AbortController();
  stopped: ToolLoopError | undefined;
  private readonly strikes = new Map<string, Strike>();
  private readonly records: CallRecord[] = [];
  /** The turn's calls in order, and their automatic parallel batches. */
  readonly sequence = new CallSequence();
  /** Batches the caller named (`CheckOptions.batch`), while a call of theirs runs: the name is the batch. */
  private readonly named = new Map<string, Batch>();
  /** The latest automatic batch, and whether it opened in the synchronous run still going on. */
  private autoBatch: Batch | undefined;
  private autoBatchFresh = false;
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

  /**
   * `outcomes`: what the guard reads of `detector`'s history, recorded along with it (a new turn
   * of the same conversation keeps both); `maxRecords`: the engine's `historySize`.
   */
  constructor(
    readonly detector: TraceDetector,
    readonly generation: number,
    private readonly maxRecords: number,
    readonly outcomes = new RecentOutcomes(maxRecords),
  ) {}

  /** Records a call that ran in the engine's history, and what the guard reads of it; returns the loops it completes. */
  record(call: ToolCall, batchComplete: boolean): LoopDetection[] {
    const found = this.detector.record(call, batchComplete);
    const recorded = this.detector.recentCalls(1)[0];
    if (recorded) this.outcomes.add(recorded);
    return found;
  }

  /**
   * The batch of a call starting now. A key the caller gives names its batch. Otherwise calls form
   * one parallel step when they overlap in time (the sequence's batches), or start in the same
   * synchronous run (`Promise.all` over a step's calls, where a hinted call is over at once).
   */
  batchFor(explicit: string | undefined): Batch {
    if (explicit !== undefined) {
      const key = `b:${explicit}`;
      let batch = this.named.get(key);
      if (batch === undefined) this.named.set(key, (batch = { key, running: 0, ended: false }));
      return batch;
    }
    const batch = this.sequence.batchFor(undefined, this.autoBatchFresh);
    if (batch !== this.autoBatch) {
      this.autoBatch = batch;
      this.autoBatchFresh = true;
      queueMicrotask(() => {
        if (this.autoBatch === batch) this.autoBatchFresh = false;
      });
    }
    return batch;
  }

  enter(batch: Batch): void {
    this.sequence.enter(batch);
  }

  /** A call of `batch` finished; true when none of its batch is still running. */
  leave(batch: Batch): boolean {
    const complete = this.sequence.leave(batch);
    if (complete) {
      if (batch.key.startsWith('b:')) this.named.delete(batch.key);
      // A call that finished before the next one started was not parallel to it.
      else if (batch === this.autoBatch) this.autoBatchFresh = false;
    }
    return complete;
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

  /** Keeps `record` itself (a new object of the caller's) and returns it. */
  addRecord(record: CallRecord): CallRecord {
    this.records.push(record);
    if (this.records.length > this.maxRecords) this.records.shift();
    return record;
  }

  recentRecords(limit: number): GuardedCallRecord[] {
    const from = Math.max(0, this.records.length - Math.max(0, limit));
    return this.records.slice(from).map(({ index, toolName, argsHash, ...r }) => ({ index, toolName, ...(argsHash !== undefined ? { argsFingerprint: toHex(argsHash) } : {}), ...r }));
  }

  stop(error: ToolLoopError): boolean {
    if (this.stopped) return false;
    this.stopped = error;
    this.controller.abort(error);
    return true;
  }
}
