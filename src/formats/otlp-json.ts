import { ATTR_SERVICE_NAME } from '../conventions/attributes.js';
import type { SpanEventView } from '../conventions/types.js';
import type { ReplaySpan } from '../replay/types.js';
import { apiSpanKind } from './protobuf/span-view.js';

/**
 * The input is not a trace document; the message says what is wrong (never quoting the input:
 * it may hold arguments, results or secrets), the caller adds file and line.
 */
export class OtlpFormatError extends Error {
  override readonly name = 'OtlpFormatError';
}

type Json = unknown;

export function isObject(v: Json): v is Record<string, Json> {
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
  if (typeof v !== 'string') throw new OtlpFormatError(`${what} must be a string, got ${describe(v)}`);
  if (v.length === bytes * 2 && HEX.test(v)) return v.toLowerCase();
  const raw = Buffer.from(v, 'base64');
  if (raw.length === bytes && /^[A-Za-z0-9+/=_-]+$/.test(v)) return raw.toString('hex');
  throw new OtlpFormatError(`${what} is neither ${bytes * 2} hex digits nor base64 of ${bytes} bytes (got ${describe(v)})`);
}

/** Nanoseconds (string or number) to epoch milliseconds. */
function decodeTime(v: Json, what: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v / 1e6;
  if (typeof v === 'string' && /^\d+$/.test(v)) {
    // split to keep sub-millisecond precision without BigInt
    const ms = v.length > 6 ? Number(v.slice(0, -6)) + Number(v.slice(-6)) / 1e6 : Number(v) / 1e6;
    return ms;
  }
  throw new OtlpFormatError(`${what} must be nanoseconds since the epoch, got ${describe(v)}`);
}

/** What a bad value is, without its content: the kind of value and its length. */
export function describe(v: Json): string {
  if (typeof v === 'string') return `a string of ${v.length} character${v.length === 1 ? '' : 's'}`;
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
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

function decodeSpan(s: Json, service: string | undefined): ReplaySpan {
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
    // OTLP span flags, bit 8: the sender knows whether the parent is remote; bit 9: it is
    ...(typeof s.flags === 'number' && (s.flags & 0x100) !== 0 ? { parentIsRemote: (s.flags & 0x200) !== 0 } : {}),
    name: typeof s.name === 'string' ? s.name : '',
    kind: apiSpanKind(s.kind),
    attributes: decodeAttributes(s.attributes),
    status: message !== undefined ? { code: statusCode, message } : { code: statusCode },
    ...(events ? { events } : {}),
    startTime: decodeTime(s.startTimeUnixNano, 'startTimeUnixNano'),
    endTime: decodeTime(s.endTimeUnixNano ?? s.startTimeUnixNano, 'endTimeUnixNano'),
    service,
  };
}

/** Every span of one `{"resourceSpans":[...]}` object, in file order. */
export function decodeTracesData(doc: Json): ReplaySpan[] {
  if (!isObject(doc) || !Array.isArray(doc.resourceSpans)) {
    throw new OtlpFormatError('expected an OTLP/JSON object with a "resourceSpans" list');
  }
  return decodeResourceSpans(doc.resourceSpans);
}

/** Every span of a list of OTLP ResourceSpans (`resourceSpans`, or Tempo's `batches`), in file order. */
export function decodeResourceSpans(list: readonly Json[]): ReplaySpan[] {
  const spans: ReplaySpan[] = [];
  for (const rs of list) {
    if (!isObject(rs)) throw new OtlpFormatError('each resourceSpans entry must be an object');
    const resource = isObject(rs.resource) ? decodeAttributes(rs.resource.attributes) : {};
    const service = typeof resource[ATTR_SERVICE_NAME] === 'string' ? resource[ATTR_SERVICE_NAME] : undefined;
    // `instrumentationLibrarySpans` is the pre-1.0 name still written by old exporters
    const scopes = Array.isArray(rs.scopeSpans) ? rs.scopeSpans : Array.isArray(rs.instrumentationLibrarySpans) ? rs.instrumentationLibrarySpans : [];
    for (const ss of scopes) {
      if (!isObject(ss) || !Array.isArray(ss.spans)) continue;
      for (const s of ss.spans) spans.push(decodeSpan(s, service));
    }
  }
  return spans;
}
