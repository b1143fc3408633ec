import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONTENT_TYPE, encodeStatus, encodeTraceResponse, encodingOf, OtlpDecodeError, type OtlpEncoding } from '../formats/protobuf/codec.js';
import { BodyReservation, BodyTooLarge, CorruptBody, decompress, OverBudget, publicMessage, readBody, SpoolWriteError, type ContentCoding, type Intake } from './receive.js';

export const TRACES_PATH = '/v1/traces';
/** Readiness: 200 while serve takes data (the contract). */
export const HEALTH_PATH = '/healthz';
/** Liveness: 200 while the process answers, full or not. */
export const LIVE_PATH = '/livez';

/**
 * OTLP/HTTP as the spec words it: POST /v1/traces with a protobuf or JSON body (gzip or deflate
 * allowed), answered in the request's encoding with an ExportTraceServiceResponse (partial
 * success when spans were rejected), 400 with a google.rpc.Status for bad data, 401 without the
 * credentials asked for, 413 past the size limit, 429 with Retry-After while memory (or the
 * spool) is full, 503 with Retry-After while shutting down. Every request gets an answer.
 */
export function handleHttp(intake: Intake, req: IncomingMessage, res: ServerResponse): void {
  void handle(intake, req, res).catch((e: unknown) => {
    // nothing above should throw; if it does, the client gets a retryable 503 and the server lives on
    if (!res.headersSent && !res.destroyed) reply(res, 503, 'json', encodeStatus('json', `internal error: ${publicMessage(e instanceof Error ? e.message : String(e))}`));
    else res.destroy();
  });
}

async function handle(intake: Intake, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?', 1)[0];
  if ((path === HEALTH_PATH || path === LIVE_PATH) && (req.method === 'GET' || req.method === 'HEAD')) {
    const { ok, body } = intake.health();
    const status = path === LIVE_PATH || ok ? 200 : 503;
    req.resume();
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
    return;
  }
  if (path !== TRACES_PATH) return plain(req, res, 404, `not found: loopwatch serve takes POST ${TRACES_PATH} (OTLP/HTTP), GET ${HEALTH_PATH} and GET ${LIVE_PATH}`);
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    return plain(req, res, 405, `${TRACES_PATH} takes POST`);
  }
  const encoding = encodingOf(req.headers['content-type']);
  if (encoding === undefined) return fail(req, res, 415, 'json', 'unsupported Content-Type: send application/x-protobuf or application/json');
  if (!intake.authorized((name) => headerOf(req, name))) {
    res.setHeader('www-authenticate', 'Bearer');
    return fail(req, res, 401, encoding, 'missing or wrong credentials');
  }
  const refusal = intake.refusal();
  if (refusal) {
    res.setHeader('retry-after', String(refusal.retryAfterSeconds));
    return fail(req, res, refusal.status, encoding, refusal.why);
  }
  const coding = contentCoding(req.headers['content-encoding']);
  if (coding === undefined) return fail(req, res, 415, encoding, 'unsupported Content-Encoding: send gzip, deflate or none');
  const limit = intake.maxBodyBytes;
  if (Number(req.headers['content-length'] ?? 0) > limit) return tooLarge(req, res, encoding, limit);
  const reservation = new BodyReservation(intake.budget);
  try {
    let body: Buffer;
    try {
      body = await decompress(await readBody(req, limit, reservation, intake.budget), coding, limit, reservation);
    } catch (e) {
      if (e instanceof BodyTooLarge) return tooLarge(req, res, encoding, limit);
      if (e instanceof OverBudget) return busy(req, res, encoding, intake);
      if (e instanceof CorruptBody) return fail(req, res, 400, encoding, e.message);
      // the client went away, or the request timed out (Node answered 408)
      if (!res.headersSent && !res.destroyed) res.destroy();
      return;
    }
    let result;
    try {
      result = await intake.accept(body, encoding);
    } catch (e) {
      if (e instanceof OtlpDecodeError) return fail(req, res, 400, encoding, publicMessage(e.message));
      if (e instanceof SpoolWriteError) {
        res.setHeader('retry-after', '5');
        return fail(req, res, 503, encoding, e.message);
      }
      throw e;
    }
    reply(res, 200, encoding, encodeTraceResponse(encoding, result.rejected, result.message));
  } finally {
    reservation.release();
  }
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function contentCoding(header: string | undefined): ContentCoding | undefined {
  const v = (header ?? 'identity').toLowerCase().trim();
  return v === 'identity' || v === 'gzip' || v === 'deflate' ? v : v === '' ? 'identity' : undefined;
}

function busy(req: IncomingMessage, res: ServerResponse, encoding: OtlpEncoding, intake: Intake): void {
  const refusal = intake.refusal();
  res.setHeader('retry-after', String(refusal?.retryAfterSeconds ?? 1));
  // the rest of the body is not read: the connection cannot carry another request
  res.setHeader('connection', 'close');
  fail(req, res, refusal?.status ?? 429, encoding, refusal?.why ?? 'memory is full: retry later');
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
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': CONTENT_TYPE[encoding], 'content-length': body.byteLength });
  res.end(body);
}

function plain(req: IncomingMessage, res: ServerResponse, status: number, text: string): void {
  req.resume();
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${text}\n`);
}
