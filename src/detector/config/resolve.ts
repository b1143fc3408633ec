import { RULE_KEYS } from '../rules.js';
import { resolveThresholds } from '../thresholds.js';
import {
  DEFAULT_EVIDENCE_THRESHOLDS,
  DEFAULT_GAP_BUDGET,
  DEFAULT_HISTORY_SIZE,
  DEFAULT_MAX_PERIOD,
  DEFAULT_MODE,
  DEFAULT_POLLER_PATTERNS,
  DEFAULT_WRITER_PATTERNS,
  DEFAULT_WRITER_THRESHOLDS,
  DEFAULT_POLLER_THRESHOLDS,
  DEFAULT_SPACING,
  DEFAULT_THRESHOLDS,
  DEFAULT_WAIT_PATTERNS,
  DEFAULT_WAIT_THRESHOLDS,
} from './defaults.js';
import type { LoopwatchConfig, ResolvedConfig, ResolvedRole, RoleInput, RuleThresholds, RuleThresholdsInput } from './types.js';
import { ConfigError, validateConfig } from './validate.js';
import { compileToolGlob } from '../tool-glob.js';

/** Every rule's thresholds in `base`, overridden by those `input` gives. */
export function applyRuleThresholds(base: RuleThresholds, input: RuleThresholdsInput | undefined): RuleThresholds {
  if (!input) return base;
  const out = { ...base };
  for (const key of RULE_KEYS) out[key] = resolveThresholds(base[key], input[key]);
  return out;
}

function mergeRuleInputs(base: RuleThresholdsInput, over: RuleThresholdsInput | undefined): RuleThresholdsInput {
  if (!over) return base;
  const out: Record<string, unknown> = { ...base };
  for (const key of RULE_KEYS) {
    const o = over[key];
    if (o) out[key] = { ...base[key], ...o };
  }
  return out as RuleThresholdsInput;
}

function compilePatterns(list: ReadonlyArray<string | RegExp>): RegExp[] {
  return list.map((p) => (typeof p === 'string' ? new RegExp(p, 'i') : p));
}

/** A validated configuration with every default filled in; throws `ConfigError` listing every problem. */
export function resolveConfig(config: LoopwatchConfig = {}): ResolvedConfig {
  const issues = validateConfig(config);
  if (issues.length > 0) throw new ConfigError(issues);
  const role = (input: RoleInput | undefined, patterns: readonly string[], defaults: RuleThresholdsInput): ResolvedRole => ({
    match: compilePatterns(input?.match ?? patterns),
    thresholds: mergeRuleInputs(defaults, input?.thresholds),
  });
  return {
    resolved: true,
    mode: config.mode ?? DEFAULT_MODE,
    thresholds: applyRuleThresholds(DEFAULT_THRESHOLDS, config.thresholds),
    evidence: {
      argumentsOnly: resolveThresholds(DEFAULT_EVIDENCE_THRESHOLDS.argumentsOnly, config.evidence?.argumentsOnly),
      nameOnly: resolveThresholds(DEFAULT_EVIDENCE_THRESHOLDS.nameOnly, config.evidence?.nameOnly),
    },
    maxPeriod: config.cycle?.maxPeriod ?? DEFAULT_MAX_PERIOD,
    spacing: { idleMs: config.spacing?.idleMs ?? DEFAULT_SPACING.idleMs, weight: config.spacing?.weight ?? DEFAULT_SPACING.weight },
    gapBudget: config.gapBudget ?? DEFAULT_GAP_BUDGET,
    historySize: config.historySize ?? DEFAULT_HISTORY_SIZE,
    roles: {
      poller: role(config.roles?.poller, DEFAULT_POLLER_PATTERNS, DEFAULT_POLLER_THRESHOLDS),
      wait: role(config.roles?.wait, DEFAULT_WAIT_PATTERNS, DEFAULT_WAIT_THRESHOLDS),
      writer: role(config.roles?.writer, DEFAULT_WRITER_PATTERNS, DEFAULT_WRITER_THRESHOLDS),
      exempt: role(config.roles?.exempt, [], {}),
    },
    tools: Object.entries(config.tools ?? {}).map(([pattern, override]) => ({
      pattern,
      matcher: compileToolGlob(pattern),
      override,
    })),
    volatileKeys: {
      arguments: [...(config.volatileKeys?.arguments ?? [])],
      result: [...(config.volatileKeys?.result ?? [])],
    },
    knownTools: config.knownTools ? new Set(config.knownTools) : undefined,
  };
}
