import { RULE_KEYS } from '../rules.js';
import type { Mode } from '../types.js';
import type { ThresholdInput } from '../thresholds.js';
import { TOOL_ROLES, type LoopwatchConfig, type ModelPriceInput, type RoleInput, type ToolOverride, type VolatileKeysInput } from './types.js';

/**
 * Validation: configuration arrives from YAML files and environment variables as well as code, so
 * every key is checked and every problem is reported with its path.
 */

/** One problem in a configuration, with the path of the key it is about. */
export interface ConfigIssue {
  readonly path: ReadonlyArray<string | number>;
  readonly message: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join('; '));
  }
}

export function formatPath(path: ReadonlyArray<string | number>): string {
  if (path.length === 0) return '(config)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The top-level keys, checked against `LoopwatchConfig` by the compiler (one entry per key). */
const CONFIG_KEY_SET = {
  mode: true,
  thresholds: true,
  evidence: true,
  cycle: true,
  spacing: true,
  gapBudget: true,
  historySize: true,
  roles: true,
  tools: true,
  volatileKeys: true,
  knownTools: true,
  prices: true,
} as const satisfies Record<keyof LoopwatchConfig, true>;
/*
 * The key lists and number limits are the one source of truth for the validator and for the JSON
 * Schema of loopwatch.yaml (scripts/config-schema.ts generates schema/loopwatch.schema.json from them).
 */
export const CONFIG_KEYS = Object.keys(CONFIG_KEY_SET) as readonly (keyof LoopwatchConfig)[];
export const MODES: readonly Mode[] = ['enforce', 'observe'];
export const THRESHOLD_KEYS = ['warning', 'critical'] as const satisfies readonly (keyof ThresholdInput)[];
export const EVIDENCE_KEYS = ['argumentsOnly', 'nameOnly'] as const satisfies readonly (keyof NonNullable<LoopwatchConfig['evidence']>)[];
export const CYCLE_KEYS = ['maxPeriod'] as const satisfies readonly (keyof NonNullable<LoopwatchConfig['cycle']>)[];
export const SPACING_KEYS = ['idleMs', 'weight'] as const satisfies readonly (keyof NonNullable<LoopwatchConfig['spacing']>)[];
export const ROLE_NAMES = ['poller', 'wait', 'writer', 'exempt'] as const satisfies readonly (keyof NonNullable<LoopwatchConfig['roles']>)[];
export const ROLE_KEYS = ['match', 'thresholds'] as const satisfies readonly (keyof RoleInput)[];
export const TOOL_OVERRIDE_KEYS = ['role', 'thresholds', 'volatileKeys'] as const satisfies readonly (keyof ToolOverride)[];
export const PRICE_KEYS = ['input', 'output', 'cachedInput'] as const satisfies readonly (keyof ModelPriceInput)[];
export const VOLATILE_KEYS_KEYS = ['arguments', 'result'] as const satisfies readonly (keyof VolatileKeysInput)[];

/** Limits of a number setting: `nullable` lets `null` through (a threshold level turned off). */
export interface NumberLimits {
  readonly min: number;
  readonly max?: number;
  readonly integer?: boolean;
  readonly nullable?: boolean;
}

export const NUMBER_LIMITS = {
  /** `warning` and `critical` of every threshold pair (counts; `null` turns a level off). */
  threshold: { min: 1, nullable: true },
  maxPeriod: { min: 2, max: 16, integer: true },
  idleMs: { min: 0 },
  weight: { min: 0, max: 1 },
  gapBudget: { min: 0, max: 8, integer: true },
  historySize: { min: 8, max: 4096, integer: true },
  /** USD per million tokens. */
  price: { min: 0 },
} as const satisfies Record<string, NumberLimits>;

/** Below this, a price per million tokens is surely a price per token (the cheapest models cost cents per million). */
const SMALLEST_PRICE_PER_MILLION = 0.001;

type Path = ReadonlyArray<string | number>;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RegExp);
}

function checkKeys(v: Record<string, unknown>, allowed: readonly string[], path: Path, issues: ConfigIssue[]): void {
  for (const key of Object.keys(v)) {
    if (!allowed.includes(key)) {
      issues.push({ path: [...path, key], message: `unknown key (expected one of: ${allowed.join(', ')})` });
    }
  }
}

