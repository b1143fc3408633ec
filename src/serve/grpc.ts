import { create, toBinary } from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { AnySchema, DurationSchema } from '@bufbuild/protobuf/wkt';
import { constants, createServer, type Http2Server, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { Duplex } from 'node:stream';
import { encodeTraceResponse, OtlpDecodeError } from '../formats/protobuf/codec.js';
import { StatusSchema } from '../formats/protobuf/gen/google/rpc/status_pb.js';
import { TraceService } from '../formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import { BodyReservation, BodyTooLarge, CorruptBody, decompress, publicMessage, SpoolWriteError, type ContentCoding, type Intake, type Refusal } from './receive.js';

/** gRPC status codes (grpc/doc/statuscodes.md) this front end answers with. */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export const EXPORT_PATH = `/${TraceService.typeName}/${TraceService.method.export.name}`;
const ACCEPTED_ENCODINGS = 'identity,gzip,deflate';
const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';

/** `grpc-status-details-bin`: a google.rpc.Status whose details hold a google.rpc.RetryInfo (what OTLP asks of a RESOURCE_EXHAUSTED that may be retried). */
export function statusWithRetryInfo(code: number, message: string, retryAfterSeconds: number): Uint8Array {
  const delay = toBinary(DurationSchema, create(DurationSchema, { seconds: BigInt(retryAfterSeconds) }));
  // RetryInfo { google.protobuf.Duration retry_delay = 1; } (google/rpc/error_details.proto)
  const retryInfo = new BinaryWriter().tag(1, WireType.LengthDelimited).bytes(delay).finish();
  return toBinary(StatusSchema, create(StatusSchema, { code, message, details: [create(AnySchema, { typeUrl: RETRY_INFO_TYPE, value: retryInfo })] }));
}

export interface GrpcTimeouts {
  /** The request message must have arrived this long after the call started. */
  readonly requestTimeoutMs: number;
  /** A connection without a call in progress is closed after this long. */
  readonly idleTimeoutMs: number;
}

/**
 * OTLP/gRPC on the same port as OTLP/HTTP (the spec allows it): the collector's `load_balancing`
 * exporter speaks only OTLP/gRPC, and this is how it reaches `serve`. One unary method on
 * Node's HTTP/2 server, so that every call gets a status, whatever it sends: a message over the
 * size limit is answered RESOURCE_EXHAUSTED from its length prefix, before its bytes are read;
 * full memory gets RESOURCE_EXHAUSTED with RetryInfo (the collector retries only with it); a
 * message flagged compressed without a `grpc-encoding` is INTERNAL, as the gRPC protocol says;
 * a message that does not arrive in time is CANCELLED. Bodies are counted in the memory budget
 * as they arrive, as on OTLP/HTTP.
 */
export class GrpcFront {
  private readonly server: Http2Server;
  private readonly sessions = new Set<Http2Session>();

  constructor(
    private readonly intake: Intake,
    private readonly timeouts: GrpcTimeouts,
  ) {
    this.server = createServer({ settings: { maxConcurrentStreams: 100 }, maxSessionInvalidFrames: 100_000 });
    this.server.on('session', (session: Http2Session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
      session.on('error', () => session.destroy());
      session.setTimeout(timeouts.idleTimeoutMs, () => session.close());
    });
    this.server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => this.call(stream, headers));
  }

  /** An HTTP/2 connection (cleartext after its preface was seen, or TLS that chose h2). */
  accept(connection: Duplex): void {
    this.server.emit('connection', connection);
  }

  get openSessions(): number {
    return this.sessions.size;
  }

  /** Asks every client to stop (GOAWAY) and lets calls in progress finish; ends what is left after `graceMs`. */
  close(graceMs: number): void {
    for (const s of this.sessions) s.close();
    setTimeout(() => {
      for (const s of this.sessions) s.destroy();
    }, graceMs).unref();
  }

  destroyAll(): void {
    for (const s of this.sessions) s.destroy();
  }

  private call(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    stream.on('error', () => undefined);
    const contentType = String(headers['content-type'] ?? '');
    if (!contentType.startsWith('application/grpc')) {
      stream.respond({ ':status': 415, 'content-type': 'text/plain' }, { endStream: false });
      stream.end('loopwatch serve speaks OTLP/gRPC (application/grpc) and OTLP/HTTP on this port\n');
      return;
    }
    if (headers[':method'] !== 'POST' || headers[':path'] !== EXPORT_PATH) return this.status(stream, GrpcCode.UNIMPLEMENTED, `unknown method; loopwatch serve implements ${EXPORT_PATH}`);
    const header = (name: string): string | undefined => {
      const v = headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    if (!this.intake.authorized(header)) return this.status(stream, GrpcCode.UNAUTHENTICATED, 'missing or wrong credentials');
    const refusal = this.intake.refusal();
    if (refusal) return this.refuse(stream, refusal);
    const coding = (header('grpc-encoding') ?? 'identity').toLowerCase();
    if (coding !== 'identity' && coding !== 'gzip' && coding !== 'deflate') {
      return this.status(stream, GrpcCode.UNIMPLEMENTED, `unsupported grpc-encoding; use ${ACCEPTED_ENCODINGS}`, { 'grpc-accept-encoding': ACCEPTED_ENCODINGS });
    }
    this.read(stream, coding);
  }

  /** Reads the one length-prefixed message of a unary call, answering as soon as it knows the call fails. */
  private read(stream: ServerHttp2Stream, coding: ContentCoding): void {
    const intake = this.intake;
    const limit = intake.maxBodyBytes;
    const reservation = new BodyReservation(intake.budget);
    const chunks: Buffer[] = [];
    let received = 0;
    let length: number | undefined;
    let compressed = false;
    let finished = false;
    const finish = (code: number, message: string, extra?: Record<string, string>): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      stream.removeListener('data', onData);
      reservation.release();
      this.status(stream, code, message, extra);
    };
    const timer = setTimeout(() => finish(GrpcCode.CANCELLED, `the request message did not arrive within ${this.timeouts.requestTimeoutMs} ms`), this.timeouts.requestTimeoutMs);
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      chunks.push(chunk);
      reservation.add(chunk.length);
      if (length === undefined && received >= 5) {
        const head = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
        const flag = head.readUInt8(0);
        length = head.readUInt32BE(1);
        if (flag > 1) return finish(GrpcCode.INTERNAL, 'invalid message flag');
        compressed = flag === 1;
        if (compressed && coding === 'identity') return finish(GrpcCode.INTERNAL, 'the message is flagged compressed but the call has no grpc-encoding');
        if (length > limit) return finish(GrpcCode.RESOURCE_EXHAUSTED, `message of ${length} bytes over the limit of ${limit}: send smaller batches`);
      }
      if (length !== undefined && received > 5 + length) return finish(GrpcCode.INTERNAL, 'more than one message in a unary call');
      if (intake.budget.over) {
        const refusal = intake.refusal() ?? { status: 429, retryAfterSeconds: 1, why: 'memory is full' };
        return finish(GrpcCode.RESOURCE_EXHAUSTED, refusal.why, retryInfoHeader(refusal));
      }
    };
    stream.on('data', onData);
    // the client reset the call or the connection went away
    stream.on('close', () => {
      finished = true;
      clearTimeout(timer);
      reservation.release();
    });
    stream.on('end', () => {
      if (finished) return;
      if (length === undefined || received < 5 + length) return finish(GrpcCode.INTERNAL, 'the request message is missing or cut short');
      const message = Buffer.concat(chunks, received).subarray(5);
      void this.take(message, compressed ? coding : 'identity', reservation).then(
        (reply) => {
          // released here too: the call may have closed while its message was decompressed
          reservation.release();
          if (finished) return;
          finished = true;
          clearTimeout(timer);
          if ('code' in reply) return this.status(stream, reply.code, reply.message, reply.extra);
          this.ok(stream, reply.response);
        },
        () => {
          reservation.release();
          finish(GrpcCode.UNAVAILABLE, 'internal error');
        },
      );
    });
  }

  private async take(message: Buffer, coding: ContentCoding, reservation: BodyReservation): Promise<{ response: Uint8Array } | { code: number; message: string; extra?: Record<string, string> }> {
    let body: Buffer;
    try {
      body = await decompress(message, coding, this.intake.maxBodyBytes, reservation);
    } catch (e) {
      if (e instanceof BodyTooLarge) return { code: GrpcCode.RESOURCE_EXHAUSTED, message: `message over ${this.intake.maxBodyBytes} bytes once decompressed` };
      if (e instanceof CorruptBody) return { code: GrpcCode.INTERNAL, message: e.message };
      throw e;
    }
    try {
      const result = await this.intake.accept(body, 'protobuf');
      return { response: encodeTraceResponse('protobuf', result.rejected, result.message) };
    } catch (e) {
      if (e instanceof OtlpDecodeError) return { code: GrpcCode.INVALID_ARGUMENT, message: publicMessage(e.message) };
      if (e instanceof SpoolWriteError) return { code: GrpcCode.UNAVAILABLE, message: e.message };
      throw e;
    }
  }

  private refuse(stream: ServerHttp2Stream, refusal: Refusal): void {
    if (refusal.status === 503) return this.status(stream, GrpcCode.UNAVAILABLE, refusal.why);
    this.status(stream, GrpcCode.RESOURCE_EXHAUSTED, refusal.why, retryInfoHeader(refusal));
  }

  private ok(stream: ServerHttp2Stream, response: Uint8Array): void {
    if (stream.destroyed || stream.headersSent) return;
    const frame = Buffer.allocUnsafe(5 + response.byteLength);
    frame.writeUInt8(0, 0);
    frame.writeUInt32BE(response.byteLength, 1);
    frame.set(response, 5);
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-encoding': 'identity' }, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': String(GrpcCode.OK), 'grpc-message': '' }));
    stream.end(frame);
  }

  /**
   * A trailers-only answer. When the client is still sending (a message refused from its length
   * prefix), the stream is then reset with NO_ERROR, which tells an HTTP/2 client to stop
   * sending without discarding the answer (RFC 9113 §8.1).
   */
  private status(stream: ServerHttp2Stream, code: number, message: string, extra: Record<string, string> = {}): void {
    if (stream.destroyed || stream.headersSent) return;
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code), 'grpc-message': encodeURIComponent(message), ...extra }, { endStream: true });
    if (!stream.readableEnded) {
      stream.resume();
      stream.close(constants.NGHTTP2_NO_ERROR);
    }
  }
}

function retryInfoHeader(refusal: Refusal): Record<string, string> {
  return { 'grpc-status-details-bin': Buffer.from(statusWithRetryInfo(GrpcCode.RESOURCE_EXHAUSTED, refusal.why, refusal.retryAfterSeconds)).toString('base64') };
}
