/**
 * Issue 28, points 3, 4 and 6: connections are bounded in time and number, every request gets an
 * answer (a corrupt compressed body too), and the forward timeout is set, fires, and is counted.
 */
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FakeDownstream } from './downstream.js';
import { frame, grpcCall, h2, json, loopSpans, postJson, protobuf, startServe, until } from './support.js';

/** Opens a raw TCP connection; resolves once connected, with when it closed (ms after opening), if it did. */
function rawConnection(port: number): Promise<{ socket: Socket; closedAfter: () => number | undefined; received: () => string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let closed: number | undefined;
    let data = '';
    const socket = connect(port, '127.0.0.1', () => resolve({ socket, closedAfter: () => closed, received: () => data }));
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    socket.on('close', () => (closed = performance.now() - t0));
    socket.on('error', reject);
  });
}

describe('serve connections: bounded in time and number', () => {
  it('closes connections that send nothing after the headers timeout (the idle-connection flood)', async () => {
    const { server, port } = await startServe({ limits: { headersTimeout: 300 } });
    let most = 0;
    const sample = setInterval(() => (most = Math.max(most, server.stats.connections)), 5);
    const idle = await Promise.all(Array.from({ length: 200 }, () => rawConnection(port)));
    // on a busy machine the first ones may already be closed before the last one is open
    await until(() => idle.every((c) => c.closedAfter() !== undefined), 'every idle connection closed', 10_000);
    clearInterval(sample);
    expect(most).toBeGreaterThan(100);
    for (const c of idle) expect(c.closedAfter()).toBeGreaterThanOrEqual(250);
    expect(server.stats.connections).toBe(0);
    // and the server still answers
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });

  it('answers 408 to headers that do not complete within the headers timeout, and to a body that does not within the request timeout; closes idle keep-alive connections', async () => {
    const { port } = await startServe({ limits: { headersTimeout: 300, requestTimeout: 600, idleTimeout: 400 } });
    const slowHeaders = await rawConnection(port);
    slowHeaders.socket.write('POST /v1/traces HTTP/1.1\r\nHost: x\r\n');
    const slowBody = await rawConnection(port);
    slowBody.socket.write('POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"resou');
    const keepAlive = await rawConnection(port);
    keepAlive.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => [slowHeaders, slowBody, keepAlive].every((c) => c.closedAfter() !== undefined), 'all three closed', 5_000);
    expect(slowHeaders.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(slowHeaders.closedAfter()).toBeLessThan(2_000);
    expect(slowBody.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(slowBody.closedAfter()).toBeGreaterThanOrEqual(550);
    expect(keepAlive.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(keepAlive.closedAfter()).toBeGreaterThanOrEqual(350);
  });

  it('gRPC: a call whose message does not arrive within the request timeout is CANCELLED; a connection with no call is closed after the idle timeout', async () => {
    const { port } = await startServe({ limits: { headersTimeout: 200, requestTimeout: 400, idleTimeout: 500 } });
    const session = h2(port);
    const started = performance.now();
    const stream = session.request({ ':method': 'POST', ':path': '/opentelemetry.proto.collector.trace.v1.TraceService/Export', 'content-type': 'application/grpc', te: 'trailers' });
    stream.write(frame(protobuf(loopSpans('slow-grpc'))).subarray(0, 20));
    const status = await new Promise<string | undefined>((resolve) => {
      let s: string | undefined;
      stream.on('response', (h) => (s = String(h['grpc-status'] ?? s)));
      stream.on('trailers', (h) => (s = String(h['grpc-status'])));
      stream.on('error', () => undefined);
      stream.on('close', () => resolve(s));
    });
    expect(status).toBe('1'); // CANCELLED
    expect(performance.now() - started).toBeLessThan(2_000);
    const t0 = performance.now();
    await new Promise<void>((resolve) => session.on('close', () => resolve()));
    expect(performance.now() - t0).toBeLessThan(3_000);
  });

  it('closes connections past --max-connections at once', async () => {
    const { server, port } = await startServe({ limits: { maxConnections: 5, headersTimeout: 5_000 } });
    const held = await Promise.all(Array.from({ length: 5 }, () => rawConnection(port)));
    await until(() => server.stats.connections === 5, 'five connections');
    const extra = await rawConnection(port);
    await until(() => extra.closedAfter() !== undefined, 'the sixth closed');
    expect(held.every((c) => c.closedAfter() === undefined)).toBe(true);
    for (const c of held) c.socket.destroy();
  });

  it('answers 400 at once to a compressed body that does not match its Content-Encoding (no request left pending)', async () => {
    const { base } = await startServe();
    const body = json(loopSpans('corrupt'));
    const gz = gzipSync(body);
    const cases: [Uint8Array | string, string][] = [
      [body, 'gzip'], // JSON labelled gzip
      [gz, 'deflate'], // gzip labelled deflate
      [gz.subarray(0, gz.length - 20), 'gzip'], // truncated gzip
    ];
    for (const [payload, encoding] of cases) {
      const t0 = performance.now();
      const res = await postJson(base, payload, { 'content-encoding': encoding });
      expect(res.status, encoding).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(new RegExp(`not valid ${encoding} data`));
      expect(performance.now() - t0).toBeLessThan(2_000);
    }
    // the same over gRPC: INTERNAL, not silence
    const session = h2(Number(new URL(base).port));
    const answer = await grpcCall(session, frame(Buffer.from('not gzip at all'), true), { 'grpc-encoding': 'gzip' });
    session.close();
    expect(answer.status).toBe(13);
  });
});

describe('serve forwarding: timeout and retry budget', () => {
  it('a downstream slower than --forward-timeout gets the batch again (at least once, each timeout counted); one within it gets each span once', async () => {
    const slow = await new FakeDownstream().start();
    slow.delayMs = 700;
    const spans = loopSpans('slow-sink');
    const impatient = await startServe({ limits: { forwardTimeout: 200, quietAfterRoot: 20 } }, slow);
    expect((await postJson(impatient.base, json(spans))).status).toBe(200);
    await until(() => impatient.server.stats.forwardTimeouts >= 2, 'two timeouts', 10_000);
    await until(() => slow.spans.length >= 2 * spans.length, 'the batch received twice', 10_000);
    const copies = new Map<string, number>();
    for (const s of slow.spans) copies.set(s.spanId, (copies.get(s.spanId) ?? 0) + 1);
    expect(Math.min(...copies.values())).toBeGreaterThanOrEqual(2);

    const patientSink = await new FakeDownstream().start();
    patientSink.delayMs = 700;
    const patient = await startServe({ limits: { forwardTimeout: 5_000, quietAfterRoot: 20 } }, patientSink);
    expect((await postJson(patient.base, json(spans))).status).toBe(200);
    await until(() => patient.server.stats.forwardedSpans === spans.length, 'forwarded', 10_000);
    expect(patientSink.spans).toHaveLength(spans.length);
    expect(patient.server.stats.forwardTimeouts).toBe(0);
  });

  it('gives a batch up after --forward-retry-for, counted as dropped, and logs it', async () => {
    const down = await new FakeDownstream().start();
    down.status = 503;
    const { server, base, logs } = await startServe({ limits: { forwardRetryFor: 600, quietAfterRoot: 20 } }, down);
    const spans = loopSpans('given-up');
    expect((await postJson(base, json(spans))).status).toBe(200);
    await until(() => server.stats.droppedSpans === spans.length, 'dropped after the retry period', 10_000);
    expect(server.stats.retries).toBeGreaterThan(0);
    expect(logs.some((l) => /dropped \d+ spans that the downstream did not take: still failing/.test(l))).toBe(true);
    expect(server.budget.usage().queued).toBe(0);
  });
});
