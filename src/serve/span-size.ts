import type { AnyValue, KeyValue } from '../formats/protobuf/gen/opentelemetry/proto/common/v1/common_pb.js';
import type { Span } from '../formats/protobuf/gen/opentelemetry/proto/trace/v1/trace_pb.js';

/**
 * Heap per object, estimated (bench/NOTES.md, "serve memory"): a decoded span with its ids,
 * times, status and the HeldSpan around it; one attribute (KeyValue, AnyValue and its oneof);
 * an event or a link without its attributes. Strings count one byte a character.
 */
const SPAN_BYTES = 560;
const ATTRIBUTE_BYTES = 120;
const EVENT_BYTES = 120;
const LINK_BYTES = 160;

/** What a decoded span holds in memory, estimated from its content without encoding it. */
export function spanBytes(span: Span): number {
  let n = SPAN_BYTES + span.name.length + span.traceState.length + attributesBytes(span.attributes);
  for (const e of span.events) n += EVENT_BYTES + e.name.length + attributesBytes(e.attributes);
  for (const l of span.links) n += LINK_BYTES + l.traceState.length + attributesBytes(l.attributes);
  if (span.status) n += span.status.message.length;
  return n;
}

export function attributesBytes(list: readonly KeyValue[]): number {
  let n = 0;
  for (const kv of list) n += ATTRIBUTE_BYTES + kv.key.length + valueBytes(kv.value);
  return n;
}

function valueBytes(v: AnyValue | undefined): number {
  if (v === undefined) return 0;
  const value = v.value;
  switch (value.case) {
    case 'stringValue':
      return value.value.length;
    case 'bytesValue':
      return value.value.byteLength;
    case 'arrayValue': {
      let n = 0;
      for (const x of value.value.values) n += ATTRIBUTE_BYTES + valueBytes(x);
      return n;
    }
    case 'kvlistValue':
      return attributesBytes(value.value.values);
    default:
      return 8;
  }
}
