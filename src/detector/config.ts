import type { Mode } from './types.js';

/** A pair of levels. `null` (or omitted at the top level) disables that level. */
export interface ThresholdInput {
  readonly warning?: number | null;
  readonly critical?: number | null;
}

export interface RuleThresholdsInput {
  /** Identical calls (arguments and result): calls. */
  readonly repeat?: ThresholdInput;
  /** Identical arguments while the output changes every time: calls. */
  readonly changingOutput?: ThresholdInput;
  /** The same informative result to different arguments: calls. */
  readonly noProgress?: ThresholdInput;
  /** A sequence of steps repeating: laps. */
  readonly cycle?: ThresholdInput;
  /** The same call failing: failures. */
  readonly repeatedFailure?: ThresholdInput;
  /** One tool failing with the same error class over changing arguments: failures. */
  readonly errorClass?: ThresholdInput;
  /** Calls to a tool that does not exist: calls. */
  readonly unknownTool?: ThresholdInput;
}

export type RuleKey = keyof RuleThresholdsInput;
export const RULE_KEYS: readonly RuleKey[] = [
  'repeat', 'changingOutput', 'noProgress', 'cycle', 'repeatedFailure', 'errorClass', 'unknownTool',
];

/**
 * `poller`: expected to be called again and again (status checks, log tails): higher thresholds.
 * `wait`: sleeps and delays: invisible to the other rules, only a long run of them is flagged.
 * `exempt`: never flagged. `normal`: the defaults.
 */
export type ToolRole = 'normal' | 'poller' | 'wait' | 'exempt';

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

/** Resolved pair; `Infinity` means the level never fires. */
export interface Thresholds {
  readonly warning: number;
  readonly critical: number;
}

export type RuleThresholds = Readonly<Record<RuleKey, Thresholds>>;

const never = Number.POSITIVE_INFINITY;

/**
 * Defaults, and why (the README repeats these):
 * - repeat 3 / 5: two identical calls with identical results can be a deliberate re-check; a
 *   third is the earliest point every surveyed agent runtime intervenes; two more calls after
 *   the hint show the hint did not work.
 * - changingOutput 25 / 50: output that changes is normally progress (debugger stepping,
 *   growing logs). Only a run far longer than honest stepping is a loop (`date` 62 times).
 * - noProgress 4 / 6: different arguments with the same informative answer; one more than
 *   repeat because reformulating a query twice is normal, and a date or id scan can legitimately
 *   return the same "nothing found" a few times.
 * - cycle 3 / 4 laps: two laps are a legitimate two-pass batch; a third lap with identical
 *   results is a loop; stopping one lap later costs only one period.
 * - repeatedFailure 3 / 5: a transient failure retried once or twice and then succeeding is normal.
 * - errorClass 4 / 8: different arguments failing the same way is trial and error for a while.
 * - unknownTool 2 / 3: a tool that does not exist never starts to exist.
 */
export const DEFAULT_THRESHOLDS: RuleThresholds = {
  repeat: { warning: 3, critical: 5 },
  changingOutput: { warning: 25, critical: 50 },
  noProgress: { warning: 4, critical: 6 },
  cycle: { warning: 3, critical: 4 },
  repeatedFailure: { warning: 3, critical: 5 },
  errorClass: { warning: 4, critical: 8 },
  unknownTool: { warning: 2, critical: 3 },
};

/** Pollers are meant to be called repeatedly: a status that does not move for 8 polls is worth a hint. */
export const DEFAULT_POLLER_THRESHOLDS: RuleThresholdsInput = {
  repeat: { warning: 8, critical: 15 },
  changingOutput: { warning: 60, critical: 120 },
  noProgress: { warning: 8, critical: 15 },
  cycle: { warning: 6, critical: 12 },
};

export const DEFAULT_WAIT_THRESHOLDS: RuleThresholdsInput = {
  repeat: { warning: 20, critical: 40 },
};

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

export function resolveThresholds(base: Thresholds, input: ThresholdInput | undefined): Thresholds {
  if (!input) return base;
  const pick = (v: number | null | undefined, fallback: number): number =>
    v === undefined ? fallback : v === null ? never : v;
  return { warning: pick(input.warning, base.warning), critical: pick(input.critical, base.critical) };
}

