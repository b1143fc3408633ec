import type { LoopDetection } from '../detector/types.js';

/**
 * What the guard did about a loop:
 * - `hinted`: the call did not run; the model got a hint as its result.
 * - `blocked`: the call did not run; a `ToolLoopError` was thrown and the run is stopped.
 * - `delayed`: the call ran after a backoff delay (a retry after a transient failure).
 * - `allowed`: the call ran anyway (`abort` mode below critical, or `observe` mode).
 * - `stopped`: the call had already run when its outcome completed a critical loop; it keeps its
 *   real result and the run is stopped from the next call on.
 */
export type GuardOutcome = 'hinted' | 'blocked' | 'delayed' | 'allowed' | 'stopped';

export interface GuardEvent {
  readonly action: GuardOutcome;
  /** `before`: decided before the call ran (from its expected outcome); `after`: found once it ran. */
  readonly phase: 'before' | 'after';
  readonly detection: LoopDetection;
  /** In `observe` mode: what enforcement would have done. */
  readonly wouldBe?: 'hinted' | 'blocked';
  readonly delayMs?: number;
  /** Interventions (hints and blocks) on this loop so far, this one included. */
  readonly strike: number;
  /** A refusal because the run was already stopped, not a new detection. */
  readonly alreadyStopped?: boolean;
}

/** One call the guard saw, for `recentCalls()`: fingerprints only, never raw arguments or results. */
export interface GuardedCallRecord {
  /** 1-based attempt number in the current turn. */
  readonly index: number;
  readonly toolName: string;
  /** Short hex of the arguments' fingerprint; absent when there were none. */
  readonly argsFingerprint?: string;
  /** `running` until an executed call reports back. */
  readonly status: 'running' | 'ok' | 'error' | 'hinted' | 'blocked';
  /** For failures: the guard judged the error transient. */
  readonly transient?: boolean;
  readonly delayMs?: number;
  /** The loop behind a hint, a block or a delay. */
  readonly detection?: LoopDetection;
  readonly startTime: number;
  readonly endTime?: number;
}
