/**
 * The engine's configuration: what can be set (`config/types.ts`), the defaults
 * (`config/defaults.ts`, and each rule's own in `rules.ts`), validation with a path for every
 * problem (`config/validate.ts`) and resolution into the form the engine reads (`config/resolve.ts`).
 */
export type {
  LoopwatchConfig,
  ModelPriceInput,
  ResolvedConfig,
  ResolvedRole,
  ResolvedToolOverride,
  RoleInput,
  RuleThresholds,
  RuleThresholdsInput,
  ToolOverride,
  ToolRole,
  VolatileKeysInput,
} from './types.js';
export { TOOL_ROLES } from './types.js';
export type { ThresholdInput, Thresholds } from '../thresholds.js';
export { resolveThresholds } from '../thresholds.js';
export { RULE_KEYS, type RuleKey } from '../rules.js';
export {
  DEFAULT_MODE,
  DEFAULT_THRESHOLDS,
  DEFAULT_POLLER_THRESHOLDS,
  DEFAULT_WAIT_THRESHOLDS,
  DEFAULT_POLLER_PATTERNS,
  DEFAULT_WAIT_PATTERNS,
  DEFAULT_WRITER_PATTERNS,
  DEFAULT_WRITER_THRESHOLDS,
} from './defaults.js';
export { ConfigError, formatPath, validateConfig, type ConfigIssue } from './validate.js';
export {
  CONFIG_KEYS,
  CYCLE_KEYS,
  EVIDENCE_KEYS,
  MODES,
  NUMBER_LIMITS,
  PRICE_KEYS,
  ROLE_KEYS,
  ROLE_NAMES,
  SPACING_KEYS,
  THRESHOLD_KEYS,
  TOOL_OVERRIDE_KEYS,
  VOLATILE_KEYS_KEYS,
  type NumberLimits,
} from './validate.js';
export { applyRuleThresholds, resolveConfig } from './resolve.js';
