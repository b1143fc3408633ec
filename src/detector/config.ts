import { RULES, RULE_KEYS, type RuleKey } from './rules.js';
import { resolveThresholds, type ThresholdInput, type Thresholds } from './thresholds.js';
import type { Mode } from './types.js';

export type { ThresholdInput, Thresholds } from './thresholds.js';
export { resolveThresholds } from './thresholds.js';
export { RULE_KEYS, type RuleKey } from './rules.js';


/** Thresholds per rule, by the rule's key (see `RULES`). */
export type RuleThresholdsInput = { readonly [K in RuleKey]?: ThresholdInput };

export type RuleThresholds = Readonly<Record<RuleKey, Thresholds>>;

/**
 * `poller`: expected to be called again and again (status checks, log tails): higher thresholds.
 * `wait`: sleeps and delays: invisible to the other rules, only a long run of them is flagged.
 * `exempt`: never flagged. `normal`: the defaults.
 */
export const TOOL_ROLES = ['normal', 'poller', 'wait', 'exempt'] as const;
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
    readonly exempt?: RoleInput;
  };
  /** Per-tool overrides; keys are tool names, `*` matches any run of characters. */
  readonly tools?: Readonly<Record<string, ToolOverride>>;
  /** Member names ignored everywhere, added to the built-in lists. */
  readonly volatileKeys?: VolatileKeysInput;
  /** When set, a call to any other tool name counts as a call to a tool that does not exist. */
  readonly knownTools?: readonly string[];
}

export interface ResolvedRole {
  readonly match: readonly RegExp[];
  readonly thresholds: RuleThresholdsInput;
}

export interface ResolvedToolOverride {
  readonly pattern: string;
  readonly matcher: RegExp | undefined;
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
  readonly roles: { readonly poller: ResolvedRole; readonly wait: ResolvedRole; readonly exempt: ResolvedRole };
  readonly tools: readonly ResolvedToolOverride[];
  readonly volatileKeys: { readonly arguments: readonly string[]; readonly result: readonly string[] };
  readonly knownTools: ReadonlySet<string> | undefined;
}


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

/** Tool-name words, matched on the snake_case form of the name (`getJobStatus` → `get_job_status`). */
export const DEFAULT_POLLER_PATTERNS: readonly string[] = [
  '(^|_)(poll|polling|status|progress|tail|logs?|watch)(_|$)',
  '(^|_)(get|read|bash|process|command|job|task)_(result|results|output|outputs|log|logs)(_|$)',
  '(^|_)wait_(for|until)(_|$)',
  '(^|_)check_(job|run|task|build|deploy|deployment|status)(_|$)',
];

export const DEFAULT_WAIT_PATTERNS: readonly string[] = [
  '(^|_)(sleep|wait|delay|pause)(_(seconds?|secs?|ms|millis|minutes?))?$',
];

/** When arguments (results) are not captured. Tool names alone cannot tell a loop from a batch of edits: warn, never stop. */
export const DEFAULT_EVIDENCE_THRESHOLDS: { readonly argumentsOnly: Thresholds; readonly nameOnly: Thresholds } = {
  argumentsOnly: { warning: 5, critical: 10 },
  nameOnly: { warning: 10, critical: Number.POSITIVE_INFINITY },
};

export const DEFAULT_MODE = 'enforce';
export const DEFAULT_MAX_PERIOD = 6;
export const DEFAULT_SPACING = { idleMs: 30_000, weight: 0.5 } as const;
export const DEFAULT_GAP_BUDGET = 1;
export const DEFAULT_HISTORY_SIZE = 128;


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
} as const satisfies Record<keyof LoopwatchConfig, true>;
const CONFIG_KEYS = Object.keys(CONFIG_KEY_SET);

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
  opts: { min: number; integer?: boolean; max?: number; nullable?: boolean },
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
  checkKeys(v, ['warning', 'critical'], path, issues);
  checkNumber(v.warning, [...path, 'warning'], issues, { min: 1, nullable: true });
  checkNumber(v.critical, [...path, 'critical'], issues, { min: 1, nullable: true });
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
  checkKeys(v, ['arguments', 'result'], path, issues);
  checkStringList(v.arguments, [...path, 'arguments'], issues);
  checkStringList(v.result, [...path, 'result'], issues);
}

