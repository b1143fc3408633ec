/**
 * The trace files users have, told apart by shape: OTLP/JSON as the collector's file exporter
 * and the SDKs write it (`{"resourceSpans":[...]}`); Grafana Tempo's trace-by-id API
 * (`{"batches":[...]}` before Tempo 2.x renamed the field, `{"resourceSpans":[...]}` after, and
 * the v2 API's `{"trace":{...}}` envelope); Jaeger's v3 API (`{"result":{"resourceSpans":[...]}}`)
 * and its classic JSON (`{"data":[...]}`, see jaeger-json.ts); and OTLP protobuf.
 */
import { ATTR_SERVICE_NAME } from '../conventions/attributes.js';
import { decodeTraceRequest, OtlpDecodeError } from './protobuf/codec.js';
import { replaySpanOf, stringAttribute } from './protobuf/span-view.js';
import { decodeJaegerDocument, isJaegerDocument } from './jaeger-json.js';
import { decodeResourceSpans, isObject, OtlpFormatError } from './otlp-json.js';
import type { ReplaySpan } from '../replay/types.js';

const EXPECTED =
  'expected OTLP/JSON ({"resourceSpans":[...]}), a Tempo trace ({"batches":[...]} or {"trace":{...}}) or a Jaeger export ({"data":[...]})';

/** Every span of one parsed JSON document, in file order. */
export function decodeJsonDocument(doc: unknown): ReplaySpan[] {
  let d = doc;
  // Tempo v2 (`trace`) and Jaeger v3 (`result`) wrap the OTLP object in an envelope
  for (let depth = 0; depth < 2 && isObject(d); depth++) {
    const inner = isObject(d.trace) ? d.trace : isObject(d.result) ? d.result : undefined;
    if (inner === undefined || Array.isArray(d.resourceSpans) || Array.isArray(d.batches)) break;
    d = inner;
  }
  if (isObject(d)) {
    if (Array.isArray(d.resourceSpans)) return decodeResourceSpans(d.resourceSpans);
    if (Array.isArray(d.batches)) return decodeResourceSpans(d.batches);
    if (isJaegerDocument(d)) return decodeJaegerDocument(d);
  }
  throw new OtlpFormatError(EXPECTED);
}

/**
 * Every span of one OTLP protobuf message (an ExportTraceServiceRequest, a TracesData or a
 * Tempo Trace: the same wire format, field 1 holding the ResourceSpans).
 */
export function decodeProtobufDocument(bytes: Uint8Array): ReplaySpan[] {
  let request;
  try {
    request = decodeTraceRequest(bytes, 'protobuf');
  } catch (e) {
    if (e instanceof OtlpDecodeError) throw new OtlpFormatError('not OTLP protobuf (and not JSON)');
    throw e;
  }
  // random bytes can pass as a message of unknown fields: an export always has resource spans
  if (request.resourceSpans.length === 0) throw new OtlpFormatError('not OTLP protobuf: a message without resource spans');
  const spans: ReplaySpan[] = [];
  for (const rs of request.resourceSpans) {
    const service = rs.resource ? stringAttribute(rs.resource.attributes, ATTR_SERVICE_NAME) : undefined;
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) {
        const view = replaySpanOf(span, service);
        if (view === undefined) throw new OtlpFormatError('a span without a 16-byte trace id and an 8-byte span id');
        spans.push(view);
      }
    }
  }
  return spans;
}
