import { RULES, type RuleKey } from '../rules.js';
import type { Thresholds } from '../thresholds.js';
import type { RuleThresholds, RuleThresholdsInput } from './types.js';

/**
 * Defaults, and why: each rule's thresholds are with the rule (`RULES`, where the reasons are);
 * the rest is here. The README repeats them.
 */

function byKey<T>(pick: (rule: (typeof RULES)[number]) => T | undefined): Partial<Record<RuleKey, T>> {
  const out: Partial<Record<RuleKey, T>> = {};
  for (const rule of RULES) {
    const value = pick(rule);
    if (value !== undefined) out[rule.thresholdKey] = value;
  }
  return out;
}

export const DEFAULT_THRESHOLDS: RuleThresholds = byKey((r) => r.defaults) as RuleThresholds;

/** Pollers are meant to be called repeatedly: higher thresholds for the rules that count repeats. */
export const DEFAULT_POLLER_THRESHOLDS: RuleThresholdsInput = byKey((r) => r.poller);

/** Waits and sleeps: only the rules with wait thresholds run on them. */
export const DEFAULT_WAIT_THRESHOLDS: RuleThresholdsInput = byKey((r) => r.wait);

/** Writes: the rules' defaults, and the rules that judge a write resent (`back_to_back`). */
export const DEFAULT_WRITER_THRESHOLDS: RuleThresholdsInput = byKey((r) => r.writer);

/** Tool-name words, matched on the snake_case form of the name (`getJobStatus` → `get_job_status`). */
export const DEFAULT_POLLER_PATTERNS: readonly string[] = [
  '(^|_)(poll|polling|status|progress|tail|logs?|watch)(_|$)',
  '(^|_)(get|read|bash|process|command|job|task)_(result|results|output|outputs|log|logs)(_|$)',
  '(^|_)wait_(for|until)(_|$)',
  '(^|_)check_(job|run|task|build|deploy|deployment|status)(_|$)',
];

/**
 * A verb that changes something, as a word of the tool's name (`update_reservation_flights`,
 * `transfer_to_human_agents`, `memory_append`): a weak hint that the call writes, which tool names
 * are all an OpenTelemetry trace has (a read named like a write only gets stopped sooner when it
 * repeats back to back). Polls, waits and exemptions are matched first.
 */
export const DEFAULT_WRITER_PATTERNS: readonly string[] = [
  '(^|_)(create|add|append|insert|update|upsert|set|put|patch|edit|modify|replace|write|save|store|delete|remove|send|post|reply|transfer|book|cancel|submit|upload|push|commit|publish|assign|pay|charge|refund|reserve|exchange|return)(_|$)',
];

export const DEFAULT_WAIT_PATTERNS: readonly string[] = [
  '(^|_)(sleep|wait|delay|pause)(_(seconds?|secs?|ms|millis|minutes?))?$',
];

/** When arguments (results) are not captured. Tool names alone cannot tell a loop from a batch of edits: warn, never stop. */
export const DEFAULT_EVIDENCE_THRESHOLDS: { readonly argumentsOnly: Thresholds; readonly nameOnly: Thresholds } = {
  argumentsOnly: { warning: 4, critical: 6 },
  nameOnly: { warning: 10, critical: Number.POSITIVE_INFINITY },
};

export const DEFAULT_MODE = 'enforce';
export const DEFAULT_MAX_PERIOD = 6;
export const DEFAULT_SPACING = { idleMs: 30_000, weight: 0.5 } as const;
export const DEFAULT_GAP_BUDGET = 1;
export const DEFAULT_HISTORY_SIZE = 128;
