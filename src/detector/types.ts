import type { Hash } from '../fingerprint/hash.js';

/** Families of loops. Dashboards and alerts group by these strings. */
export type LoopKind = 'repeat' | 'no_progress' | 'cycle' | 'error_pattern' | 'unknown_tool';

/** `warning` is the first intervention (hint, event), `critical` means stop the run. */
export type LoopLevel = 'warning' | 'critical';

/** The rule that produced a detection: a finer split of `kind`, for messages and tuning. */
export type RuleName =
  | 'identical_calls'
  | 'changing_output'
  | 'same_result'
  | 'cycle'
  | 'repeated_failure'
  | 'error_class'
  | 'unknown_tool';

/**
 * How much of the call the instrumentation captured. Arguments and results are opt-in content in
 * the gen_ai conventions; without them loopwatch still works on tool names and outcomes, with
 * higher thresholds, and every detection says which evidence it rests on.
 */
export type Evidence = 'arguments+result' | 'arguments' | 'result' | 'name';

/** `enforce`: critical detections stop the run. `observe`: report what would fire, never abort. */
export type Mode = 'enforce' | 'observe';

/** What happened when the tool ran, reduced to hashes: raw results never enter the engine. */
export type ToolOutcome =
  | {
      readonly ok: true;
      /** Fingerprint of the result; absent when the result was not captured. */
      readonly resultHash?: Hash;
      /** The result carries information beyond status words and volatile values. */
      readonly informative: boolean;
    }
  | {
      readonly ok: false;
      /** Fingerprint of the error class (`error.type`, exception type or normalised message). */
      readonly errorClass: Hash;
      /** A short class name safe to print (`TimeoutError`), never a raw message. */
      readonly errorLabel?: string;
      /** The agent called a tool that does not exist. */
      readonly unknownTool: boolean;
    };

/** One tool execution, as the engine sees it. */
export interface ToolCall {
  readonly toolName: string;
  /** Fingerprint of the arguments; absent when they were not captured. */
  readonly argsHash?: Hash;
  readonly outcome: ToolOutcome;
  /** Epoch milliseconds. */
  readonly startTime: number;
  readonly endTime: number;
  /** Calls made in parallel in one agent step share a batch key; a sequential call has its own. */
  readonly batch: string;
  /** 1-based index of the call in its trace, by start time. */
  readonly callIndex: number;
  readonly spanId?: string;
  readonly promptName?: string;
  readonly agentName?: string;
}

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
