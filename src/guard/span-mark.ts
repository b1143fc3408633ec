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
// collected with the span. Global so that the ESM and CommonJS builds, loaded side by side, share it
// (the key is versioned with the registry's shape).
const REGISTRY = Symbol.for('loopwatch.guard.span-marks.v3');

interface Registry {
  readonly marks: WeakMap<object, GuardMark>;
}

let cached: Registry | undefined;

function registry(): Registry {
  if (cached) return cached;
  const g = globalThis as unknown as Record<symbol, Registry | undefined>;
  let r = g[REGISTRY];
  if (!r) {
    r = { marks: new WeakMap() };
    g[REGISTRY] = r;
  }
  cached = r;
  return r;
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
  registry().marks.set(span, mark);
}

/** The guard's mark on `span`, removed as it is read (a span is evaluated once). */
export function takeGuardMark(span: object): GuardMark | undefined {
  const marks = registry().marks;
  const mark = marks.get(span);
  if (mark) marks.delete(span);
  return mark;
}