function checkNumber(
  v: unknown,
  path: Path,
  issues: ConfigIssue[],
  opts: NumberLimits,
): void {
  if (v === undefined) return;
  if (v === null && opts.nullable) return;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    issues.push({ path, message: `expected a number${opts.nullable ? ' or null' : ''}, got ${describe(v)}` });
    return;
  }
  if (opts.integer && !Number.isInteger(v)) issues.push({ path, message: `expected a whole number, got ${v}` });
  if (v < opts.min) issues.push({ path, message: `must be at least ${opts.min}, got ${v}` });
  if (opts.max !== undefined && v > opts.max) issues.push({ path, message: `must be at most ${opts.max}, got ${v}` });
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `"${v.length > 40 ? `${v.slice(0, 40)}…` : v}"`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}

function checkThreshold(v: unknown, path: Path, issues: ConfigIssue[]): void {
  if (v === undefined) return;
  if (!isRecord(v)) {
    issues.push({ path, message: `expected { warning, critical }, got ${describe(v)}` });
    return;
  }
  checkKeys(v, THRESHOLD_KEYS, path, issues);
  checkNumber(v.warning, [...path, 'warning'], issues, NUMBER_LIMITS.threshold);
  checkNumber(v.critical, [...path, 'critical'], issues, NUMBER_LIMITS.threshold);
  if (typeof v.warning === 'number' && typeof v.critical === 'number' && v.warning > v.critical) {
    issues.push({ path, message: `warning (${v.warning}) must not be above critical (${v.critical})` });
  }
}

function checkRuleThresholds(v: unknown, path: Path, issues: ConfigIssue[]): void {
  if (v === undefined) return;
  if (!isRecord(v)) {
    issues.push({ path, message: `expected a map of rule thresholds, got ${describe(v)}` });
    return;
  }
  checkKeys(v, RULE_KEYS, path, issues);
  for (const key of RULE_KEYS) checkThreshold(v[key], [...path, key], issues);
}

function checkStringList(v: unknown, path: Path, issues: ConfigIssue[], allowRegExp = false): void {
  if (v === undefined) return;
  if (!Array.isArray(v)) {
    issues.push({ path, message: `expected a list of strings, got ${describe(v)}` });
    return;
  }
  v.forEach((item, i) => {
    if (allowRegExp && item instanceof RegExp) return;
    if (typeof item !== 'string') {
      issues.push({ path: [...path, i], message: `expected a string, got ${describe(item)}` });
      return;
    }
    if (allowRegExp) {
      try {
        new RegExp(item);
      } catch (e) {
        issues.push({ path: [...path, i], message: `invalid regular expression: ${(e as Error).message}` });
      }
    }
  });
}

function checkVolatileKeys(v: unknown, path: Path, issues: ConfigIssue[]): void {
  if (v === undefined) return;
  if (!isRecord(v)) {
    issues.push({ path, message: `expected { arguments, result }, got ${describe(v)}` });
    return;
  }
  checkKeys(v, VOLATILE_KEYS_KEYS, path, issues);
  checkStringList(v.arguments, [...path, 'arguments'], issues);
  checkStringList(v.result, [...path, 'result'], issues);
}

function checkPrices(v: unknown, path: Path, issues: ConfigIssue[]): void {
  if (v === undefined) return;
  if (!isRecord(v)) {
    issues.push({ path, message: `expected a map of model names to { input, output } (USD per million tokens), got ${describe(v)}` });
    return;
  }
  for (const [model, price] of Object.entries(v)) {
    const at = [...path, model];
    if (model.trim().length === 0) issues.push({ path: at, message: 'expected a model name or pattern, got an empty key' });
    if (!isRecord(price)) {
      issues.push({ path: at, message: `expected { input, output, cachedInput } in USD per million tokens, got ${describe(price)}` });
      continue;
    }
    checkKeys(price, PRICE_KEYS, at, issues);
    for (const key of PRICE_KEYS) {
      const n = price[key];
      if (n === undefined) {
        if (key !== 'cachedInput') issues.push({ path: [...at, key], message: 'missing: the price in USD per million tokens' });
        continue;
      }
      checkNumber(n, [...at, key], issues, NUMBER_LIMITS.price);
      if (typeof n === 'number' && n > 0 && n < SMALLEST_PRICE_PER_MILLION) {
        issues.push({ path: [...at, key], message: `prices are USD per million tokens: ${n} looks like a price per token (${Number((n * 1e6).toPrecision(6))} per million)` });
      }
    }
  }
}

