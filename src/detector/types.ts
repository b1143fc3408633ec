import type { Hash } from '../fingerprint/hash.js';
import type { Evidence } from './call-rules.js';
import type { RawError } from './error-class.js';
import type { LoopKind, RuleName } from './rules.js';

export type { Evidence } from './call-rules.js';
export type { LoopKind, RuleName } from './rules.js';

/** `warning` is the first intervention (hint, event), `critical` means stop the run. */
export type LoopLevel = 'warning' | 'critical';

/** `enforce`: critical detections stop the run. `observe`: report what would fire, never abort. */
export type Mode = 'enforce' | 'observe';

/** What happened when the tool ran, reduced to hashes: raw results never enter the engine. */
export type ToolOutcome =
  | {
      readonly ok: true;
      /**
       * Fingerprint of the result, with the call's targets (`Fingerprint.targets`: the ids, paths
       * and keys its arguments name) as part of it; absent when the result was not captured.
       */
      readonly resultHash?: Hash;
      /** The result carries information beyond status words and volatile values. */
      readonly informative: boolean;
      /** The result says the call failed (`{"error": "..."}`, `Fingerprint.saysError`), though the call did not fail. */
      readonly saysError?: boolean;
    }
  | {
      readonly ok: false;
      /** Fingerprint of the error class (`error.type`, exception type or normalised message). */
      readonly errorClass: Hash;
      /**
       * Fingerprint of what the failure said: its class, message and output (a failing command's
       * output is what the agent learns from), volatile values removed and everything else kept,
       * numbers included: `2 failed` and `1 failed` are two outcomes of one class.
       */
      readonly failureHash: Hash;
      /** A short class name safe to print (`TimeoutError`), never a raw message. */
      readonly errorLabel?: string;
      /** The agent called a tool that does not exist. */
      readonly unknownTool: boolean;
    };

/**
 * The shapes of a tool call, from the span to the engine:
 * - `ToolCallContent`: what the call was asked and what came of it, raw (an adapter's
 *   `ToolCallFields` adds the call id it read);
 * - `CallPlacement`: where and when it happened in its trace;
 * - `RawToolCall` = content + placement: a call as read from a span, a file or a dispatcher;
 * - `ToolCall` = placement + hashes: the call as the engine sees it (raw content never enters it);
 * - `RecordedCall`: what the engine remembers of a call, for the dispatcher guard.
 */

/** What a call was asked and what came of it, raw. */
export interface ToolCallContent {
  readonly toolName: string;
  /** Raw arguments (object or JSON string); absent when the instrumentation did not capture them. */
  readonly arguments?: unknown;
  /** Raw result; absent when not captured. When the call failed, its output (part of the failure's content). */
  readonly result?: unknown;
  /** Present when the call failed. */
  readonly error?: RawError | undefined;
}

/** Where and when a call happened in its trace. */
export interface CallPlacement {
  /** Epoch milliseconds. */
  readonly startTime: number;
  readonly endTime: number;
  /** Calls made in parallel in one agent step share a batch key; a sequential call has its own. */
  readonly batch: string;
  /** 1-based index of the call in its trace, by start time. */
  readonly callIndex: number;
  readonly spanId?: string | undefined;
  readonly promptName?: string | undefined;
  readonly agentName?: string | undefined;
}

/** A tool call with its raw content, as read from a span, a file or a dispatcher. */
export interface RawToolCall extends ToolCallContent, CallPlacement {}

/** One tool execution, as the engine sees it. */
export interface ToolCall extends CallPlacement {
  readonly toolName: string;
  /** Fingerprint of the arguments; absent when they were not captured. */
  readonly argsHash?: Hash | undefined;
  /**
   * The action a generic tool was asked to run (`Fingerprint.action`: `execute_tool` with a
   * `tool_name`, an editor's `command`); absent when the arguments name none.
   */
  readonly actionHash?: Hash | undefined;
  /** The words of the arguments (`Fingerprint.wording`), for telling a rewording from new content; absent when they have none. */
  readonly wording?: number | undefined;
  /** How long the arguments' wording is (`Fingerprint.wordingLength`); absent when they have none. */
  readonly wordingLength?: number | undefined;
  readonly outcome: ToolOutcome;
}

/**
 * A call the engine remembers, as hashes (see `TraceDetector.recentCalls`). Its outcome is rebuilt
 * from the packed history: an error's printable label is not kept.
 */
export type RecordedCall = Pick<ToolCall, 'toolName' | 'argsHash' | 'outcome' | 'startTime' | 'endTime'>;

/** A loop found in one trace: the contract shared by span events, callbacks, the CLI and the guard. */
export interface LoopDetection {
  readonly kind: LoopKind;
  readonly level: LoopLevel;
  readonly toolName: string;
  /** Repetitions behind the evidence: calls, cycle laps or failures. */
  readonly count: number;
  /** 1-based index (by start time) of the call that completed the evidence. */
  readonly callIndex: number;
  readonly traceId: string;
  readonly spanId: string;
  /** Short hex of the repeated signature; never raw arguments or results. */
  readonly fingerprint: string;
  readonly promptName?: string;
  readonly agentName?: string;
  /** One sentence a person (or a model, as a hint) can act on. */
  readonly message: string;
  readonly rule: RuleName;
  /** The threshold this detection reached (same unit as `count`). */
  readonly threshold: number;
  readonly evidence: Evidence;
  /** Period of the cycle, for `kind === 'cycle'`. */
  readonly cycleLength?: number;
  /** Tools of the cycle in order, for `kind === 'cycle'`. */
  readonly cycleTools?: readonly string[];
  readonly mode: Mode;
  /**
   * End (epoch ms) of the first call of the evidence: the repetitions began after it. For a
   * cycle, the first call of the run's first step.
   */
  readonly evidenceStartTime: number;
  /**
   * Tool calls from the first call of the evidence to the one that completed it, both included,
   * in the order they ended (other calls in between count too).
   */
  readonly evidenceCalls: number;
  /**
   * What the model spent asking for the repetitions: the summed usage of the trace's model-call
   * spans that started after the end of the first call of the evidence and ended before the end
   * of the call that completed it. Absent when no usage is known (see `src/conventions/usage.ts`).
   */
  readonly tokens?: { readonly input: number; readonly output: number };
  /** Those tokens in USD, when the configuration's `prices` cover every one of those model calls. */
  readonly costUsd?: number;
  /**
   * A short, redacted preview of the call's arguments: only from the span processor, and only
   * with its `argumentPreview` option on (off by default).
   */
  readonly argumentsPreview?: string;
}
