import type { RuleKey } from '../rules.js';
import type { ThresholdInput, Thresholds } from '../thresholds.js';
import type { Mode } from '../types.js';
import type { ToolGlob } from '../tool-glob.js';

/** Thresholds per rule, by the rule's key (see `RULES`). */
export type RuleThresholdsInput = { readonly [K in RuleKey]?: ThresholdInput };

export type RuleThresholds = Readonly<Record<RuleKey, Thresholds>>;

/**
 * `poller`: expected to be called again and again (status checks, log tails): higher thresholds.
 * `wait`: sleeps and delays: invisible to the other rules, only a long run of them is flagged.
 * `writer`: named like a write (`update_*`, `transfer_*`, `*_append`): the same write answered
 * the same way three times back to back is stopped (`back_to_back`). `exempt`: never flagged.
 * `normal`: the defaults.
 */
export const TOOL_ROLES = ['normal', 'poller', 'wait', 'writer', 'exempt'] as const;
export type ToolRole = (typeof TOOL_ROLES)[number];

export interface VolatileKeysInput {
  readonly arguments?: readonly string[];
  readonly result?: readonly string[];
}

export interface ToolOverride {
  readonly role?: ToolRole;
  readonly thresholds?: RuleThresholdsInput;
  /** Extra member names ignored in this tool's arguments / results. */
  readonly volatileKeys?: VolatileKeysInput;
}

export interface RoleInput {
  /** Tool-name patterns (regular expressions) that give a tool this role. Replaces the default list. */
  readonly match?: ReadonlyArray<string | RegExp>;
  readonly thresholds?: RuleThresholdsInput;
}

/** A model's price in USD per million tokens (see `LoopwatchConfig.prices`). */
export interface ModelPriceInput {
  readonly input: number;
  readonly output: number;
  /** Input tokens read from the provider's prompt cache; default: `input`. */
  readonly cachedInput?: number;
}

export interface LoopwatchConfig {
  readonly mode?: Mode;
  readonly thresholds?: RuleThresholdsInput;
  /** Thresholds used when arguments or results are not captured (the stricter of these and the rule's). */
  readonly evidence?: {
    readonly argumentsOnly?: ThresholdInput;
    readonly nameOnly?: ThresholdInput;
  };
  readonly cycle?: { readonly maxPeriod?: number };
  /** Repetitions this far apart in time (idle gap) count for `weight` only: spaced-out polls. */
  readonly spacing?: { readonly idleMs?: number; readonly weight?: number };
  /** Calls with new arguments a streak survives (a loop with one unrelated call in it). */
  readonly gapBudget?: number;
  /** Tool calls remembered per trace. */
  readonly historySize?: number;
  readonly roles?: {
    readonly poller?: RoleInput;
    readonly wait?: RoleInput;
    readonly writer?: RoleInput;
    readonly exempt?: RoleInput;
  };
  /** Per-tool overrides; keys are tool names, `*` matches any run of characters. */
  readonly tools?: Readonly<Record<string, ToolOverride>>;
  /** Member names ignored everywhere, added to the built-in lists. */
  readonly volatileKeys?: VolatileKeysInput;
  /** When set, a call to any other tool name counts as a call to a tool that does not exist. */
  readonly knownTools?: readonly string[];
  /**
   * What model calls cost, to report loops in USD as well as tokens: keys are model names (the
   * model-call span's response or request model), `*` matches any run of characters; values are
   * USD per million tokens. No built-in list (prices change); without an entry, loops are
   * reported in tokens only. Not used by the engine: the processor, `scan` and `serve` read it.
   */
  readonly prices?: Readonly<Record<string, ModelPriceInput>>;
}

export interface ResolvedRole {
  readonly match: readonly RegExp[];
  readonly thresholds: RuleThresholdsInput;
}

export interface ResolvedToolOverride {
  readonly pattern: string;
  readonly matcher: ToolGlob | undefined;
  readonly override: ToolOverride;
}

export interface ResolvedConfig {
  /** Brand: this object came out of `resolveConfig` and is validated. */
  readonly resolved: true;
  readonly mode: Mode;
  readonly thresholds: RuleThresholds;
  readonly evidence: { readonly argumentsOnly: Thresholds; readonly nameOnly: Thresholds };
  readonly maxPeriod: number;
  readonly spacing: { readonly idleMs: number; readonly weight: number };
  readonly gapBudget: number;
  readonly historySize: number;
  readonly roles: { readonly poller: ResolvedRole; readonly wait: ResolvedRole; readonly writer: ResolvedRole; readonly exempt: ResolvedRole };
  readonly tools: readonly ResolvedToolOverride[];
  readonly volatileKeys: { readonly arguments: readonly string[]; readonly result: readonly string[] };
  readonly knownTools: ReadonlySet<string> | undefined;
}
