import { readFileSync } from 'node:fs';
import { parseConfigText } from '../formats/config-file.js';
import { DEFAULT_MODE, MODES, RULE_KEYS, type LoopwatchConfig, type RuleKey, type ThresholdInput, type ToolOverride } from '../detector/config/index.js';
import type { LoopDetectionSpanProcessorOptions } from '../processor/index.js';

/** How `loopwatch/register` turns itself on. */
export type RegisterMode = 'sdk' | 'attach' | 'off';
export type LogMode = 'warn' | 'json' | 'off';

export interface RegisterSettings {
  readonly register: RegisterMode;
  readonly log: LogMode;
  readonly attachTimeoutMs: number;
  readonly options: LoopDetectionSpanProcessorOptions;
  /** Problems with the variables: each is reported and the variable ignored (the app still starts). */
  readonly problems: string[];
}

type Env = Readonly<Record<string, string | undefined>>;

const ROLE_VARIABLES: ReadonlyArray<[string, ToolOverride['role']]> = [
  ['LOOPWATCH_POLLERS', 'poller'],
  ['LOOPWATCH_WAITS', 'wait'],
  ['LOOPWATCH_EXEMPT', 'exempt'],
];

/**
 * Reads the `LOOPWATCH_*` variables (documented in docs/instrumentations.md). Precedence: the
 * config file (`LOOPWATCH_CONFIG`), then the single-purpose variables on top of it.
 */
export function settingsFromEnv(env: Env = process.env): RegisterSettings {
  const problems: string[] = [];
  const pick = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = env[name]?.trim().toLowerCase();
    if (raw === undefined || raw === '') return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    problems.push(`${name}=${env[name]} is not one of ${allowed.join(', ')}; using ${fallback}`);
    return fallback;
  };
  const positiveInt = (name: string): number | undefined => {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (Number.isInteger(n) && n > 0) return n;
    problems.push(`${name}=${raw} is not a positive integer; ignored`);
    return undefined;
  };

  const disabled = ['1', 'true', 'yes'].includes((env['LOOPWATCH_DISABLED'] ?? '').trim().toLowerCase());
  const register = disabled ? 'off' : pick<RegisterMode>('LOOPWATCH_REGISTER', ['sdk', 'attach', 'off'], 'sdk');
  const log = pick<LogMode>('LOOPWATCH_LOG', ['warn', 'json', 'off'], 'warn');

  let config: LoopwatchConfig = {};
  const file = env['LOOPWATCH_CONFIG']?.trim();
  if (file) {
    try {
      config = parseConfigText(readFileSync(file, 'utf8'), file);
    } catch (e) {
      problems.push(`LOOPWATCH_CONFIG: ${e instanceof Error ? e.message : String(e)}; the file is ignored`);
    }
  }

  const mode = env['LOOPWATCH_MODE'] !== undefined ? pick('LOOPWATCH_MODE', MODES, config.mode ?? DEFAULT_MODE) : config.mode;
  const thresholds = { ...(config.thresholds ?? {}) } as Record<RuleKey, ThresholdInput>;
  const rawThresholds = env['LOOPWATCH_THRESHOLDS']?.trim();
  if (rawThresholds) {
    for (const item of rawThresholds.split(',')) {
      const parsed = parseThreshold(item.trim());
      if (typeof parsed === 'string') {
        problems.push(`LOOPWATCH_THRESHOLDS: '${item.trim()}' ${parsed}; ignored`);
        continue;
      }
      const [rule, warning, critical] = parsed;
      thresholds[rule] = { ...thresholds[rule], ...(warning !== undefined ? { warning } : {}), ...(critical !== undefined ? { critical } : {}) };
    }
  }
  const tools: Record<string, ToolOverride> = { ...(config.tools ?? {}) };
  for (const [name, role] of ROLE_VARIABLES) {
    for (const pattern of (env[name] ?? '').split(',').map((s) => s.trim()).filter(Boolean)) tools[pattern] = { ...tools[pattern], ...(role !== undefined ? { role } : {}) };
  }

  const maxTraces = positiveInt('LOOPWATCH_MAX_TRACES');
  const traceIdleMs = positiveInt('LOOPWATCH_TRACE_IDLE_MS');
  const options: LoopDetectionSpanProcessorOptions = {
    ...config,
    ...(mode !== undefined ? { mode } : {}),
    ...(Object.keys(thresholds).length > 0 ? { thresholds } : {}),
    ...(Object.keys(tools).length > 0 ? { tools } : {}),
    ...(maxTraces !== undefined ? { maxTraces } : {}),
    ...(traceIdleMs !== undefined ? { traceIdleMs } : {}),
  };
  return { register, log, attachTimeoutMs: positiveInt('LOOPWATCH_ATTACH_TIMEOUT_MS') ?? 30_000, options, problems };
}

/** A level of `RULE=WARNING:CRITICAL`: a whole number >= 1, `-` (off), or empty (keep). */
type Level = number | null | undefined;

/**
 * One `RULE=WARNING:CRITICAL` item (`/` also separates the levels), or what is wrong with it,
 * naming the part that is: the rule, or the value of a level.
 */
function parseThreshold(item: string): [RuleKey, Level, Level] | string {
  const eq = item.indexOf('=');
  if (eq < 0) return `is not RULE=WARNING:CRITICAL (e.g. repeat=4:8)`;
  const rule = item.slice(0, eq).trim();
  if (!(RULE_KEYS as readonly string[]).includes(rule)) return `names no rule: '${rule}' is not one of ${RULE_KEYS.join(', ')}`;
  const sides = item.slice(eq + 1).split(/[:/]/).map((s) => s.trim());
  if (sides.length > 2) return `has ${sides.length} levels; give WARNING:CRITICAL`;
  const levels: Level[] = [];
  for (const [i, side] of sides.entries()) {
    const which = i === 0 ? 'warning' : 'critical';
    if (side === '') levels.push(undefined);
    else if (side === '-') levels.push(null);
    else if (/^\d+$/.test(side) && Number(side) >= 1) levels.push(Number(side));
    else return `has ${which} level '${side}', which is not a whole number of at least 1 (or '-' for off, empty to keep the default)`;
  }
  return [rule as RuleKey, levels[0], levels[1]];
}
