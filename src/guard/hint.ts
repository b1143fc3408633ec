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

/** Facts the guard's sentences use: names and counts only. */
export interface GuardFacts {
  readonly rule: RuleName;
  readonly toolName: string;
  /** Repetitions that really happened before this attempt (calls, failures or laps). */
  readonly before: number;
  readonly cycleTools?: readonly string[];
  /** The result was captured, so "the same result" can be said. */
  readonly sameResultKnown: boolean;
}

const times = (n: number): string => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`);

/** What already happened, as one clause. */
export function loopSummary(f: GuardFacts): string {
  const tool = `'${f.toolName}'`;
  switch (f.rule) {
    case 'identical_calls':
      return f.sameResultKnown
        ? `${tool} already ran ${times(f.before)} with these exact arguments and returned the same result each time`
        : `${tool} already ran ${times(f.before)} with these exact arguments`;
    case 'changing_output':
      return `${tool} already ran ${times(f.before)} with these exact arguments; its output keeps changing but nothing moves forward`;
    case 'same_result':
      return `${tool} already returned the same result to ${f.before} calls with different arguments`;
    case 'repeated_failure':
      return `${tool} already failed ${times(f.before)} with these exact arguments`;
    case 'error_class':
      return `${tool} already failed ${times(f.before)} with the same error`;
    case 'unknown_tool':
      return `${tool} is not an available tool (tried ${times(f.before)} already)`;
    case 'cycle': {
      const path = (f.cycleTools ?? []).map((t) => `'${t}'`).join(' → ');
      return `the same ${f.cycleTools?.length ?? 0} steps (${path}) already repeated ${times(f.before)} with the same results`;
    }
  }
}

function advice(rule: RuleName): string {
  switch (rule) {
    case 'repeated_failure':
    case 'error_class':
      return 'Retrying it unchanged will fail again: change the arguments, use another tool, or report the failure to the user.';
    case 'unknown_tool':
      return 'Use only the tools you were given.';
    case 'cycle':
      return 'Step back and try a different approach, or tell the user what is blocking you.';
    default:
      return 'Running it again will not give you anything new: use the results you already have, try different arguments or another tool, or tell the user what is blocking you.';
  }
}

/** The text the model reads instead of a result. */
export function hintText(f: GuardFacts, finalWarning: boolean): string {
  const summary = loopSummary(f);
  const consequence = finalWarning ? ' If you make this call again, the run will be stopped.' : '';
  return `[loopwatch] This call was not run: ${summary}. ${advice(f.rule)}${consequence}`;
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
