/**
 * Jaeger's JSON trace format, as its query API (`/api/traces/<id>`, `/api/traces?service=...`)
 * answers and its UI downloads: `{"data":[{"traceID","spans":[...],"processes":{...}}]}`, or one
 * such trace object. The fields are jaeger's model/json (Span: traceID, spanID, operationName,
 * references [{refType, traceID, spanID}], startTime and duration in microseconds, tags
 * [{key, type, value}], logs [{timestamp, fields}], processID). Spans that came from
 * OpenTelemetry carry what the collector's Jaeger translator writes: attributes as tags, the
 * parent as the first CHILD_OF reference (links are FOLLOWS_FROM), the status as
 * `otel.status_code` / `otel.status_description` plus `error: true`, an event's name as the
 * `event` field of its log.
 */
import type { SpanEventView } from '../conventions/types.js';
import { describe, isObject, OtlpFormatError } from './otlp-json.js';
import type { ReplaySpan } from '../replay/types.js';

type Json = unknown;

/** The tags the collector's Jaeger translator writes a span's status into. */
const ATTR_OTEL_STATUS_CODE = 'otel.status_code';
const ATTR_OTEL_STATUS_DESCRIPTION = 'otel.status_description';
const ATTR_ERROR = 'error';

/** Is this a Jaeger document (`{"data":[...]}` of traces, or one trace)? */
export function isJaegerDocument(doc: Json): boolean {
  if (!isObject(doc)) return false;
  if (Array.isArray(doc.data)) return doc.data.length === 0 || doc.data.some((t) => isObject(t) && Array.isArray(t.spans));
  return Array.isArray(doc.spans) && ('traceID' in doc || 'processes' in doc);
}

export function decodeJaegerDocument(doc: Json): ReplaySpan[] {
  if (!isObject(doc)) throw new OtlpFormatError('expected a Jaeger trace object');
  const traces = Array.isArray(doc.data) ? doc.data : [doc];
  const spans: ReplaySpan[] = [];
  for (const trace of traces) {
    if (!isObject(trace) || !Array.isArray(trace.spans)) throw new OtlpFormatError('each Jaeger "data" entry must be a trace with a "spans" list');
    const processes = isObject(trace.processes) ? trace.processes : {};
    for (const span of trace.spans) spans.push(decodeJaegerSpan(span, processes));
  }
  return spans;
}

const HEX = /^[0-9a-fA-F]+$/;

/** Jaeger ids are hex, 64-bit trace ids and old writers' dropped leading zeros included: padded to full width. */
function jaegerId(v: Json, bytes: number, what: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || !HEX.test(v) || v.length > bytes * 2) throw new OtlpFormatError(`${what} must be up to ${bytes * 2} hex digits (got ${describe(v)})`);
  const id = v.toLowerCase().padStart(bytes * 2, '0');
  return /^0+$/.test(id) ? undefined : id;
}

/** Microseconds since the epoch (a number, or a decimal string) to epoch milliseconds. */
function micros(v: Json, what: string): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw new OtlpFormatError(`${what} must be microseconds, got ${describe(v)}`);
  return n / 1000;
}

/** A Jaeger tag's value by its declared type. */
function tagValue(tag: Record<string, Json>): unknown {
  const v = tag.value;
  switch (tag.type) {
    case 'int64':
    case 'float64':
      return typeof v === 'string' ? Number(v) : v;
    case 'bool':
      return typeof v === 'string' ? v === 'true' : v;
    case 'binary':
      return typeof v === 'string' ? new Uint8Array(Buffer.from(v, 'base64')) : undefined;
    default:
      return v;
  }
}

function tags(list: Json): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!Array.isArray(list)) return out;
  for (const t of list) if (isObject(t) && typeof t.key === 'string') out[t.key] = tagValue(t);
  return out;
}

function parentOf(span: Record<string, Json>): string | undefined {
  if (Array.isArray(span.references)) {
    for (const r of span.references) {
      if (isObject(r) && r.refType === 'CHILD_OF') return jaegerId(r.spanID, 8, 'references[].spanID');
    }
  }
  // older writers put the parent in its own field
  return jaegerId(span.parentSpanID, 8, 'parentSpanID');
}

function events(logs: Json): SpanEventView[] | undefined {
  if (!Array.isArray(logs) || logs.length === 0) return undefined;
  const out: SpanEventView[] = [];
  for (const log of logs) {
    if (!isObject(log)) continue;
    const { event, ...attributes } = tags(log.fields);
    out.push({ name: typeof event === 'string' ? event : 'log', attributes });
  }
  return out;
}

function decodeJaegerSpan(s: Json, processes: Record<string, Json>): ReplaySpan {
  if (!isObject(s)) throw new OtlpFormatError('a Jaeger span must be an object');
  const traceId = jaegerId(s.traceID, 16, 'traceID');
  const spanId = jaegerId(s.spanID, 8, 'spanID');
  if (traceId === undefined) throw new OtlpFormatError('span without traceID');
  if (spanId === undefined) throw new OtlpFormatError('span without spanID');
  const attributes = tags(s.tags);
  const code = attributes[ATTR_OTEL_STATUS_CODE];
  const failed = code === 'ERROR' || (code === undefined && (attributes[ATTR_ERROR] === true || attributes[ATTR_ERROR] === 'true'));
  const description = attributes[ATTR_OTEL_STATUS_DESCRIPTION];
  const start = micros(s.startTime, 'startTime');
  const process = typeof s.processID === 'string' ? processes[s.processID] : s.process;
  const log = events(s.logs);
  return {
    traceId,
    spanId,
    parentSpanId: parentOf(s),
    name: typeof s.operationName === 'string' ? s.operationName : '',
    attributes,
    status: failed ? { code: 2, ...(typeof description === 'string' ? { message: description } : {}) } : { code: code === 'OK' ? 1 : 0 },
    ...(log ? { events: log } : {}),
    startTime: start,
    endTime: start + (s.duration === undefined ? 0 : micros(s.duration, 'duration')),
    service: isObject(process) && typeof process.serviceName === 'string' ? process.serviceName : undefined,
  };
}
