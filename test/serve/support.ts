/** What the serve tests share: an in-process server with a fake downstream, requests, and raw gRPC calls. */
import { connect, constants, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { afterEach } from 'vitest';
import { decodeTraceRequest, encodeTraceRequest } from '../../src/formats/protobuf/codec.js';
import { EXPORT_PATH } from '../../src/serve/grpc.js';
import { LoopwatchServer, type ServeOptions } from '../../src/serve/server.js';
import { agentTrace, tracesData, type OtlpSpan } from '../support/otlp.js';
import { FakeDownstream } from './downstream.js';

const running: { server?: LoopwatchServer; down?: FakeDownstream }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.server?.close(500);
    await r.down?.stop();
  }
});

/** A server on a free port with short trace timings, forwarding to a fake downstream (stopped after the test). */
export async function startServe(options: Partial<ServeOptions> = {}, down?: FakeDownstream) {
  const downstream = down ?? (await new FakeDownstream().start());
  const logs: string[] = [];
  const server = new LoopwatchServer({
    port: 0,
    forward: downstream.url,
    log: (level, message) => logs.push(`${level}: ${message}`),
    ...options,
    limits: { traceWait: 2_000, quietAfterRoot: 50, ...options.limits },
  });
  const { port } = await server.listen();
  running.push({ server, down: downstream });
  return { server, down: downstream, port, base: `http://127.0.0.1:${port}`, logs };
}

export async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const json = (spans: OtlpSpan[], service?: string): string => JSON.stringify(tracesData(spans, service));
export const protobuf = (spans: OtlpSpan[], service?: string): Uint8Array => encodeTraceRequest(decodeTraceRequest(Buffer.from(json(spans, service)), 'json'), 'protobuf');

export function postJson(base: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

export const loopSpans = (label: string, n = 5): OtlpSpan[] =>
  agentTrace({ label, prompt: 'support', steps: Array.from({ length: n }, () => ({ tool: 'search', args: { q: 'weather' }, result: { items: [] } })) });

/** The spans of a trace without its root: held until the trace wait. */
export const rootless = (spans: OtlpSpan[]): OtlpSpan[] => spans.filter((s) => s.parentSpanId !== undefined);

export interface GrpcAnswer {
  readonly status: number | undefined;
  readonly message: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** RST_STREAM code when the stream was reset (0: NO_ERROR). */
  readonly rstCode: number | undefined;
  readonly error: string | undefined;
}

/**
 * One unary Export call on a raw HTTP/2 session, as a gRPC client that writes its whole message
 * at once does (Go's gRPC, the collector): the framed message is given as is, so tests can send
 * what a library would refuse to (a wrong flag, an oversize length). The status is read from
 * the trailers or from a trailers-only answer.
 */
export function grpcCall(session: ClientHttp2Session, framed: Uint8Array, headers: Record<string, string> = {}): Promise<GrpcAnswer> {
  return new Promise((resolve) => {
    const stream = session.request({ ':method': 'POST', ':path': EXPORT_PATH, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    let response: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let error: string | undefined;
    stream.on('response', (h) => (response = h));
    stream.on('trailers', (h) => (trailers = h));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', (e) => (error = e.message));
    stream.on('close', () => {
      const all = { ...response, ...trailers };
      const status = all['grpc-status'];
      resolve({
        status: status === undefined ? undefined : Number(status),
        message: decodeURIComponent(String(all['grpc-message'] ?? '')),
        headers: all,
        body: Buffer.concat(chunks),
        rstCode: stream.rstCode,
        error,
      });
    });
    stream.end(framed);
  });
}

/** A gRPC length-prefixed message: flag (1 = compressed), length, bytes. */
export function frame(message: Uint8Array, compressed = false, length = message.byteLength): Buffer {
  const out = Buffer.alloc(5 + message.byteLength);
  out.writeUInt8(compressed ? 1 : 0, 0);
  out.writeUInt32BE(length, 1);
  out.set(message, 5);
  return out;
}

export function h2(port: number): ClientHttp2Session {
  const session = connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  return session;
}

export { constants as h2constants };
