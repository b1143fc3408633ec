import type { LoopEngine } from './engine.js';
import { buildToolCall, type NoteReporter, type ProblemReporter, type RawToolCall } from './tool-call.js';
import type { TraceDetector } from './trace-detector.js';
import type { LoopDetection } from './types.js';

/** Raw text held per trace while waiting, at most (beyond it the trace is evaluated eagerly). */
export const MAX_DEFERRED_CHARS = 16 * 1024;
const MAX_DEFERRED_CALLS = 16;
const NONE: LoopDetection[] = [];

/** A waiting call, in a list in call order (a list: most traces hold one, and an array costs more). */
interface Deferred {
  readonly raw: RawToolCall;
  readonly batchComplete: boolean;
  next: Deferred | undefined;
}

function textLength(v: unknown): number | undefined {
  if (v === undefined) return 0;
  return typeof v === 'string' ? v.length : undefined;
}

/**
 * The engine for one trace, with the work for each tool's first call put off until it matters
 * (bench: realistic mix, 17 %).
 *
 * While every call of a trace went to a different tool, no rule can fire: each needs two calls of
 * one tool (and a cycle, a repeated step), provided no threshold is below 2. So those calls wait
 * as they are: tool name, times and references to their argument and result strings (immutable,
 * and held by the span until export anyway). The first time a tool name comes back, the waiting
 * calls are fingerprinted and recorded in their order, then the new one, and the trace is
 * evaluated eagerly from then on. The engine sees exactly the sequence it would have seen, so the
 * detections are the same; most traces never call a tool twice and never pay for a fingerprint
 * or a call history at all.
 *
 * Structured (object) values are not held, since an app could change them after the span ended;
 * they make the trace eager, as do calls beyond `MAX_DEFERRED_CHARS` of held text.
 */
export class DeferredTrace {
  private detector: TraceDetector | undefined;
  private first: Deferred | undefined;
  private last: Deferred | undefined;
  private waitingCalls = 0;
  private waitingChars = 0;

  constructor(
    private readonly engine: LoopEngine,
    readonly traceId: string,
    private readonly onProblem?: ProblemReporter,
    private readonly onNote?: NoteReporter,
  ) {}

  /** Calls waiting to be fingerprinted (0 once the trace is evaluated eagerly). */
  get deferred(): number {
    return this.waitingCalls;
  }

  /** Characters of argument and result text held for waiting calls. */
  get heldChars(): number {
    return this.waitingChars;
  }

  record(raw: RawToolCall, batchComplete: boolean): LoopDetection[] {
    let detector = this.detector;
    let early: LoopDetection[] | undefined;
    if (detector === undefined) {
      if (this.wait(raw, batchComplete)) return NONE;
      detector = this.engine.createTrace(this.traceId);
      this.detector = detector;
      early = this.replayWaiting(detector);
    }
    const found = detector.record(buildToolCall(this.engine, raw, this.onProblem, this.onNote), batchComplete);
    return early !== undefined && early.length > 0 ? [...early, ...found] : found;
  }

  /** Holds the call if nothing can be found yet; false when the trace must be evaluated now. */
  private wait(raw: RawToolCall, batchComplete: boolean): boolean {
    const args = textLength(raw.arguments);
    const result = textLength(raw.error ? undefined : raw.result);
    if (args === undefined || result === undefined) return false;
    if (this.engine.policies.get(raw.toolName).minCallThreshold < 2) return false;
    if (this.waitingCalls >= MAX_DEFERRED_CALLS || this.waitingChars + args + result > MAX_DEFERRED_CHARS) return false;
    for (let w = this.first; w !== undefined; w = w.next) if (w.raw.toolName === raw.toolName) return false;
    const call: Deferred = { raw, batchComplete, next: undefined };
    if (this.last === undefined) this.first = call;
    else this.last.next = call;
    this.last = call;
    this.waitingCalls++;
    this.waitingChars += args + result;
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
    this.waitingChars = 0;
    let early: LoopDetection[] | undefined;
    for (let w = first; w !== undefined; w = w.next) {
      const found = detector.record(buildToolCall(this.engine, w.raw, this.onProblem, this.onNote), w.batchComplete);
      if (found.length > 0) (early ??= []).push(...found);
    }
    return early;
  }
}
