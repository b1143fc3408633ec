import { create, fromBinary, fromJson, toBinary, toJson, type JsonValue } from '@bufbuild/protobuf';
import { BinaryReader, configureTextEncoding, WireType } from '@bufbuild/protobuf/wire';
import { StatusSchema as RpcStatusSchema } from './gen/google/rpc/status_pb.js';
import {
  ExportTraceServiceRequestSchema,
  ExportTraceServiceResponseSchema,
  type ExportTraceServiceRequest,
} from './gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import { InstrumentationScopeSchema } from './gen/opentelemetry/proto/common/v1/common_pb.js';
import { ResourceSchema } from './gen/opentelemetry/proto/resource/v1/resource_pb.js';
import { ResourceSpansSchema, ScopeSpansSchema, SpanSchema, type ResourceSpans, type ScopeSpans } from './gen/opentelemetry/proto/trace/v1/trace_pb.js';

/**
 * Nesting allowed in a request (messages within messages: an attribute nested N levels deep is
 * about 3N). The library's default of 100 rejects attributes nested 33 levels deep, which the
 * collector accepts; 3 000 stays far from the call-stack limit of the recursive decoders.
 */
const RECURSION_LIMIT = 3_000;

/**
 * Strings as the collector takes them: invalid UTF-8 in protobuf (a surrogate half written by an
 * SDK that truncated an attribute) and a lone surrogate escape in JSON are not errors; they
 * become U+FFFD, as a lenient decoder and the UTF-8 encoder write them.
 */
const lenientText = new TextDecoder('utf-8', { ignoreBOM: true });
const encoder = new TextEncoder();
configureTextEncoding({
  encodeUtf8: (text) => encoder.encode(text),
  decodeUtf8: (bytes) => lenientText.decode(bytes),
  checkUtf8: () => true,
});

/** The two OTLP/HTTP payload encodings. */
export type OtlpEncoding = 'protobuf' | 'json';

export const CONTENT_TYPE: Readonly<Record<OtlpEncoding, string>> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

/** A request body that is not an OTLP trace export: answered with 400, never retried. */
export class OtlpDecodeError extends Error {
  override readonly name = 'OtlpDecodeError';
}

/** The encoding a Content-Type names (parameters such as charset ignored); undefined if neither. */
export function encodingOf(contentType: string | undefined): OtlpEncoding | undefined {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return undefined;
}