export function applyRuleThresholds(base: RuleThresholds, input: RuleThresholdsInput | undefined): RuleThresholds {
  if (!input) return base;
  const out = { ...base };
  for (const key of RULE_KEYS) out[key] = resolveThresholds(base[key], input[key]);
  return out;
}

function compilePatterns(list: ReadonlyArray<string | RegExp>): RegExp[] {
  return list.map((p) => (typeof p === 'string' ? new RegExp(p, 'i') : p));
}

/** `*` glob to an anchored regular expression; names without `*` match exactly (no regex). */
export function globMatcher(pattern: string): RegExp | undefined {
  if (!pattern.includes('*')) return undefined;
  const body = pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${body}$`);
}

export function resolveConfig(config: LoopwatchConfig = {}): ResolvedConfig {
  const issues = validateConfig(config);
  if (issues.length > 0) throw new ConfigError(issues);
  const thresholds = applyRuleThresholds(DEFAULT_THRESHOLDS, config.thresholds);
  const role = (input: RoleInput | undefined, patterns: readonly string[], defaults: RuleThresholdsInput): ResolvedRole => ({
    match: compilePatterns(input?.match ?? patterns),
    thresholds: mergeRuleInputs(defaults, input?.thresholds),
  });
  return {
    resolved: true,
    mode: config.mode ?? 'enforce',
    thresholds,
    evidence: {
      argumentsOnly: resolveThresholds({ warning: 5, critical: 10 }, config.evidence?.argumentsOnly),
      // Tool names alone cannot tell a loop from a batch of edits: warn, never stop, by default.
      nameOnly: resolveThresholds({ warning: 10, critical: never }, config.evidence?.nameOnly),
    },
    maxPeriod: config.cycle?.maxPeriod ?? 6,
    spacing: { idleMs: config.spacing?.idleMs ?? 30_000, weight: config.spacing?.weight ?? 0.5 },
    gapBudget: config.gapBudget ?? 1,
    historySize: config.historySize ?? 128,
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

function mergeRuleInputs(base: RuleThresholdsInput, over: RuleThresholdsInput | undefined): RuleThresholdsInput {
  if (!over) return base;
  const out: Record<string, ThresholdInput> = { ...base };
  for (const key of RULE_KEYS) {
    const o = over[key];
    if (o) out[key] = { ...base[key], ...o };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Validation: configuration arrives from YAML files and environment variables as well as code,
// so every key is checked and every problem is reported with its path.

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

/** Below this, a price per million tokens is surely a price per token (the cheapest models cost cents per million). */
const SMALLEST_PRICE_PER_MILLION = 0.001;

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
    checkKeys(price, ['input', 'output', 'cachedInput'], at, issues);
    for (const key of ['input', 'output', 'cachedInput'] as const) {
      const n = price[key];
      if (n === undefined) {
        if (key !== 'cachedInput') issues.push({ path: [...at, key], message: 'missing: the price in USD per million tokens' });
        continue;
      }
      checkNumber(n, [...at, key], issues, { min: 0 });
      if (typeof n === 'number' && n > 0 && n < SMALLEST_PRICE_PER_MILLION) {
        issues.push({ path: [...at, key], message: `prices are USD per million tokens: ${n} looks like a price per token (${Number((n * 1e6).toPrecision(6))} per million)` });
      }
    }
  }
}

const ROLES: readonly ToolRole[] = ['normal', 'poller', 'wait', 'exempt'];

/** Every problem in `config`, each with its key path; empty when the configuration is valid. */
export function validateConfig(config: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (config === undefined || config === null) return issues;
  if (!isRecord(config)) return [{ path: [], message: `expected a map of settings, got ${describe(config)}` }];
  checkKeys(
    config,
    ['mode', 'thresholds', 'evidence', 'cycle', 'spacing', 'gapBudget', 'historySize', 'roles', 'tools', 'volatileKeys', 'knownTools', 'prices'],
    [],
    issues,
  );
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
        if (o.role !== undefined && !ROLES.includes(o.role as ToolRole)) {
          issues.push({ path: [...path, 'role'], message: `expected one of ${ROLES.join(', ')}, got ${describe(o.role)}` });
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
