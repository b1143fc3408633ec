import { ruleNamed, type HistoryFacts } from '../detector/rules.js';
import type { LoopDetection, LoopKind, LoopLevel, RuleName } from '../detector/types.js';
import type { StopScope } from './options.js';

export const LOOP_HINT_TYPE = 'loopwatch.hint';

/**
 * The synthetic result the guard returns instead of running a looping call. The model reads it
 * (JSON or, through a tool's `toModelOutput`, text); callers tell it from a real result with
 * `isLoopHint`. It names the tool and counts, never arguments or results.
 */
export interface LoopHint {
  readonly type: typeof LOOP_HINT_TYPE;
  readonly message: string;
  readonly toolName: string;
  readonly kind: LoopKind;
  readonly level: LoopLevel;
  /** Repetitions behind the hint, this attempt included. */
  readonly count: number;
}

export function isLoopHint(value: unknown): value is LoopHint {
  try {
    if (typeof value !== 'object' || value === null) return false;
    const v = value as { type?: unknown; message?: unknown };
    return v.type === LOOP_HINT_TYPE && typeof v.message === 'string';
  } catch {
    return false; // a hostile proxy is not a hint
  }
}

/** Facts the guard's sentences use: names and counts only (the sentences are the rule's: see `RULES`). */
export interface GuardFacts extends HistoryFacts {
  readonly rule: RuleName;
}

/** What already happened, as one clause. */
export function loopSummary(f: GuardFacts): string {
  return ruleNamed(f.rule).summary(f);
}

/** The text the model reads instead of a result; `scope`: what the stop it warns of refuses. */
export function hintText(f: GuardFacts, finalWarning: boolean, scope: StopScope = 'run'): string {
  const summary = loopSummary(f);
  const stop = scope === 'run' ? 'the run will be stopped' : 'it will be refused for the rest of this run';
  const consequence = finalWarning ? ` If you make this call again, ${stop}.` : '';
  return `[loopwatch] This call was not run: ${summary}. ${ruleNamed(f.rule).advice}${consequence}`;
}

/**
 * The text the model reads when a call is refused because its loop was stopped (where the run
 * cannot be aborted and the model goes on): what happened, and what to tell the user.
 */
export function refusalText(detection: LoopDetection): string {
  return (
    `[loopwatch] This call was refused and not run: ${detection.message}. ` +
    `This call and the calls that continue its loop are refused for the rest of this run. ` +
    `Do not retry it: tell the user what you were trying to do, what you found so far, and that loopwatch stopped a tool-call loop.`
  );
}

/** The detection message for events, callbacks and `ToolLoopError`. */
export function decisionMessage(f: GuardFacts, action: 'hinted' | 'blocked' | 'ran'): string {
  const what =
    action === 'hinted'
      ? 'the next attempt got a hint instead of running'
      : action === 'blocked'
        ? 'the next attempt was stopped before it ran'
        : 'the next attempt ran anyway';
  return `${loopSummary(f)}; ${what}`;
}
