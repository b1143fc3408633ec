import type { Hash } from '../fingerprint/hash.js';
import type { LoopEngine } from './engine.js';
import { MAX_RETAINED_NAME } from './retained-name.js';
import { buildToolCall, type NoteReporter, type ProblemReporter, type RawToolCall } from './tool-call.js';
import type { TraceDetector } from './trace-detector.js';
import type { LoopDetection, ToolCall } from './types.js';

/**
 * Calls held per trace at most while waiting (beyond it the trace is evaluated eagerly): a held
 * call takes about a quarter of what a call history does, so beyond three the history is smaller.
 */
const MAX_DEFERRED_CALLS = 3;
const NONE: LoopDetection[] = [];
/** User messages remembered before the first call (beyond, the oldest are not kept). */
const MAX_HEARD = 8;

/** A waiting call, in a list in call order. */
interface Deferred {
  readonly call: ToolCall;
  readonly batchComplete: boolean;
  next: Deferred | undefined;
}

/**
 * The engine for one trace, with its history made only when it can matter.
 *
 * While every call of a trace went to a different tool, no rule can fire: each needs two calls of
 * one tool (and a cycle, a repeated step), provided no threshold is below 2. So those calls wait,
 * fingerprinted (a call is reduced to hashes at once: its argument and result text is never held,
 * however long the trace stays open, and a string the SDK cut from a longer one cannot keep the
 * original alive). The first time a tool name comes back, the waiting calls are recorded in their
 * order, then the new one, and the trace is evaluated eagerly from then on. The engine sees
 * exactly the sequence it would have seen, so the detections are the same; a trace that never
 * calls a tool twice never pays for a call history (bench/NOTES.md: memory per active
 * trace, one call).
 */
export class DeferredTrace {
  private detector: TraceDetector | undefined;
  private first: Deferred | undefined;
  private last: Deferred | undefined;
  private waitingCalls = 0;
  /** User messages heard before any call (see `userMessage`), oldest first. */
  private heard: Hash[] | undefined;

  constructor(
    private readonly engine: LoopEngine,
    readonly traceId: string,
    private readonly onProblem?: ProblemReporter,
    private readonly onNote?: NoteReporter,
  ) {}

  /**
   * The trace's detector once it is made (the first time a tool came back): from then on a holder
   * may record into it directly and let this go.
   */
  get made(): TraceDetector | undefined {
    return this.detector;
  }

  /** Calls waiting to be recorded (0 once the trace is evaluated eagerly). */
  get deferred(): number {
    return this.waitingCalls;
  }

  record(raw: RawToolCall, batchComplete: boolean): LoopDetection[] {
    const call = buildToolCall(this.engine, raw, this.onProblem, this.onNote);
    let detector = this.detector;
    let early: LoopDetection[] | undefined;
    if (detector === undefined) {
      if (this.wait(call, batchComplete)) return NONE;
      ({ detector, early } = this.make());
    }
    const found = detector.record(call, batchComplete);
    return early !== undefined && early.length > 0 ? [...early, ...found] : found;
  }

  /**
   * A user message (see `TraceDetector.userMessage`). Before any call it is remembered (a later
   * message that repeats it adds nothing); after calls, which it may make old news of, the trace
   * is evaluated from now on, so that the message lands between the calls it came between.
   */
  userMessage(content: Hash): void {
    let detector = this.detector;
    if (detector === undefined) {
      if (this.waitingCalls === 0) {
        const heard = (this.heard ??= []);
        if (!heard.includes(content) && heard.length < MAX_HEARD) heard.push(content);
        return;
      }
      // the waiting calls cannot complete a loop among themselves (see `replayWaiting`)
      detector = this.make().detector;
    }
    detector.userMessage(content);
  }

  /** The trace's detector, with what was heard and the waiting calls recorded into it. */
  private make(): { detector: TraceDetector; early: LoopDetection[] | undefined } {
    const detector = this.engine.createTrace(this.traceId);
    this.detector = detector;
    for (const content of this.heard ?? []) detector.userMessage(content);
    this.heard = undefined;
    return { detector, early: this.replayWaiting(detector) };
  }

  /** Holds the call if nothing can be found yet; false when the trace must be evaluated now. */
  private wait(call: ToolCall, batchComplete: boolean): boolean {
    // a held call keeps its tool's name: a long one is not worth holding (see `retainedName`)
    if (call.toolName.length > MAX_RETAINED_NAME) return false;
    if (this.engine.policies.get(call.toolName).minCallThreshold < 2) return false;
    if (this.waitingCalls >= MAX_DEFERRED_CALLS) return false;
    for (let w = this.first; w !== undefined; w = w.next) if (w.call.toolName === call.toolName) return false;
    const held: Deferred = { call, batchComplete, next: undefined };
    if (this.last === undefined) this.first = held;
    else this.last.next = held;
    this.last = held;
    this.waitingCalls++;
    return true;
  }

  /**
   * Records the waiting calls in their order. They cannot complete a loop among themselves (see
   * above); should one ever do, what it found is reported with the current call, not lost.
   */
  private replayWaiting(detector: TraceDetector): LoopDetection[] | undefined {
    const first = this.first;
    this.first = this.last = undefined;
    this.waitingCalls = 0;
    let early: LoopDetection[] | undefined;
    for (let w = first; w !== undefined; w = w.next) {
      const found = detector.record(w.call, w.batchComplete);
      if (found.length > 0) (early ??= []).push(...found);
    }
    return early;
  }
}
