import { ConfigError, validateConfig, type ConfigIssue, type LoopwatchConfig } from '../detector/config/index.js';
import type { LoopEngine } from '../detector/engine.js';
import type { LoopDetection } from '../detector/types.js';
import type { GuardEvent } from './events.js';

/**
 * What the guard does when a call would continue a loop:
 * - `graduated` (default): a hint the model can read first; if the model makes the call again
 *   (or the evidence is critical) the run is stopped with a `ToolLoopError`.
 * - `hint`: hints only, up to `maxHints` per loop; a model that ignores that many hints is
 *   stopped anyway (a hint without a real stop behind it is a soft limit models walk through).
 * - `abort`: no hint; warnings are reported and the call runs; a critical loop is stopped.
 */
export type GuardAction = 'graduated' | 'hint' | 'abort';

/**
 * What a stop refuses afterwards (enforce mode):
 * - `run` (default): every later call of the turn (`ToolLoopError`); the run is over.
 * - `loop`: only the stopped loop, i.e. the refused call again and any call that continues the
 *   loop; other work goes on. For a client the guard cannot abort, such as an MCP client behind
 *   `loopwatch mcp`: the model keeps its other tools and can tell the user what happened.
 */
export type StopScope = 'run' | 'loop';

export interface BackoffOptions {
  /** Delay before the first retry of a call that just failed with a transient error (default 1000 ms). */
  readonly baseMs?: number;
  /** Growth per further consecutive failure of the same call (default 2). */
  readonly factor?: number;
  /** Upper bound of one delay (default 30 000 ms). */
  readonly maxMs?: number;
  /** Randomise each delay between half and all of it, so parallel agents do not retry in step (default false). */
  readonly jitter?: boolean;
}

/** What a custom hint builder gets: facts, plus the raw arguments (in process only; echo them at your own risk). */
export interface HintContext {
  readonly toolName: string;
  readonly arguments: unknown;
  readonly detection: LoopDetection;
  /** The default hint text (names the tool and counts, never arguments). */
  readonly message: string;
  /** The next repeat of this loop will be stopped. */
  readonly finalWarning: boolean;
}

export interface ToolLoopGuardOptions<H> extends LoopwatchConfig {
  /**
   * Share an engine (and so its configuration) with a `LoopDetectionSpanProcessor`:
   * `engine: processor.engine`. Configuration keys are not allowed together with it.
   */
  readonly engine?: LoopEngine;
  readonly action?: GuardAction;
  /** `hint` mode: hints per loop before the run is stopped (default 3). */
  readonly maxHints?: number;
  /** What a stop refuses afterwards (default `run`). */
  readonly stopScope?: StopScope;
  /** Wait before re-running a call whose last attempt failed with a transient error. Off by default. */
  readonly backoff?: boolean | BackoffOptions;
  /** Decides whether a tool's error is transient (default: `isTransientError`). */
  readonly isTransient?: (error: unknown) => boolean;
  /** Builds the synthetic result returned instead of running a looping call (default: a `LoopHint`). */
  readonly hint?: (context: HintContext) => H;
  /** Every decision the guard takes about a loop. Exceptions and rejections are contained. */
  readonly onDecision?: (event: GuardEvent) => void | Promise<void>;
  /** Reported as `traceId` when no span is active (default: empty). */
  readonly id?: string;
  /** Clock in epoch milliseconds (tests). */
  readonly now?: () => number;
}

export interface ResolvedBackoff {
  readonly baseMs: number;
  readonly factor: number;
  readonly maxMs: number;
  readonly jitter: boolean;
}

/** The guard's own keys (the rest is engine configuration), checked against `ToolLoopGuardOptions` by the compiler. */
const GUARD_KEY_SET = {
  engine: true,
  action: true,
  maxHints: true,
  stopScope: true,
  backoff: true,
  isTransient: true,
  hint: true,
  onDecision: true,
  id: true,
  now: true,
} as const satisfies Record<Exclude<keyof ToolLoopGuardOptions<unknown>, keyof LoopwatchConfig>, true>;
const GUARD_KEYS: ReadonlySet<string> = new Set(Object.keys(GUARD_KEY_SET));
const ACTIONS: readonly GuardAction[] = ['graduated', 'hint', 'abort'];
const STOP_SCOPES: readonly StopScope[] = ['run', 'loop'];

/** Splits guard options from engine configuration and validates both (at setup, never inside a call). */
export function splitGuardOptions(options: ToolLoopGuardOptions<unknown>): { config: LoopwatchConfig | undefined; backoff: ResolvedBackoff | undefined } {
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) if (!GUARD_KEYS.has(k) && v !== undefined) config[k] = v;
  const issues: ConfigIssue[] = [];
  const hasConfig = Object.keys(config).length > 0;
  if (options.engine && hasConfig) {
    issues.push({ path: ['engine'], message: `configure the shared engine, not the guard (also given: ${Object.keys(config).join(', ')})` });
  }
  if (options.action !== undefined && !ACTIONS.includes(options.action)) {
    issues.push({ path: ['action'], message: `expected one of ${ACTIONS.join(', ')}, got ${String(options.action)}` });
  }
  if (options.stopScope !== undefined && !STOP_SCOPES.includes(options.stopScope)) {
    issues.push({ path: ['stopScope'], message: `expected one of ${STOP_SCOPES.join(', ')}, got ${String(options.stopScope)}` });
  }
  const maxHints = options.maxHints;
  if (maxHints !== undefined && (typeof maxHints !== 'number' || !Number.isInteger(maxHints) || maxHints < 1)) {
    issues.push({ path: ['maxHints'], message: `expected a whole number of at least 1, got ${String(maxHints)}` });
  }
  const backoff = resolveBackoff(options.backoff, issues);
  if (!options.engine) issues.push(...validateConfig(config));
  if (issues.length > 0) throw new ConfigError(issues);
  return { config: hasConfig || !options.engine ? (config as LoopwatchConfig) : undefined, backoff };
}

function resolveBackoff(input: boolean | BackoffOptions | undefined, issues: ConfigIssue[]): ResolvedBackoff | undefined {
  if (input === undefined || input === false) return undefined;
  const o: BackoffOptions = input === true ? {} : input;
  const num = (key: keyof BackoffOptions, fallback: number, min: number): number => {
    const v = o[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
      issues.push({ path: ['backoff', key], message: `expected a number of at least ${min}, got ${String(v)}` });
      return fallback;
    }
    return v;
  };
  const resolved = { baseMs: num('baseMs', 1000, 0), factor: num('factor', 2, 1), maxMs: num('maxMs', 30_000, 0), jitter: o.jitter === true };
  if (resolved.maxMs < resolved.baseMs) issues.push({ path: ['backoff', 'maxMs'], message: `must not be below baseMs (${resolved.baseMs})` });
  return resolved;
}
