import { readFileSync } from 'node:fs';
import { parseConfigText } from '../cli/config-file.js';
import { RULE_KEYS, type LoopwatchConfig, type RuleKey, type ThresholdInput, type ToolOverride } from '../detector/config.js';
import type { LoopDetectionSpanProcessorOptions } from '../processor.js';

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

  const mode = env['LOOPWATCH_MODE'] !== undefined ? pick('LOOPWATCH_MODE', ['enforce', 'observe'] as const, config.mode ?? 'enforce') : config.mode;
  const thresholds = { ...(config.thresholds ?? {}) } as Record<RuleKey, ThresholdInput>;
  const rawThresholds = env['LOOPWATCH_THRESHOLDS']?.trim();
  if (rawThresholds) {
    for (const item of rawThresholds.split(',')) {
      const m = /^\s*([A-Za-z]+)\s*=\s*(\d+|-)?\s*(?:[:/]\s*(\d+|-)?)?\s*$/.exec(item);
      const rule = m?.[1] as RuleKey | undefined;
      if (!m || rule === undefined || !RULE_KEYS.includes(rule)) {
        problems.push(`LOOPWATCH_THRESHOLDS: '${item.trim()}' is not RULE=WARNING:CRITICAL with RULE one of ${RULE_KEYS.join(', ')}; ignored`);
        continue;
      }
      const level = (v: string | undefined): number | null | undefined => (v === undefined ? undefined : v === '-' ? null : Number(v));
      const warning = level(m[2]);
      const critical = level(m[3]);
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
