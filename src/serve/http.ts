import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { CONTENT_TYPE, decodeTraceRequest, encodeStatus, encodeTraceResponse, encodingOf, OtlpDecodeError, type OtlpEncoding } from '../formats/protobuf/codec.js';
import type { ExportTraceServiceRequest } from '../formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import type { IngestResult } from './pipeline.js';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/** What the HTTP and gRPC front ends ask of the server. */
export interface Intake {
  /** Refusal (status, seconds to wait) when the server cannot take data now; undefined when it can. */
  refusal(): { readonly status: 429 | 503; readonly retryAfterSeconds: number; readonly why: string } | undefined;
  ingest(request: ExportTraceServiceRequest): IngestResult;
  /** The /healthz answer. */
  health(): { readonly ok: boolean; readonly body: unknown };
  /** Largest request body, compressed and after decompression (bytes). */
  readonly maxBodyBytes: number;
}

export const TRACES_PATH = '/v1/traces';
export const HEALTH_PATH = '/healthz';

class BodyTooLarge extends Error {}

/**
 * OTLP/HTTP as the spec words it: POST /v1/traces with a protobuf or JSON body (gzip or deflate
 * allowed), answered in the request's encoding with an ExportTraceServiceResponse (partial
 * success when spans were rejected), 400 with a google.rpc.Status for bad data, 413 past the
 * size limit, 429/503 with Retry-After while the server's buffer is full.
 */
export function handleHttp(intake: Intake, req: IncomingMessage, res: ServerResponse): void {
  void handle(intake, req, res).catch((e: unknown) => {
    // nothing above should throw; if it does, the client gets a retryable 503 and the server lives on
    if (!res.headersSent) reply(res, 503, 'json', encodeStatus('json', `internal error: ${e instanceof Error ? e.message : String(e)}`));
    else res.destroy();
  });
}

async function handle(intake: Intake, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?', 1)[0];
  if (path === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
    const { ok, body } = intake.health();
    req.resume();
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
    return;
  }
  if (path !== TRACES_PATH) return plain(req, res, 404, `not found: loopwatch serve takes POST ${TRACES_PATH} (OTLP/HTTP) and GET ${HEALTH_PATH}`);
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    return plain(req, res, 405, `${TRACES_PATH} takes POST`);
  }
  const encoding = encodingOf(req.headers['content-type']);
  if (encoding === undefined) {
    return fail(req, res, 415, 'json', `unsupported Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')}: send application/x-protobuf or application/json`);
  }
  const refusal = intake.refusal();
  if (refusal) {
    res.setHeader('retry-after', String(refusal.retryAfterSeconds));
    return fail(req, res, refusal.status, encoding, refusal.why);
  }
  const contentEncoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (contentEncoding !== 'identity' && contentEncoding !== 'gzip' && contentEncoding !== 'deflate') {
    return fail(req, res, 415, encoding, `unsupported Content-Encoding ${JSON.stringify(contentEncoding)}: send gzip, deflate or none`);
  }
  const limit = intake.maxBodyBytes;
  if (Number(req.headers['content-length'] ?? 0) > limit) return tooLarge(req, res, encoding, limit);
  let body: Buffer;
  try {
    body = await readBody(req, limit);
    if (contentEncoding === 'gzip') body = await gunzipAsync(body, { maxOutputLength: limit });
    else if (contentEncoding === 'deflate') body = await inflateAsync(body, { maxOutputLength: limit });
  } catch (e) {
    if (e instanceof BodyTooLarge || (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return tooLarge(req, res, encoding, limit);
    if (req.destroyed) return;
    return fail(req, res, 400, encoding, `could not read the ${contentEncoding} body: ${e instanceof Error ? e.message : String(e)}`);
  }
  let request: ExportTraceServiceRequest;
  try {
    request = decodeTraceRequest(body, encoding);
  } catch (e) {
    if (e instanceof OtlpDecodeError) return fail(req, res, 400, encoding, e.message);
    throw e;
  }
  const result = intake.ingest(request);
  reply(res, 200, encoding, encodeTraceResponse(encoding, result.rejected, result.message));
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    req.on('error', reject);
  });
}

function tooLarge(req: IncomingMessage, res: ServerResponse, encoding: OtlpEncoding, limit: number): void {
  res.setHeader('connection', 'close');
  fail(req, res, 413, encoding, `request body over ${limit} bytes (compressed or not): send smaller batches`);
}

function fail(req: IncomingMessage, res: ServerResponse, status: number, encoding: OtlpEncoding, message: string): void {
  req.resume();
  reply(res, status, encoding, encodeStatus(encoding, message));
}

function reply(res: ServerResponse, status: number, encoding: OtlpEncoding, body: Uint8Array): void {
  res.writeHead(status, { 'content-type': CONTENT_TYPE[encoding], 'content-length': body.byteLength });
  res.end(body);
}

function plain(req: IncomingMessage, res: ServerResponse, status: number, text: string): void {
  req.resume();
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${text}\n`);
}