/** Every problem in `config`, each with its key path; empty when the configuration is valid. */
export function validateConfig(config: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (config === undefined || config === null) return issues;
  if (!isRecord(config)) return [{ path: [], message: `expected a map of settings, got ${describe(config)}` }];
  checkKeys(config, CONFIG_KEYS, [], issues);
  if (config.mode !== undefined && !MODES.includes(config.mode as Mode)) {
    issues.push({ path: ['mode'], message: `expected "enforce" or "observe", got ${describe(config.mode)}` });
  }
  checkRuleThresholds(config.thresholds, ['thresholds'], issues);
  if (config.evidence !== undefined) {
    if (!isRecord(config.evidence)) issues.push({ path: ['evidence'], message: `expected a map, got ${describe(config.evidence)}` });
    else {
      checkKeys(config.evidence, EVIDENCE_KEYS, ['evidence'], issues);
      for (const key of EVIDENCE_KEYS) checkThreshold(config.evidence[key], ['evidence', key], issues);
    }
  }
  if (config.cycle !== undefined) {
    if (!isRecord(config.cycle)) issues.push({ path: ['cycle'], message: `expected a map, got ${describe(config.cycle)}` });
    else {
      checkKeys(config.cycle, CYCLE_KEYS, ['cycle'], issues);
      checkNumber(config.cycle.maxPeriod, ['cycle', 'maxPeriod'], issues, NUMBER_LIMITS.maxPeriod);
    }
  }
  if (config.spacing !== undefined) {
    if (!isRecord(config.spacing)) issues.push({ path: ['spacing'], message: `expected a map, got ${describe(config.spacing)}` });
    else {
      checkKeys(config.spacing, SPACING_KEYS, ['spacing'], issues);
      checkNumber(config.spacing.idleMs, ['spacing', 'idleMs'], issues, NUMBER_LIMITS.idleMs);
      checkNumber(config.spacing.weight, ['spacing', 'weight'], issues, NUMBER_LIMITS.weight);
    }
  }
  checkNumber(config.gapBudget, ['gapBudget'], issues, NUMBER_LIMITS.gapBudget);
  checkNumber(config.historySize, ['historySize'], issues, NUMBER_LIMITS.historySize);
  if (config.roles !== undefined) {
    if (!isRecord(config.roles)) issues.push({ path: ['roles'], message: `expected a map, got ${describe(config.roles)}` });
    else {
      checkKeys(config.roles, ROLE_NAMES, ['roles'], issues);
      for (const name of ROLE_NAMES) {
        const r = config.roles[name];
        if (r === undefined) continue;
        if (!isRecord(r)) {
          issues.push({ path: ['roles', name], message: `expected { match, thresholds }, got ${describe(r)}` });
          continue;
        }
        checkKeys(r, ROLE_KEYS, ['roles', name], issues);
        checkStringList(r.match, ['roles', name, 'match'], issues, true);
        checkRuleThresholds(r.thresholds, ['roles', name, 'thresholds'], issues);
      }
    }
  }
  if (config.tools !== undefined) {
    if (!isRecord(config.tools)) issues.push({ path: ['tools'], message: `expected a map of tool names, got ${describe(config.tools)}` });
    else {
      for (const [tool, o] of Object.entries(config.tools)) {
        const path = ['tools', tool];
        if (!isRecord(o)) {
          issues.push({ path, message: `expected { role, thresholds, volatileKeys }, got ${describe(o)}` });
          continue;
        }
        checkKeys(o, TOOL_OVERRIDE_KEYS, path, issues);
        if (o.role !== undefined && !(TOOL_ROLES as readonly unknown[]).includes(o.role)) {
          issues.push({ path: [...path, 'role'], message: `expected one of ${TOOL_ROLES.join(', ')}, got ${describe(o.role)}` });
        }
        checkRuleThresholds(o.thresholds, [...path, 'thresholds'], issues);
        checkVolatileKeys(o.volatileKeys, [...path, 'volatileKeys'], issues);
      }
    }
  }
  checkVolatileKeys(config.volatileKeys, ['volatileKeys'], issues);
  checkStringList(config.knownTools, ['knownTools'], issues);
  checkPrices(config.prices, ['prices'], issues);
  return issues;
}
