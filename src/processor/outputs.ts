import type { Context } from '@opentelemetry/api';
import { ATTR_LANGFUSE_OBSERVATION_LEVEL, ATTR_LANGFUSE_OBSERVATION_STATUS_MESSAGE } from '../conventions/langfuse.js';
import type { LoopDetection } from '../detector/types.js';
import type { ToolLoopError } from '../errors.js';
import { callContained, notifyContained } from '../otel/diag.js';
import type { LoopLogs } from '../otel/loop-logs.js';
import type { LoopMetrics } from '../otel/loop-metrics.js';
import { ATTR_LOOP_SPAN_ID, LOOP_EVENT_NAME, loopEventAttributes } from '../otel/event-attributes.js';
import { parentSpanOf, type WritableToolSpan } from '../otel/span-types.js';
import type { TraceState } from './trace-state.js';

/** Where a detection happened: the tool span whose call completed the evidence, and its trace. */
export interface DetectionSite {
  readonly trace: TraceState;
  readonly traceId: string;
  readonly spanId: string;
  /** The tool span, while it can still be written (`onEnding`); undefined on SDKs without it. */
  readonly span: WritableToolSpan | undefined;
  /** Where its parent is found, and the parent's id: the event's fallback place. */
  readonly parentContext: Context | undefined;
  readonly parentId: string | undefined;
  /** More attributes for the event (the guard's `loop.action`). */
  readonly attributes: Record<string, string> | undefined;
}

/**
 * Something done with every detection, in order: the span event, the `onLoop` callback, the
 * abort. A new output (a metric counter, a log record, a Langfuse level on the span) is one more
 * of these in `detectionOutputs`. Each runs contained: one that throws stops neither the others
 * nor the app.
 */
export interface DetectionOutput {
  /** Named in diag when it fails. */
  readonly name: string;
  write(detection: LoopDetection, site: DetectionSite): void;
}

/** `loop.detected` on the tool span, or on its still-open parent when the span is read-only (SDK < 2.3). */
export const spanEventOutput: DetectionOutput = {
  name: 'the loop.detected event',
  write(d, site) {
    if (site.span) {
      site.span.addEvent(LOOP_EVENT_NAME, loopEventAttributes(d, site.attributes));
      return;
    }
    const parent = parentSpanOf(site.parentContext, site.parentId);
    if (parent?.isRecording()) parent.addEvent(LOOP_EVENT_NAME, loopEventAttributes(d, { ...site.attributes, [ATTR_LOOP_SPAN_ID]: site.spanId }));
  },
};

/** The user's `onLoop`, for every detection; a throw or a rejection is reported, never passed on. */
export function callbackOutput(onLoop: (detection: LoopDetection) => unknown): DetectionOutput {
  return {
    name: 'onLoop',
    write: (d) => notifyContained('onLoop', () => onLoop(d)),
  };
}

/**
 * A critical detection in `enforce` mode aborts the trace's `abortSignal()` with a `ToolLoopError`,
 * and tells `onAbort` (once per trace), contained: a way to stop the agent that cannot crash it.
 */
export function abortOutput(onAbort: ((error: ToolLoopError, traceId: string) => unknown) | undefined): DetectionOutput {
  return {
    name: 'the abort',
    write(d, site) {
      if (d.level !== 'critical' || d.mode !== 'enforce') return;
      const error = site.trace.stop(d);
      if (error !== undefined && onAbort !== undefined) notifyContained('onAbort', () => onAbort(error, site.traceId));
    },
  };
}

/**
 * The `langfuseObservations` option: the looping tool span becomes a WARNING (warning) or ERROR
 * (critical) observation in Langfuse, with the detection's message as its status message, so
 * Langfuse users see loops where they look. Only ever raises the level the span already has.
 */
export const langfuseObservationOutput: DetectionOutput = {
  name: 'the Langfuse observation level',
  write(d, site) {
    const span = site.span;
    if (span === undefined) return;
    const current = span.attributes[ATTR_LANGFUSE_OBSERVATION_LEVEL];
    if (current === 'ERROR' || (current === 'WARNING' && d.level === 'warning')) return;
    span.setAttribute(ATTR_LANGFUSE_OBSERVATION_LEVEL, d.level === 'critical' ? 'ERROR' : 'WARNING');
    span.setAttribute(ATTR_LANGFUSE_OBSERVATION_STATUS_MESSAGE, d.message);
  },
};

/** `gen_ai.tool.loop.detections` through the Metrics API (the `meterProvider` option). */
export function metricOutput(metrics: LoopMetrics): DetectionOutput {
  return { name: 'the detection counter', write: (d) => metrics.recordDetection(d) };
}

/** A `loop.detected` log record through the Logs API (the `loggerProvider` option). */
export function logRecordOutput(logs: LoopLogs): DetectionOutput {
  return { name: 'the loop.detected log record', write: (d) => logs.emit(d) };
}

export interface OutputSinks {
  readonly onLoop?: ((detection: LoopDetection) => unknown) | undefined;
  readonly onAbort?: ((error: ToolLoopError, traceId: string) => unknown) | undefined;
  readonly metrics?: LoopMetrics | undefined;
  readonly logs?: LoopLogs | undefined;
  readonly langfuseObservations?: boolean;
}

/** The outputs in their order: event, counter, log record, callback, and the abort last. */
export function detectionOutputs(sinks: OutputSinks): readonly DetectionOutput[] {
  const outputs: DetectionOutput[] = [spanEventOutput];
  if (sinks.metrics) outputs.push(metricOutput(sinks.metrics));
  if (sinks.logs) outputs.push(logRecordOutput(sinks.logs));
  if (sinks.langfuseObservations === true) outputs.push(langfuseObservationOutput);
  if (sinks.onLoop) outputs.push(callbackOutput(sinks.onLoop));
  outputs.push(abortOutput(sinks.onAbort));
  return outputs;
}

/** Every detection through every output, in order. */
export function writeDetections(outputs: readonly DetectionOutput[], detections: readonly LoopDetection[], site: DetectionSite): void {
  for (const d of detections) {
    for (const output of outputs) callContained(output.name, () => output.write(d, site), undefined);
  }
}
