import { ROOT_CONTEXT, trace, TraceFlags, type Context } from '@opentelemetry/api';
import type { LoopDetection } from '../detector/types.js';
import { LOOP_EVENT_NAME, loopEventAttributes } from './event-attributes.js';
import { SCOPE_NAME } from './loop-metrics.js';

/**
 * The parts of the Logs API (`@opentelemetry/api-logs`) loopwatch uses, restated so that the
 * library imports no logs package: any `LoggerProvider` of `@opentelemetry/sdk-logs` fits.
 */
export interface LoopLogRecord {
  eventName?: string;
  timestamp?: number;
  severityNumber?: number;
  severityText?: string;
  body?: string;
  attributes?: Record<string, string | number | boolean | string[]>;
  context?: Context;
}
export interface LoopLogger {
  emit(record: LoopLogRecord): void;
}
export interface LoopLoggerProvider {
  getLogger(name: string, version?: string): LoopLogger;
}

/** Logs API severity numbers (`SeverityNumber.WARN` / `.ERROR`). */
const SEVERITY_WARN = 13;
const SEVERITY_ERROR = 17;

/**
 * Each detection as an OpenTelemetry event (a log record named `loop.detected`), as
 * OpenTelemetry moves events from spans to logs: the span event's attributes, the engine's
 * message as body, the trace and span of the call that completed the evidence as its context.
 * Emitting never throws: a failing logger is reported once and then ignored.
 */
export class LoopLogs {
  private readonly logger: LoopLogger;
  private failed = false;

  constructor(
    loggerProvider: LoopLoggerProvider,
    version: string,
    private readonly onProblem: (message: string) => void = () => undefined,
  ) {
    this.logger = loggerProvider.getLogger(SCOPE_NAME, version);
  }

  /** `time`: when the call that completed the evidence ended (epoch ms); default now. */
  emit(d: LoopDetection, time?: number): void {
    if (this.failed) return;
    try {
      const critical = d.level === 'critical';
      this.logger.emit({
        eventName: LOOP_EVENT_NAME,
        ...(time !== undefined && Number.isFinite(time) ? { timestamp: time } : {}),
        severityNumber: critical ? SEVERITY_ERROR : SEVERITY_WARN,
        severityText: critical ? 'ERROR' : 'WARN',
        body: d.message,
        attributes: loopEventAttributes(d),
        context: trace.setSpanContext(ROOT_CONTEXT, { traceId: d.traceId, spanId: d.spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true }),
      });
    } catch (e) {
      this.failed = true;
      this.onProblem(`emitting a loopwatch log record failed; log records are off from now on: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
