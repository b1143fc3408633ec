import type { SpanView } from '../conventions/types.js';
import type { LoopSpend } from '../cost/trace-cost.js';
import type { LoopDetection } from '../detector/types.js';

/**
 * A finished span as the trace replayer reads it, whatever it came from: an OTLP/JSON file
 * (`loopwatch scan`) or an OTLP request (`loopwatch serve`).
 */
export interface ReplaySpan extends SpanView {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  /**
   * The parent lives in another process (OTLP span flags, bits 8 and 9): the span is this
   * process's local root. Undefined when the sender does not say.
   */
  readonly parentIsRemote?: boolean | undefined;
  /** Epoch milliseconds. */
  readonly startTime: number;
  readonly endTime: number;
  /** `service.name` of the resource, when present. */
  readonly service: string | undefined;
}

/** One tool call of a finished trace: name, order, timing and outcome, never arguments or results. */
export interface ReplayedCall {
  readonly toolName: string;
  /** 1-based, by start time (as `LoopDetection.callIndex`). */
  readonly callIndex: number;
  /** Epoch milliseconds. */
  readonly startTime: number;
  readonly endTime: number;
  readonly ok: boolean;
  readonly spanId: string;
  /** Prompt template name of the call (its own, an ancestor's, or the trace's last), when known. */
  readonly promptName: string | undefined;
}

/** A finished trace and what the engine found in it. */
export interface ReplayedTrace<P = unknown> {
  readonly traceId: string;
  readonly toolCalls: number;
  readonly detections: readonly LoopDetection[];
  /** When each detection happened: the end (epoch ms) of the call that completed it, in `detections` order. */
  readonly detectionTimes: readonly number[];
  /** The trace's tool calls by start time. */
  readonly calls: readonly ReplayedCall[];
  readonly promptName: string | undefined;
  /** Start of the first tool call (epoch ms); NaN without tool calls. */
  readonly startTime: number;
  /** The payloads handed to `add` with this trace's spans, in arrival order. */
  readonly payloads: readonly P[];
  /**
   * What the trace's loops cost (see `LoopSpend`): with a detection and model calls that report
   * usage. For a continued trace, the whole trace's loop spend, not only what is new.
   */
  readonly loopSpend?: LoopSpend | undefined;
  /** For a continued trace: the loop spend reported when it was completed before (what counters have counted already). */
  readonly previousLoopSpend?: LoopSpend | undefined;
  /**
   * Prompt template of the trace's first detection (an earlier completion's, for a continued
   * trace): where its loop spend is counted.
   */
  readonly loopPrompt?: string | undefined;
  /**
   * This trace had been completed before and these are its late spans: `calls`, `toolCalls` and
   * `detections` cover only what is new (the earlier calls still count for the engine).
   */
  readonly continued: boolean;
}

/**
 * Why a trace was completed: it may help to tell a finished trace from one cut by a bound.
 * `bound`: completed early to make room (open traces, held spans or bytes); `cut`: the trace
 * alone outgrew `maxTraceBytes`, and its later spans continue it.
 */
export type CompletionReason = 'root' | 'quiet' | 'linger' | 'bound' | 'cut' | 'finish';