/** Every problem in `config`, each with its key path; empty when the configuration is valid. */
export function validateConfig(config: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (config === undefined || config === null) return issues;
  if (!isRecord(config)) return [{ path: [], message: `expected a map of settings, got ${describe(config)}` }];
  checkKeys(config, CONFIG_KEYS, [], issues);
  if (config.mode !== undefined && config.mode !== 'enforce' && config.mode !== 'observe') {
    issues.push({ path: ['mode'], message: `expected "enforce" or "observe", got ${describe(config.mode)}` });
  }
  checkRuleThresholds(config.thresholds, ['thresholds'], issues);
  if (config.evidence !== undefined) {
    if (!isRecord(config.evidence)) issues.push({ path: ['evidence'], message: `expected a map, got ${describe(config.evidence)}` });
    else {
      checkKeys(config.evidence, ['argumentsOnly', 'nameOnly'], ['evidence'], issues);
      checkThreshold(config.evidence.argumentsOnly, ['evidence', 'argumentsOnly'], issues);
      checkThreshold(config.evidence.nameOnly, ['evidence', 'nameOnly'], issues);
    }
  }
  if (config.cycle !== undefined) {
    if (!isRecord(config.cycle)) issues.push({ path: ['cycle'], message: `expected a map, got ${describe(config.cycle)}` });
    else {
      checkKeys(config.cycle, ['maxPeriod'], ['cycle'], issues);
      checkNumber(config.cycle.maxPeriod, ['cycle', 'maxPeriod'], issues, { min: 2, max: 16, integer: true });
    }
  }
  if (config.spacing !== undefined) {
    if (!isRecord(config.spacing)) issues.push({ path: ['spacing'], message: `expected a map, got ${describe(config.spacing)}` });
    else {
      checkKeys(config.spacing, ['idleMs', 'weight'], ['spacing'], issues);
      checkNumber(config.spacing.idleMs, ['spacing', 'idleMs'], issues, { min: 0 });
      checkNumber(config.spacing.weight, ['spacing', 'weight'], issues, { min: 0, max: 1 });
    }
  }
  checkNumber(config.gapBudget, ['gapBudget'], issues, { min: 0, max: 8, integer: true });
  checkNumber(config.historySize, ['historySize'], issues, { min: 8, max: 4096, integer: true });
  if (config.roles !== undefined) {
    if (!isRecord(config.roles)) issues.push({ path: ['roles'], message: `expected a map, got ${describe(config.roles)}` });
    else {
      checkKeys(config.roles, ['poller', 'wait', 'exempt'], ['roles'], issues);
      for (const name of ['poller', 'wait', 'exempt'] as const) {
        const r = config.roles[name];
        if (r === undefined) continue;
        if (!isRecord(r)) {
          issues.push({ path: ['roles', name], message: `expected { match, thresholds }, got ${describe(r)}` });
          continue;
        }
        checkKeys(r, ['match', 'thresholds'], ['roles', name], issues);
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
        checkKeys(o, ['role', 'thresholds', 'volatileKeys'], path, issues);
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
  return issues;
}


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

/** `*` glob to an anchored regular expression; names without `*` match exactly (no regex). */
function globMatcher(pattern: string): RegExp | undefined {
  if (!pattern.includes('*')) return undefined;
  const body = pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${body}$`);
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
      exempt: role(config.roles?.exempt, [], {}),
    },
    tools: Object.entries(config.tools ?? {}).map(([pattern, override]) => ({
      pattern,
      matcher: globMatcher(pattern),
      override,
    })),
    volatileKeys: {
      arguments: [...(config.volatileKeys?.arguments ?? [])],
      result: [...(config.volatileKeys?.result ?? [])],
    },
    knownTools: config.knownTools ? new Set(config.knownTools) : undefined,
  };
}
