import { trace } from '@opentelemetry/api';
import type { LoopDetection } from '../detector/types.js';

/** Attribute on a tool span (and its `loop.detected` event) when the guard answered or refused the call. */
export const ATTR_LOOP_ACTION = 'loop.action';

export type GuardSpanAction = 'hinted' | 'blocked';

/**
 * The guard's decision about the call running under a span, handed to the span processor in
 * process. The tool never ran, so the processor must not record the span as a call (its result
 * is a hint or a `ToolLoopError`); it writes the guard's detection as the event instead.
 */
export interface GuardMark {
  readonly action: GuardSpanAction;
  readonly detection: LoopDetection;
  /** False for a refusal after the run was already stopped: the span is marked, no new event. */
  readonly event: boolean;
}

// Keyed by the span object, so only the processor's own tool span can pick a mark up, and it is
// collected with the span. Global so that the ESM and CommonJS builds, loaded side by side, share it.
const REGISTRY = Symbol.for('loopwatch.guard.span-marks.v1');

let cached: WeakMap<object, GuardMark> | undefined;

function registry(): WeakMap<object, GuardMark> {
  if (cached) return cached;
  const g = globalThis as unknown as Record<symbol, WeakMap<object, GuardMark> | undefined>;
  let marks = g[REGISTRY];
  if (!marks) {
    marks = new WeakMap();
    g[REGISTRY] = marks;
  }
  cached = marks;
  return marks;
}

/** The span active where the guard runs (the tool span when the agent's instrumentation made one). */
export function activeSpan(): { readonly span: object; readonly traceId: string; readonly spanId: string } | undefined {
  try {
    const span = trace.getActiveSpan();
    if (!span || !span.isRecording()) return undefined;
    const { traceId, spanId } = span.spanContext();
    return { span, traceId, spanId };
  } catch {
    return undefined;
  }
}

export function markSpan(span: object, mark: GuardMark): void {
  registry().set(span, mark);
}

/** The guard's mark on `span`, removed as it is read (a span is evaluated once). */
export function takeGuardMark(span: object): GuardMark | undefined {
  const marks = registry();
  const mark = marks.get(span);
  if (mark) marks.delete(span);
  return mark;
}
