import type { Hash } from '../fingerprint/hash.js';
import { doubles } from './doubles.js';

/** Bit flags stored with each remembered call. */
export const OK = 1;
export const INFORMATIVE = 2;
export const UNKNOWN_TOOL = 4;
/**
 * First call with these arguments to this tool in the trace, or, for a success, its first success
 * with them (an edit that failed and then applied): new work, not a repeat.
 */
export const ARGS_NOVEL = 8;
/** A wait/sleep: invisible to the other rules. */
export const WAIT = 16;
export const EXEMPT = 32;
export const HAS_ARGS = 64;
export const HAS_RESULT = 128;
/** This exact call (tool, arguments and outcome) happened before in the remembered history: nothing new. */
export const REPEATS_EARLIER = 256;
/** A poller's call: its repeats are its role's, not a drought. */
export const POLLER = 512;
/**
 * The call may have told the agent something new: new arguments, or an outcome this call never
 * had (a failure's content included); without arguments it cannot be told and counts as news.
 * Repeats and waits do not. A streak whose evidence is "nothing new between" ends at one.
 */
export const NEWS = 1024;
/** The first call after a user message that said something new: the calls before it answered something else. */
export const USER_TURN = 2048;
/** A tool in the `writer` role: its call changes something. */
export const WRITE = 4096;

const F_TOOL = 0;
const F_ARGS = 1;
const F_OUT = 2;
/**
 * A failure's error class (its outcome, `F_OUT`, is what it said); a success's wording sketch
 * (`Fingerprint.wording`, NaN when its arguments have no words). One slot: a call is one or the other.
 */
const F_AUX = 3;
/** Flags and batch number in one double: `batch · FLAG_SPAN + flags` (exact below 2^53). */
const F_FLAGS_BATCH = 4;
const F_START = 5;
const F_END = 6;
/** A success's wording length (`Fingerprint.wordingLength`, 0 when its arguments have no words). */
const F_LENGTH = 7;
const STRIDE = 8;
/** One past the highest flag bit. */
const FLAG_SPAN = 8192;
const INITIAL_CAPACITY = 4;

/**
 * The last N calls of one trace, packed into one array of doubles (8 numbers a call) so that a
 * trace costs a few hundred bytes, not a few hundred objects. Grows from 4 slots by a quarter
 * (4, 5, 6, 7, 8, 10, ...: an agent run holds a handful of calls, and each growth copies a few
 * dozen numbers) to `capacity`, then overwrites the oldest, flags and batch number in one double
 * (bench/NOTES.md: memory per active trace, with the packings of cycle.ts and trace-store.ts). Index 0 is the oldest remembered call, `size - 1` the newest.
 *
 * A plain array of doubles.
 */
export class CallHistory {
  private data: number[];
  private slots: number;
  private head = 0; // next slot to write
  private count = 0;

  constructor(private readonly capacity: number) {
    this.slots = Math.max(1, Math.min(INITIAL_CAPACITY, capacity));
    this.data = newSlots(this.slots);
  }

  get size(): number {
    return this.count;
  }

  /**
   * Remembers a call: its tool, arguments hash (NaN when not captured), outcome hash (the result's
   * fingerprint when ok, what the failure said when failed; NaN when ok without a captured
   * result), error class when failed or wording sketch when ok (see `F_AUX`), flags, batch number,
   * times and a success's wording length.
   */
  add(tool: number, args: Hash, out: Hash, aux: number, flags: number, batch: number, start: number, end: number, wordingLength = 0): void {
    if (this.count === this.slots && this.slots < this.capacity) this.grow();
    const o = this.head * STRIDE;
    const d = this.data;
    d[o + F_TOOL] = tool;
    d[o + F_ARGS] = args;
    d[o + F_OUT] = out;
    d[o + F_AUX] = aux;
    d[o + F_FLAGS_BATCH] = batch * FLAG_SPAN + flags;
    d[o + F_START] = start;
    d[o + F_END] = end;
    d[o + F_LENGTH] = wordingLength;
    this.head = (this.head + 1) % this.slots;
    if (this.count < this.slots) this.count++;
  }

  private grow(): void {
    const slots = Math.min(this.capacity, this.slots + Math.max(1, this.slots >> 2));
    const next = newSlots(slots);
    for (let i = 0; i < this.count; i++) {
      const from = this.offset(i);
      for (let f = 0; f < STRIDE; f++) next[i * STRIDE + f] = this.data[from + f] ?? Number.NaN;
    }
    this.data = next;
    this.slots = slots;
    this.head = this.count % slots;
  }

  private offset(i: number): number {
    return ((this.head - this.count + i + this.slots) % this.slots) * STRIDE;
  }

  private field(i: number, f: number): number {
    // always in range (a slot of the ring, every slot filled): a fallback value here would make V8
    // box each double read into a new heap number
    return this.data[this.offset(i) + f] as number;
  }

  tool(i: number): number {
    return this.field(i, F_TOOL);
  }
  args(i: number): Hash {
    return this.field(i, F_ARGS);
  }
  out(i: number): Hash {
    return this.field(i, F_OUT);
  }
  /** A failure's error class. */
  errorClass(i: number): Hash {
    return this.field(i, F_AUX);
  }
  /** A success's wording sketch (NaN when its arguments have no words). */
  wording(i: number): number {
    return this.field(i, F_AUX);
  }
  /** A success's wording length (0 when its arguments have no words). */
  wordingLength(i: number): number {
    return this.field(i, F_LENGTH);
  }
  flags(i: number): number {
    // the low bits of an integer double, whatever its size: ToInt32 keeps them
    return this.field(i, F_FLAGS_BATCH) & (FLAG_SPAN - 1);
  }
  batch(i: number): number {
    return Math.floor(this.field(i, F_FLAGS_BATCH) / FLAG_SPAN);
  }
  start(i: number): number {
    return this.field(i, F_START);
  }
  end(i: number): number {
    return this.field(i, F_END);
  }

  /** Remembers what the next `add` changes (its slot and the ring's place): `rollback` undoes that `add`. */
  mark(): void {
    trial.data = this.data;
    trial.slots = this.slots;
    trial.head = this.head;
    trial.count = this.count;
    const o = this.head * STRIDE;
    for (let f = 0; f < STRIDE; f++) trial.slot[f] = this.data[o + f] ?? 0;
  }

  /** Back to the state at `mark`, the one `add` since then undone. */
  rollback(): void {
    // a growth since the mark moved the calls to a new array and left the marked one as it was
    const o = trial.head * STRIDE;
    for (let f = 0; f < STRIDE; f++) trial.data[o + f] = trial.slot[f] ?? 0;
    this.data = trial.data;
    this.slots = trial.slots;
    this.head = trial.head;
    this.count = trial.count;
    trial.data = NO_SLOTS;
  }

  /** Bytes held by the packed calls (for memory accounting). */
  get byteLength(): number {
    return this.data.length * 8;
  }
}

/**
 * The state one `CallHistory.mark` saved. One for all histories: a trial (`TraceDetector.preview`)
 * is synchronous and never nested, and a shared record adds nothing to the memory of each trace.
 */
const NO_SLOTS: number[] = [];
const trial = { data: NO_SLOTS, slots: 0, head: 0, count: 0, slot: new Array<number>(STRIDE).fill(0) };

/** Room for `slots` calls, allocated at its exact size (no growth slack). */
function newSlots(slots: number): number[] {
  return doubles(slots * STRIDE);
}

/** NaN-aware equality for optional hashes: two absent values are equal. */
export function sameHash(a: Hash, b: Hash): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}
