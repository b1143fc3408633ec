import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * The naive detector of issue 17, the yardstick for what loopwatch's precision costs: per trace,
 * a map from `name + JSON.stringify(args)` to how often that key was seen among the last 30
 * calls, a loop being the third sighting. It is blind to key order, whitespace, JSON in strings,
 * volatile values and results, and it keeps every key string of the window alive: it is cheap
 * because it is imprecise.
 */

export const NAIVE_WINDOW = 30;
const NAIVE_THRESHOLD = 3;

export class NaiveTrace {
  private readonly window: string[] = [];
  private next = 0;
  private readonly counts = new Map<string, number>();

  /** Records a call by its key; true when the key reached the threshold within the window. */
  record(key: string): boolean {
    if (this.window.length === NAIVE_WINDOW) {
      const old = this.window[this.next] as string;
      const left = (this.counts.get(old) ?? 1) - 1;
      if (left === 0) this.counts.delete(old);
      else this.counts.set(old, left);
      this.window[this.next] = key;
      this.next = (this.next + 1) % NAIVE_WINDOW;
    } else {
      this.window.push(key);
    }
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n >= NAIVE_THRESHOLD;
  }
}

/** The naive key of a call: what it fingerprints with. */
export function naiveKey(name: string, args: unknown): string {
  return name + JSON.stringify(args);
}

/**
 * The naive detector as a span processor in the same place as loopwatch: tool spans by
 * `gen_ai.operation.name`, an event on the third sighting, the trace forgotten when its root
 * ends, at most `maxTraces` traces (the oldest dropped).
 */
export class NaiveProcessor implements SpanProcessor {
  private readonly traces = new Map<string, NaiveTrace>();
  detections = 0;

  constructor(private readonly maxTraces = 10_000) {}

  onStart(): void {}

  onEnding(span: Span): void {
    const attrs = span.attributes;
    const traceId = span.spanContext().traceId;
    if (attrs['gen_ai.operation.name'] === 'execute_tool') {
      let trace = this.traces.get(traceId);
      if (trace === undefined) {
        if (this.traces.size >= this.maxTraces) {
          const oldest = this.traces.keys().next();
          if (!oldest.done) this.traces.delete(oldest.value);
        }
        trace = new NaiveTrace();
        this.traces.set(traceId, trace);
      }
      if (trace.record(naiveKey(String(attrs['gen_ai.tool.name']), attrs['gen_ai.tool.call.arguments']))) {
        this.detections++;
        span.addEvent('loop.detected');
      }
    }
    if (span.parentSpanContext === undefined) this.traces.delete(traceId);
  }

  onEnd(_span: ReadableSpan): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.traces.clear();
    return Promise.resolve();
  }
}
