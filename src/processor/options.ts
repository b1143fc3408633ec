import { defaultAdapters } from '../conventions/index.js';
import type { MeterProvider } from '@opentelemetry/api';
import type { ConventionAdapter } from '../conventions/types.js';
import type { TraceLoopSummary } from '../cost/summary.js';
import type { ToolLoopError } from '../errors.js';
import { ConfigError, type ConfigIssue, type LoopwatchConfig } from '../detector/config/index.js';
import type { LoopDetection } from '../detector/types.js';
import type { LoopLoggerProvider } from '../otel/loop-logs.js';
import { resolvePreview, type ArgumentPreviewOptions, type ResolvedPreview } from '../otel/argument-preview.js';
import type { ReadableToolSpan } from '../otel/span-types.js';

export interface LoopDetectionSpanProcessorOptions extends LoopwatchConfig {
  /** Called for every detection (both levels, both modes). Exceptions and rejections are contained. */
  readonly onLoop?: (detection: LoopDetection) => unknown;
  /**
   * Called when a trace with a detection ends (its local root span ends): what its loops cost
   * (`loop`, `afterDetection`: tokens, model calls, USD with `prices`). Contained like `onLoop`.
   */
  readonly onTraceEnd?: (summary: TraceLoopSummary) => unknown;
  /**
   * Called once per trace when a critical loop stops it (enforce mode), with the `ToolLoopError`
   * the trace's `abortSignal()` aborts with. Contained: a throw or a rejection goes to diag, never
   * to the app. Listeners on the signal itself run inside the tool span's `end()`, and Node reports
   * one that throws as uncaught; stop the agent from here if that matters to you.
   */
  readonly onAbort?: (error: ToolLoopError, traceId: string) => unknown;
  /**
   * Off by default. On, a looping tool span also gets Langfuse's `langfuse.observation.level`
   * (WARNING, or ERROR when critical) and `langfuse.observation.status_message` (the detection's
   * message), so Langfuse shows and filters the loop on the observation itself.
   */
  readonly langfuseObservations?: boolean;
  /** Prompt template name for a tool span whose own attributes carry none (before ancestors). */
  readonly promptName?: (span: ReadableToolSpan) => string | undefined;
  /** Conventions to read, in order (default: all built-in adapters). */
  readonly conventions?: readonly ConventionAdapter[];
  /** Also write `gen_ai.operation.name` / `gen_ai.tool.name` on tool spans of other conventions (default true). */
  readonly normalizeToolSpans?: boolean;
  /** Most traces tracked at once (default 10 000); the least recently active is dropped beyond it. */
  readonly maxTraces?: number;
  /** A trace with no tool activity for this long is dropped (default 30 minutes). */
  readonly traceIdleMs?: number;
  /**
   * Off by default. On, `loop.detected` events (`loop.arguments.preview`) and detections
   * (`argumentsPreview`) carry a short preview of the looping call's arguments, with members
   * named like credentials and credential-shaped text redacted, cut at `maxLength` (default 120).
   * Redaction is best effort (see `ArgumentPreviewOptions`).
   */
  readonly argumentPreview?: boolean | ArgumentPreviewOptions;
  /**
   * Records `gen_ai.tool.loop.detections` and `gen_ai.tool.calls` (the contract's labels) through
   * this Metrics API provider: exact, cumulative counters that need no collector. Use either
   * these or the collector's count connector for a given Prometheus, not both.
   */
  readonly meterProvider?: MeterProvider;
  /** Emits each detection as a `loop.detected` log record (event) through this Logs API provider too. */
  readonly loggerProvider?: LoopLoggerProvider;
}

/** The processor's own keys (the rest is engine configuration), checked against the options by the compiler. */
const PROCESSOR_KEY_SET = {
  onLoop: true,
  onTraceEnd: true,
  onAbort: true,
  langfuseObservations: true,
  promptName: true,
  conventions: true,
  normalizeToolSpans: true,
  maxTraces: true,
  traceIdleMs: true,
  argumentPreview: true,
  meterProvider: true,
  loggerProvider: true,
} as const satisfies Record<Exclude<keyof LoopDetectionSpanProcessorOptions, keyof LoopwatchConfig>, true>;
const PROCESSOR_KEYS: ReadonlySet<string> = new Set(Object.keys(PROCESSOR_KEY_SET));

export interface ResolvedProcessorOptions {
  /** For the engine, which validates it (`resolveConfig`). */
  readonly config: LoopwatchConfig;
  readonly onLoop: LoopDetectionSpanProcessorOptions['onLoop'];
  readonly onTraceEnd: LoopDetectionSpanProcessorOptions['onTraceEnd'];
  readonly onAbort: LoopDetectionSpanProcessorOptions['onAbort'];
  readonly langfuseObservations: boolean;
  readonly promptName: LoopDetectionSpanProcessorOptions['promptName'];
  readonly adapters: readonly ConventionAdapter[];
  readonly normalize: boolean;
  readonly maxTraces: number;
  readonly traceIdleMs: number;
  readonly preview: ResolvedPreview | undefined;
  readonly meterProvider: MeterProvider | undefined;
  readonly loggerProvider: LoopLoggerProvider | undefined;
}

/**
 * The processor's own numbers, checked at construction: a bad one would fail later inside an
 * app's `span.end()` (`maxTraces: -1` never stopped evicting; `NaN` meant no bound at all).
 */
function checkNumbers(options: LoopDetectionSpanProcessorOptions): void {
  const issues: ConfigIssue[] = [];
  const check = (key: 'maxTraces' | 'traceIdleMs', min: number, integer: boolean): void => {
    const v: unknown = options[key];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || (integer && !Number.isInteger(v))) {
      issues.push({ path: [key], message: `expected ${integer ? 'a whole number' : 'a number'} of at least ${min}, got ${typeof v === 'number' ? String(v) : typeof v}` });
    }
  };
  check('maxTraces', 1, true);
  check('traceIdleMs', 1, false);
  if (issues.length > 0) throw new ConfigError(issues);
}

/** The processor's options with their defaults, and the engine configuration among them. */
export function resolveProcessorOptions(options: LoopDetectionSpanProcessorOptions): ResolvedProcessorOptions {
  checkNumbers(options);
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) if (!PROCESSOR_KEYS.has(k) && v !== undefined) config[k] = v;
  return {
    config: config as LoopwatchConfig,
    onLoop: options.onLoop,
    onTraceEnd: options.onTraceEnd,
    onAbort: options.onAbort,
    langfuseObservations: options.langfuseObservations === true,
    promptName: options.promptName,
    adapters: options.conventions ?? defaultAdapters,
    normalize: options.normalizeToolSpans ?? true,
    maxTraces: options.maxTraces ?? 10_000,
    traceIdleMs: options.traceIdleMs ?? 30 * 60_000,
    preview: resolvePreview(options.argumentPreview),
    meterProvider: options.meterProvider,
    loggerProvider: options.loggerProvider,
  };
}
