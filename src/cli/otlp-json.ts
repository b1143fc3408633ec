import type { SpanEventView, SpanView } from '../conventions/types.js';

/** A span decoded from OTLP/JSON: what the conventions read plus ids and times. */
export interface DecodedSpan extends SpanView {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  /** Epoch milliseconds. */
  readonly startTime: number;
  readonly endTime: number;
  /** `service.name` of the resource, when present. */
  readonly service: string | undefined;
}

/** The input is not OTLP/JSON; the message says what is wrong, the caller adds file and line. */
export class OtlpFormatError extends Error {
  override readonly name = 'OtlpFormatError';
}

type Json = unknown;

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const HEX = /^[0-9a-fA-F]+$/;

/**
 * OTLP/JSON encodes ids as hex (the spec); protobuf's generic JSON mapping gives base64. Both are
 * accepted and normalised to lowercase hex.
 */
function decodeId(v: Json, bytes: number, what: string, required: boolean): string | undefined {
  if (v === undefined || v === null || v === '') {
    if (required) throw new OtlpFormatError(`span without ${what}`);
    return undefined;
  }
  if (typeof v !== 'string') throw new OtlpFormatError(`${what} must be a string, got ${typeof v}`);
  if (v.length === bytes * 2 && HEX.test(v)) return v.toLowerCase();
  const raw = Buffer.from(v, 'base64');
  if (raw.length === bytes && /^[A-Za-z0-9+/=_-]+$/.test(v)) return raw.toString('hex');
  throw new OtlpFormatError(`${what} "${v.slice(0, 40)}" is neither ${bytes * 2} hex digits nor base64 of ${bytes} bytes`);
}

/** Nanoseconds (string or number) to epoch milliseconds. */
function decodeTime(v: Json, what: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v / 1e6;
  if (typeof v === 'string' && /^\d+$/.test(v)) {
    // split to keep sub-millisecond precision without BigInt
    const ms = v.length > 6 ? Number(v.slice(0, -6)) + Number(v.slice(-6)) / 1e6 : Number(v) / 1e6;
    return ms;
  }
  throw new OtlpFormatError(`${what} must be nanoseconds since the epoch, got ${JSON.stringify(v)?.slice(0, 40)}`);
}

/** OTLP AnyValue to a plain value: kvlists become objects, arrays arrays, bytes Uint8Array. */
export function decodeAnyValue(v: Json, depth = 0): unknown {
  if (!isObject(v) || depth > 64) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) {
    const n = typeof v.intValue === 'string' ? Number(v.intValue) : v.intValue;
    return typeof n === 'number' ? n : undefined;
  }
  if ('doubleValue' in v) {
    const d = v.doubleValue;
    // JSON cannot hold NaN/Infinity; OTLP/JSON writes them as strings
    return typeof d === 'string' ? Number(d) : d;
  }
  if ('arrayValue' in v) {
    const values = isObject(v.arrayValue) && Array.isArray(v.arrayValue.values) ? v.arrayValue.values : [];
    return values.map((x) => decodeAnyValue(x, depth + 1));
  }
  if ('kvlistValue' in v) {
    const values = isObject(v.kvlistValue) && Array.isArray(v.kvlistValue.values) ? v.kvlistValue.values : [];
    return decodeAttributes(values, depth + 1);
  }
  if ('bytesValue' in v) return typeof v.bytesValue === 'string' ? new Uint8Array(Buffer.from(v.bytesValue, 'base64')) : undefined;
  return undefined;
}

export function decodeAttributes(list: Json, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!Array.isArray(list)) return out;
  for (const kv of list) {
    if (!isObject(kv) || typeof kv.key !== 'string') continue;
    out[kv.key] = decodeAnyValue(kv.value, depth);
  }
  return out;
}

function decodeEvents(list: Json): SpanEventView[] | undefined {
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const out: SpanEventView[] = [];
  for (const e of list) {
    if (!isObject(e) || typeof e.name !== 'string') continue;
    out.push({ name: e.name, attributes: decodeAttributes(e.attributes) });
  }
  return out;
}

function decodeSpan(s: Json, service: string | undefined): DecodedSpan {
  if (!isObject(s)) throw new OtlpFormatError('a span must be an object');
  const status = isObject(s.status) ? s.status : undefined;
  const code = status?.code;
  const statusCode = typeof code === 'number' ? code : code === 'STATUS_CODE_ERROR' ? 2 : code === 'STATUS_CODE_OK' ? 1 : 0;
  const events = decodeEvents(s.events);
  const message = typeof status?.message === 'string' ? status.message : undefined;
  return {
    traceId: decodeId(s.traceId, 16, 'traceId', true) ?? '',
    spanId: decodeId(s.spanId, 8, 'spanId', true) ?? '',
    parentSpanId: decodeId(s.parentSpanId, 8, 'parentSpanId', false),
    name: typeof s.name === 'string' ? s.name : '',
    attributes: decodeAttributes(s.attributes),
    status: message !== undefined ? { code: statusCode, message } : { code: statusCode },
    ...(events ? { events } : {}),
    startTime: decodeTime(s.startTimeUnixNano, 'startTimeUnixNano'),
    endTime: decodeTime(s.endTimeUnixNano ?? s.startTimeUnixNano, 'endTimeUnixNano'),
    service,
  };
}

/** Every span of one `{"resourceSpans":[...]}` object, in file order. */
export function decodeTracesData(doc: Json): DecodedSpan[] {
  if (!isObject(doc) || !Array.isArray(doc.resourceSpans)) {
    throw new OtlpFormatError('expected an OTLP/JSON object with a "resourceSpans" list');
  }
  const spans: DecodedSpan[] = [];
  for (const rs of doc.resourceSpans) {
    if (!isObject(rs)) throw new OtlpFormatError('each resourceSpans entry must be an object');
    const resource = isObject(rs.resource) ? decodeAttributes(rs.resource.attributes) : {};
    const service = typeof resource['service.name'] === 'string' ? resource['service.name'] : undefined;
    // `instrumentationLibrarySpans` is the pre-1.0 name still written by old exporters
    const scopes = Array.isArray(rs.scopeSpans) ? rs.scopeSpans : Array.isArray(rs.instrumentationLibrarySpans) ? rs.instrumentationLibrarySpans : [];
    for (const ss of scopes) {
      if (!isObject(ss) || !Array.isArray(ss.spans)) continue;
      for (const s of ss.spans) spans.push(decodeSpan(s, service));
    }
  }
  return spans;
}
