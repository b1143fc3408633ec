import { create } from '@bufbuild/protobuf';
import type { SpanEventView } from '../../conventions/types.js';
import type { ReplaySpan } from '../../replay/types.js';
import { AnyValueSchema, KeyValueSchema, type AnyValue, type KeyValue } from './gen/opentelemetry/proto/common/v1/common_pb.js';
import { SpanFlags, type Span } from './gen/opentelemetry/proto/trace/v1/trace_pb.js';

/** Lowercase hex of an id; '' for an empty one. */
export function hexOf(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('hex');
}

/** An OTLP AnyValue as a plain value (what the convention adapters read): kvlists become objects. */
export function plainValue(v: AnyValue | undefined, depth = 0): unknown {
  if (v === undefined || depth > 64) return undefined;
  const value = v.value;
  switch (value.case) {
    case 'stringValue':
    case 'boolValue':
    case 'doubleValue':
    case 'bytesValue':
      return value.value;
    case 'intValue':
      return Number(value.value);
    case 'arrayValue':
      return value.value.values.map((x) => plainValue(x, depth + 1));
    case 'kvlistValue':
      return plainAttributes(value.value.values, depth + 1);
    default:
      return undefined;
  }
}

export function plainAttributes(list: readonly KeyValue[], depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list) out[kv.key] = plainValue(kv.value, depth);
  return out;
}

/** The attribute's value when it is a string. */
export function stringAttribute(list: readonly KeyValue[], key: string): string | undefined {
  for (const kv of list) if (kv.key === key) return kv.value?.value.case === 'stringValue' ? kv.value.value.value : undefined;
  return undefined;
}

const nsToMs = (ns: bigint): number => Number(ns) / 1e6;

const OTLP_SPAN_KINDS = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'];

/** An OTLP span kind (number, or enum name in OTLP/JSON) as the OpenTelemetry API numbers it; undefined when unspecified. */
export function apiSpanKind(otlpKind: unknown): number | undefined {
  const n = typeof otlpKind === 'string' ? OTLP_SPAN_KINDS.indexOf(otlpKind) : otlpKind;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 5 ? n - 1 : undefined;
}

/**
 * What the trace replayer and the convention adapters read of an OTLP span. Ids become hex; a
 * span whose trace or span id has the wrong length is not a span (undefined).
 */
export function replaySpanOf(span: Span, service: string | undefined): ReplaySpan | undefined {
  if (span.traceId.length !== 16 || span.spanId.length !== 8) return undefined;
  const events: SpanEventView[] | undefined =
    span.events.length > 0 ? span.events.map((e) => ({ name: e.name, attributes: plainAttributes(e.attributes) })) : undefined;
  const status = span.status;
  const flags = span.flags;
  return {
    traceId: hexOf(span.traceId),
    spanId: hexOf(span.spanId),
    parentSpanId: span.parentSpanId.length === 8 ? hexOf(span.parentSpanId) : undefined,
    // bit 8: the sender knows whether the parent is remote; bit 9: it is
    parentIsRemote: (flags & SpanFlags.CONTEXT_HAS_IS_REMOTE_MASK) !== 0 ? (flags & SpanFlags.CONTEXT_IS_REMOTE_MASK) !== 0 : undefined,
    name: span.name,
    kind: apiSpanKind(span.kind),
    attributes: plainAttributes(span.attributes),
    status: status ? (status.message !== '' ? { code: status.code, message: status.message } : { code: status.code }) : { code: 0 },
    ...(events ? { events } : {}),
    startTime: nsToMs(span.startTimeUnixNano),
    endTime: nsToMs(span.endTimeUnixNano !== 0n ? span.endTimeUnixNano : span.startTimeUnixNano),
    service,
  };
}

/** An attribute in OTLP form. Arrays hold strings (the event's `loop.cycle.tools`). */
export function keyValue(key: string, v: string | number | boolean | readonly string[]): KeyValue {
  return create(KeyValueSchema, { key, value: anyValueOf(v) });
}

function anyValueOf(v: string | number | boolean | readonly string[]): AnyValue {
  if (typeof v === 'string') return create(AnyValueSchema, { value: { case: 'stringValue', value: v } });
  if (typeof v === 'boolean') return create(AnyValueSchema, { value: { case: 'boolValue', value: v } });
  if (typeof v === 'number') {
    return Number.isInteger(v)
      ? create(AnyValueSchema, { value: { case: 'intValue', value: BigInt(v) } })
      : create(AnyValueSchema, { value: { case: 'doubleValue', value: v } });
  }
  return create(AnyValueSchema, { value: { case: 'arrayValue', value: { values: v.map((s) => anyValueOf(s)) } } });
}
