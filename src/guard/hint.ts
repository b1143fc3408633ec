import { ruleNamed, type HistoryFacts } from '../detector/rules.js';
import type { LoopKind, LoopLevel, RuleName } from '../detector/types.js';

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

/** The text the model reads instead of a result. */
export function hintText(f: GuardFacts, finalWarning: boolean): string {
  const summary = loopSummary(f);
  const consequence = finalWarning ? ' If you make this call again, the run will be stopped.' : '';
  return `[loopwatch] This call was not run: ${summary}. ${ruleNamed(f.rule).advice}${consequence}`;
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
