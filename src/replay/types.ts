import type { SpanView } from '../conventions/types.js';

/**
 * A finished span as the trace replayer reads it, whatever it came from: an OTLP/JSON file
 * (`loopwatch scan`) or an OTLP request (`loopwatch serve`).
 */
export interface ReplaySpan extends SpanView {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  /**
   * The parent lives in another process (OTLP span flags, bits 8 and 9): the span is this
   * process's local root. Undefined when the sender does not say.
   */
  readonly parentIsRemote?: boolean | undefined;
  /** Epoch milliseconds. */
  readonly startTime: number;
  readonly endTime: number;
  /** `service.name` of the resource, when present. */
  readonly service: string | undefined;
}
