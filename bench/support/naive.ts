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

export class NaiveTrace<K = string> {
  private readonly window: K[] = [];
  private next = 0;
  private readonly counts = new Map<K, number>();

  /** Records a call by its key; true when the key reached the threshold within the window. */
  record(key: K): boolean {
    if (this.window.length === NAIVE_WINDOW) {
      const old = this.window[this.next] as K;
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
 * A yardstick for any detector that reads what a tool answered: the argument and result text
 * hashed by a plain loop over their code units (two 32-bit lanes; no JSON reading, no whitespace,
 * volatile values or key order: no precision at all), as a number. Beside the naive key it shows
 * what reading both texts costs before any precision is paid for.
 */
export function plainKey(name: string, args: unknown, result: unknown): number {
  laneA = 0x811c9dc5;
  laneB = 0x9747b28c;
  plainLanes(name);
  plainLanes(String(args));
  plainLanes(String(result));
  return (laneA >>> 0) * 0x200000 + (laneB >>> 11);
}

let laneA = 0;
let laneB = 0;

/** Pairs of code units into two alternating lanes, then the length. */
function plainLanes(part: string): void {
  let a = laneA;
  let b = laneB;
  const last = part.length - 1;
  let i = 0;
  for (; i < last; i += 2) {
    a = Math.imul(a ^ part.charCodeAt(i), 0x01000193);
    b = Math.imul(b ^ part.charCodeAt(i + 1), 0x5bd1e995);
  }
  if (i === last) a = Math.imul(a ^ part.charCodeAt(i), 0x01000193);
  laneA = a;
  laneB = Math.imul(b ^ part.length, 0x5bd1e995);
}

/** How a detector keys a tool call from its span's attributes. */
type CallKey<K> = (attrs: Span['attributes']) => K;

const naiveCall: CallKey<string> = (attrs) => naiveKey(String(attrs['gen_ai.tool.name']), attrs['gen_ai.tool.call.arguments']);
const plainCall: CallKey<number> = (attrs) => plainKey(String(attrs['gen_ai.tool.name']), attrs['gen_ai.tool.call.arguments'], attrs['gen_ai.tool.call.result']);

/**
 * The naive detector as a span processor in the same place as loopwatch: tool spans by
 * `gen_ai.operation.name`, an event on the third sighting, the trace forgotten when its root
 * ends, at most `maxTraces` traces (the oldest dropped). `keyOf` makes the key of a call: the
 * naive key (`NaiveProcessor`), or the plain hash of arguments and result (`PlainHashProcessor`).
 */
class WindowProcessor<K> implements SpanProcessor {
  private readonly traces = new Map<string, NaiveTrace<K>>();
  detections = 0;

  constructor(
    private readonly keyOf: CallKey<K>,
    private readonly maxTraces = 10_000,
  ) {}

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
        trace = new NaiveTrace<K>();
        this.traces.set(traceId, trace);
      }
      if (trace.record(this.keyOf(attrs))) {
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

export class NaiveProcessor extends WindowProcessor<string> {
  constructor(maxTraces?: number) {
    super(naiveCall, maxTraces);
  }
}

export class PlainHashProcessor extends WindowProcessor<number> {
  constructor(maxTraces?: number) {
    super(plainCall, maxTraces);
  }
}

/**
 * A yardstick for reading the structure of what a tool was given and answered: V8's own JSON
 * parser (native code) run on the argument and result text of every tool span, and nothing else:
 * no hash, no detection, no state. Key order, JSON in strings and values by kind all need the
 * text's structure, and this is the cheapest reader of it that the runtime has built in.
 */
export class JsonParseProcessor implements SpanProcessor {
  /** Texts parsed into a value: each parse's result is used. */
  parsed = 0;

  onStart(): void {}

  onEnding(span: Span): void {
    const attrs = span.attributes;
    if (attrs['gen_ai.operation.name'] !== 'execute_tool') return;
    this.parse(attrs['gen_ai.tool.call.arguments']);
    this.parse(attrs['gen_ai.tool.call.result']);
  }

  private parse(text: unknown): void {
    if (typeof text !== 'string') return;
    try {
      if (JSON.parse(text) !== undefined) this.parsed++;
    } catch {
      // not JSON: a detector would hash it as text
    }
  }

  onEnd(_span: ReadableSpan): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
