import { trace, type Context, type HrTime, type SpanContext } from '@opentelemetry/api';
import type { SpanView } from '../conventions/types.js';

/**
 * The SDK span as loopwatch uses it, typed structurally so that no SDK package is imported at
 * runtime or in the published types: `@opentelemetry/sdk-trace-base` 2.x and
 * `@opentelemetry/sdk-trace` 3.x spans both satisfy it. SDK spans are already `SpanView`s.
 */
export interface ReadableToolSpan extends SpanView {
  spanContext(): SpanContext;
  /** SDK 2.x / 3.x. */
  readonly parentSpanContext?: SpanContext | undefined;
  /** SDK 1.x. */
  readonly parentSpanId?: string | undefined;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
}

/** The writable span handed to `onStart` and `onEnding`. */
export interface WritableToolSpan extends ReadableToolSpan {
  setAttribute(key: string, value: string | number | boolean): unknown;
  addEvent(name: string, attributes?: Record<string, string | number | boolean | string[]>): unknown;
  isRecording(): boolean;
}

/** The SDK `SpanProcessor` interface (2.x ≥ 2.3 and 3.x), restated without importing the SDK. */
export interface SpanProcessorLike {
  onStart(span: WritableToolSpan, parentContext: Context): void;
  onEnding?(span: WritableToolSpan): void;
  onEnd(span: ReadableToolSpan): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

export function hrTimeToMs(t: HrTime | undefined): number {
  return t ? t[0] * 1000 + t[1] / 1e6 : Number.NaN;
}

export function parentIdOf(span: ReadableToolSpan): string | undefined {
  return span.parentSpanContext?.spanId ?? span.parentSpanId;
}

/** The first span of this trace in this process: no parent, or a parent from another process. */
export function isLocalRoot(span: ReadableToolSpan): boolean {
  if (span.parentSpanContext) return span.parentSpanContext.isRemote === true;
  return span.parentSpanId === undefined || span.parentSpanId === '';
}

/**
 * No parent, not even a remote one: the span began its trace, and its trace ends with it (a tool
 * server called without trace context, an app without a context manager).
 */
export function hasNoParent(span: ReadableToolSpan): boolean {
  return span.parentSpanContext === undefined && isLocalRoot(span);
}

/** The parent span of a span starting in `parentContext`, when that is the span `parentId`. */
export function parentSpanOf(parentContext: Context | undefined, parentId: string | undefined): Pick<WritableToolSpan, 'addEvent' | 'isRecording'> | undefined {
  const parent = parentContext !== undefined ? trace.getSpan(parentContext) : undefined;
  return parent && parent.spanContext().spanId === parentId ? (parent as unknown as WritableToolSpan) : undefined;
}