export function decodeTraceRequest(body: Uint8Array, encoding: OtlpEncoding): ExportTraceServiceRequest {
  if (encoding === 'protobuf') {
    try {
      return fromBinary(ExportTraceServiceRequestSchema, body, { recursionLimit: RECURSION_LIMIT });
    } catch (e) {
      throw new OtlpDecodeError(`not a protobuf ExportTraceServiceRequest: ${messageOf(e)}`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (e) {
    throw new OtlpDecodeError(`not JSON: ${messageOf(e)}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new OtlpDecodeError('expected an OTLP/JSON ExportTraceServiceRequest object ({"resourceSpans":[...]})');
  }
  idsToBase64(json);
  try {
    // OTLP/JSON receivers ignore fields with unknown names (the spec), as the binary decoder does.
    return fromJson(ExportTraceServiceRequestSchema, json as JsonValue, { ignoreUnknownFields: true, recursionLimit: RECURSION_LIMIT });
  } catch (e) {
    throw new OtlpDecodeError(`not an OTLP/JSON ExportTraceServiceRequest: ${messageOf(e)}`);
  }
}

/**
 * The protobuf decode of a trace export one span at a time, calling `step` after each (awaited
 * when it returns a promise): a 20 MB request of 320 000 spans takes seconds to decode, and a
 * server must answer its health checks meanwhile. The same messages as `decodeTraceRequest`,
 * except unknown fields above the span (a resource's, a scope's) which are dropped.
 */
export async function decodeTraceRequestInSteps(body: Uint8Array, step: () => Promise<void> | undefined): Promise<ExportTraceServiceRequest> {
  try {
    const request = create(ExportTraceServiceRequestSchema);
    await eachField(body, async (field, reader) => {
      if (field !== 1) return false;
      request.resourceSpans.push(await resourceSpansInSteps(reader.bytes(), step));
      return true;
    });
    return request;
  } catch (e) {
    throw new OtlpDecodeError(`not a protobuf ExportTraceServiceRequest: ${messageOf(e)}`);
  }
}

const nested = { recursionLimit: RECURSION_LIMIT } as const;

/** Reads a message's length-delimited fields one by one; `read` takes those it knows (true), the rest are skipped. */
async function eachField(bytes: Uint8Array, read: (field: number, reader: BinaryReader) => Promise<boolean> | boolean): Promise<void> {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (wireType !== WireType.LengthDelimited || !(await read(field, reader))) reader.skip(wireType, field);
  }
}

async function resourceSpansInSteps(bytes: Uint8Array, step: () => Promise<void> | undefined): Promise<ResourceSpans> {
  const resourceSpans = create(ResourceSpansSchema);
  await eachField(bytes, async (field, reader) => {
    if (field === 1) resourceSpans.resource = fromBinary(ResourceSchema, reader.bytes(), nested);
    else if (field === 2) resourceSpans.scopeSpans.push(await scopeSpansInSteps(reader.bytes(), step));
    else if (field === 3) resourceSpans.schemaUrl = reader.string();
    else return false;
    return true;
  });
  return resourceSpans;
}

async function scopeSpansInSteps(bytes: Uint8Array, step: () => Promise<void> | undefined): Promise<ScopeSpans> {
  const scopeSpans = create(ScopeSpansSchema);
  await eachField(bytes, async (field, reader) => {
    if (field === 1) scopeSpans.scope = fromBinary(InstrumentationScopeSchema, reader.bytes(), nested);
    else if (field === 2) {
      scopeSpans.spans.push(fromBinary(SpanSchema, reader.bytes(), nested));
      await step();
    } else if (field === 3) scopeSpans.schemaUrl = reader.string();
    else return false;
    return true;
  });
  return scopeSpans;
}

export function encodeTraceRequest(request: ExportTraceServiceRequest, encoding: OtlpEncoding): Uint8Array {
  if (encoding === 'protobuf') return toBinary(ExportTraceServiceRequestSchema, request);
  // OTLP/JSON: enums as integers, trace and span ids as hex (the spec's two deviations from the
  // protobuf JSON mapping); 64-bit integers as decimal strings, as the mapping says.
  const json = toJson(ExportTraceServiceRequestSchema, request, { enumAsInteger: true });
  idsToHex(json);
  return Buffer.from(JSON.stringify(json));
}

/**
 * The success body: an ExportTraceServiceResponse, with `partial_success` set only when spans
 * were rejected (or a warning is given), in the request's encoding.
 */
export function encodeTraceResponse(encoding: OtlpEncoding, rejectedSpans = 0, errorMessage = ''): Uint8Array {
  const response = create(ExportTraceServiceResponseSchema, {
    ...(rejectedSpans > 0 || errorMessage !== '' ? { partialSuccess: { rejectedSpans: BigInt(rejectedSpans), errorMessage } } : {}),
  });
  if (encoding === 'protobuf') return toBinary(ExportTraceServiceResponseSchema, response);
  return Buffer.from(JSON.stringify(toJson(ExportTraceServiceResponseSchema, response, { enumAsInteger: true })));
}

/** The failure body of every 4xx/5xx answer: a google.rpc.Status with a developer-facing message. */
export function encodeStatus(encoding: OtlpEncoding, message: string, code?: number): Uint8Array {
  const status = create(RpcStatusSchema, { message, ...(code !== undefined ? { code } : {}) });
  if (encoding === 'protobuf') return toBinary(RpcStatusSchema, status);
  return Buffer.from(JSON.stringify(toJson(RpcStatusSchema, status)));
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const HEX_ID = /^[0-9a-fA-F]*$/;
const ID_KEYS = ['traceId', 'spanId', 'parentSpanId', 'trace_id', 'span_id', 'parent_span_id'] as const;

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Spans and links of an OTLP/JSON trace export, where the hex ids live. */
function forEachIdHolder(doc: unknown, visit: (holder: JsonObject) => void): void {
  if (!isObject(doc)) return;
  for (const rs of list(doc.resourceSpans ?? doc.resource_spans)) {
    if (!isObject(rs)) continue;
    for (const ss of list(rs.scopeSpans ?? rs.scope_spans)) {
      if (!isObject(ss)) continue;
      for (const span of list(ss.spans)) {
        if (!isObject(span)) continue;
        visit(span);
        for (const link of list(span.links)) if (isObject(link)) visit(link);
      }
    }
  }
}

/**
 * OTLP/JSON writes ids as hex, the protobuf JSON mapping reads bytes as base64: hex ids are
 * turned into base64 before the mapping reads them. Hex of an odd length is read as if it had a
 * leading 0 (its length is then wrong, and the receiver says so about the span, not "invalid
 * base64"); a value that is not hex is left for the mapping (some exporters send base64, which
 * it reads, or garbage, which it rejects).
 */
function idsToBase64(doc: unknown): void {
  forEachIdHolder(doc, (holder) => {
    for (const key of ID_KEYS) {
      const v = holder[key];
      if (typeof v === 'string' && HEX_ID.test(v)) holder[key] = Buffer.from(v.length % 2 === 0 ? v : `0${v}`, 'hex').toString('base64');
    }
  });
}

function idsToHex(doc: unknown): void {
  forEachIdHolder(doc, (holder) => {
    for (const key of ID_KEYS) {
      const v = holder[key];
      if (typeof v === 'string') holder[key] = Buffer.from(v, 'base64').toString('hex');
    }
  });
}

/** What a downstream said in a 200 answer: spans it rejected, and why (a partial success). */
export function decodeTraceResponse(body: Uint8Array, encoding: OtlpEncoding): { rejectedSpans: number; errorMessage: string } {
  if (body.length === 0) return { rejectedSpans: 0, errorMessage: '' };
  try {
    const response =
      encoding === 'protobuf'
        ? fromBinary(ExportTraceServiceResponseSchema, body)
        : fromJson(ExportTraceServiceResponseSchema, JSON.parse(Buffer.from(body).toString('utf8')) as JsonValue, { ignoreUnknownFields: true });
    return { rejectedSpans: Number(response.partialSuccess?.rejectedSpans ?? 0n), errorMessage: response.partialSuccess?.errorMessage ?? '' };
  } catch {
    return { rejectedSpans: 0, errorMessage: '' };
  }
}
