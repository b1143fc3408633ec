import type { LoopDetection } from '../detector/types.js';
import type { ToolAnnotations } from './tool-result.js';

export interface CheckOptions {
  /** Calls sharing this key are one parallel step; by default calls overlapping in time are. */
  readonly batch?: string;
  /**
   * What the tool's provider declares about it (MCP `Tool.annotations`). A call that ran after a
   * declared change of state (a successful call to a tool declared not read-only) is not judged
   * by its previous outcome before it runs, since that outcome may have changed; it is judged once it ran.
   */
  readonly annotations?: ToolAnnotations;
}

export interface RunOptions extends CheckOptions {
  /** Cancels a backoff delay (the call then never runs). */
  readonly signal?: AbortSignal;
}

/**
 * The guard lets the call run: run it (after `delayMs`), then report how it went with exactly one
 * of `succeeded`, `failed` or `cancelled` (later calls are no-ops). A call never reported keeps
 * its parallel step open, so report every one (`run` and the wrappers do).
 */
export interface ProceedingCall {
  readonly action: 'proceed';
  /** Wait this long first: backoff after a transient failure of the same call (0 otherwise). */
  readonly delayMs: number;
  /** The loop the call continues, when the guard lets it run anyway (`abort` mode warning, `observe`, a retry). */
  readonly detection: LoopDetection | undefined;
  succeeded(result: unknown): void;
  failed(error: unknown): void;
  /** The call will not run after all (cancelled during the delay): frees its slot, records nothing. */
  cancelled(): void;
}

/** The guard answered the call itself: return `hint` as its result and do not run it. */
export interface HintedCall<H> {
  readonly action: 'hint';
  readonly hint: H;
  readonly detection: LoopDetection;
}

export type GuardedCall<H> = ProceedingCall | HintedCall<H>;

/**
 * What the dispatcher wrappers (`guardAiSdkTools`, `guardDispatcher`) use of a guard:
 * `ToolLoopGuard` is one. They depend on this, not on the guard's class, which offers them as
 * its `wrapTools` / `wrapDispatcher` methods.
 */
export interface CallGuard<H> {
  /** Aborted when the guard stops the run. */
  readonly signal: AbortSignal;
  /** A new conversation: forget everything. */
  reset(): void;
  /** The user said `text` (see `ToolLoopGuard.userMessage`). */
  userMessage(text: string): void;
  check(toolName: string, args: unknown, options?: CheckOptions): GuardedCall<H>;
  run<R>(toolName: string, args: unknown, execute: () => R | PromiseLike<R>, options?: RunOptions): Promise<Awaited<R> | H>;
}
