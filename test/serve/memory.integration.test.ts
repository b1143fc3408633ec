/**
 * Issue 28, point 1 and Deliver 2: serve's memory is bounded in bytes, by one limit. The
 * reproductions at a size the suite can run: a flood of spans with large attributes, one trace
 * that keeps growing, and a full server answering 429 / RESOURCE_EXHAUSTED with RetryInfo.
 */
import { fromBinary } from '@bufbuild/protobuf';
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { DurationSchema } from '@bufbuild/protobuf/wkt';
import { credentials, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequest } from '../../src/formats/protobuf/codec.js';
import { StatusSchema } from '../../src/formats/protobuf/gen/google/rpc/status_pb.js';
import type { Span } from '../../src/formats/protobuf/gen/opentelemetry/proto/trace/v1/trace_pb.js';
import { EXPORT_PATH } from '../../src/serve/grpc.js';
import { spanBytes } from '../../src/serve/span-size.js';
import { agentTrace, attributes, hexId, type OtlpSpan } from '../support/otlp.js';
import { FakeDownstream } from './downstream.js';
import { json, postJson, protobuf, rootless, sleep, startServe, until } from './support.js';

const MiB = 1024 * 1024;

/** One rootless span (held until the trace wait) with a `size`-character attribute. */
function bigSpan(label: string, size: number, traceLabel = label): OtlpSpan {
  const now = BigInt(Date.now()) * 1_000_000n;
  return {
    traceId: hexId(`trace:${traceLabel}`, 16),
    spanId: hexId(`span:${label}`, 8),
    parentSpanId: hexId(`parent:${traceLabel}`, 8),
    name: 'work',
    kind: 1,
    startTimeUnixNano: String(now),
    endTimeUnixNano: String(now + 1_000_000n),
    attributes: attributes({ payload: 'x'.repeat(size) }),
  };
}

describe('serve memory is bounded in bytes', () => {
  it('a flood of 1 MB-attribute spans: used memory stays within the limit (plus the requests being read), 429 with Retry-After at the limit, every accepted span forwarded', async () => {
    const down = await new FakeDownstream().start();
    down.delayMs = 40; // slower than the flood: the queue fills
    const limit = 12 * MiB;
    const { server, base } = await startServe({ limits: { maxMemory: limit, maxBody: 2 * MiB, traceWait: 60_000 } }, down);
    let maxUsed = 0;
    const sample = setInterval(() => (maxUsed = Math.max(maxUsed, server.budget.used)), 2);
    const accepted = new Set<string>();
    const retryAfters: number[] = [];
    let next = 0;
    const requests = 40;
    const worker = async (): Promise<void> => {
      while (next < requests) {
        const span = bigSpan(`flood-${next++}`, 1_000_000);
        for (;;) {
          const res = await postJson(base, json([span]));
          maxUsed = Math.max(maxUsed, server.budget.used);
          if (res.status === 200) {
            accepted.add(span.spanId);
            break;
          }
          expect(res.status).toBe(429);
          retryAfters.push(Number(res.headers.get('retry-after')));
          await sleep(30);
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    clearInterval(sample);
    // the last traces are still held (no root, a minute's trace wait): the shutdown forwards them
    expect(await server.close(20_000)).toBe(0);
    expect(accepted.size).toBe(requests);
    expect(new Set(down.spans.map((s) => s.spanId))).toEqual(accepted);
    // refused while full, with a Retry-After a client can follow
    expect(retryAfters.length).toBeGreaterThan(0);
    expect(retryAfters.every((s) => s >= 1)).toBe(true);
    // the held share made room by forwarding the oldest traces early (counted)
    expect(server.stats.tracesCutByBound).toBeGreaterThan(0);
    // at most the limit, plus the four requests in flight (a body read, then its decoded span)
    const oneRequest = decodedSpans(json([bigSpan('probe', 1_000_000)])).reduce((n, s) => n + spanBytes(s), 0);
    expect(maxUsed).toBeLessThanOrEqual(limit + 4 * 2 * oneRequest);
    expect(maxUsed).toBeGreaterThan(limit / 2);
    // nothing left accounted once everything is forwarded (only the remembered traces' state)
    expect(server.budget.usage()).toMatchObject({ reading: 0, held: 0, queued: 0 });
  }, 60_000);

  it('one trace that keeps growing is cut when it outgrows its share and forwarded as it is, with a counter; its later spans continue it, and its loop is reported once', async () => {
    const limit = 2 * MiB; // a trace's share: 256 KiB
    const { server, base, down } = await startServe({ limits: { maxMemory: limit, traceWait: 60_000 } });
    const loop = rootless(agentTrace({ label: 'growing', prompt: 'p', steps: Array.from({ length: 6 }, () => ({ tool: 'search', args: { q: 'same' }, result: 'none' })) }));
    const detections: string[] = [];
    let maxHeld = 0;
    for (const s of loop) {
      // each span carries 100 KB: the trace passes its share every few spans
      const span = { ...s, attributes: [...s.attributes, ...attributes({ payload: 'y'.repeat(100_000) })] };
      expect((await postJson(base, json([span]))).status).toBe(200);
      maxHeld = Math.max(maxHeld, server.pipeline.heldBytes);
    }
    await until(() => down.spans.length === loop.length, 'the cut pieces downstream');
    expect(server.stats.tracesCut).toBeGreaterThanOrEqual(2);
    expect(maxHeld).toBeLessThanOrEqual(server.budget.traceShare + 120_000);
    for (const s of down.spans) for (const e of s.events) if (e.name === 'loop.detected') detections.push(String(e.attributes['loop.level']));
    // the engine saw the whole history across the pieces: one warning, one critical, no repeats
    expect(detections.sort()).toEqual(['critical', 'warning']);
    expect(new Set(down.spans.map((s) => s.spanId)).size).toBe(loop.length);
  });

  it('accounts bytes as they move: held while the trace is open, queued while the downstream does not answer, none once forwarded', async () => {
    const down = await new FakeDownstream().start();
    down.hang = true;
    const { server, base } = await startServe({ limits: { forwardTimeout: 60_000 } }, down);
    const spans = agentTrace({ label: 'accounted', prompt: 'p', steps: [{ tool: 'a', args: { x: 1 }, result: 'r' }] });
    const decoded = decodedSpans(protobuf(spans));
    const estimate = decoded.reduce((n, s) => n + spanBytes(s), 0);
    expect((await postJson(base, json(rootless(spans)))).status).toBe(200);
    expect(server.budget.usage().held).toBeGreaterThanOrEqual(decoded.slice(0, -1).reduce((n, s) => n + spanBytes(s), 0));
    expect((await postJson(base, json(spans.slice(-1)))).status).toBe(200);
    await until(() => server.stats.queuedSpans === spans.length, 'the trace queued');
    // the resource and scope are shared by the request's spans: each carries a part of them
    expect(server.budget.usage().queued).toBeGreaterThanOrEqual(estimate);
    expect(server.budget.usage().held).toBe(0);
    expect(server.budget.usage().retained).toBeGreaterThan(0);
    down.hang = false;
    await server.close(100);
    expect(server.budget.usage()).toMatchObject({ reading: 0, held: 0 });
  });

  it('at the limit, gRPC gets RESOURCE_EXHAUSTED with a RetryInfo (what the collector retries on), HTTP 429; /healthz says 503 and /livez 200', async () => {
    const down = await new FakeDownstream().start();
    down.hang = true;
    const { server, base, port } = await startServe({ limits: { maxMemory: 64 * 1024, forwardTimeout: 60_000 } }, down);
    for (let i = 0; !server.budget.full && i < 100; i++) await postJson(base, json([bigSpan(`fill-${i}`, 20_000)]));
    expect(server.budget.full).toBe(true);
    const http = await postJson(base, json(loopSpansSmall()));
    expect(http.status).toBe(429);
    expect(Number(http.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await http.json()) as { message: string }).message).toMatch(/memory is full/);
    expect((await fetch(`${base}/healthz`)).status).toBe(503);
    const live = await fetch(`${base}/livez`);
    expect(live.status).toBe(200);
    expect(((await live.json()) as { memory: { limit: number } }).memory.limit).toBe(64 * 1024);

    const Client = makeGenericClientConstructor(
      { Export: { path: EXPORT_PATH, requestStream: false, responseStream: false, requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b } },
      'TraceService',
    );
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    const err = await new Promise<ServiceError | null>((resolve) =>
      (client as unknown as { Export: (b: Buffer, cb: (e: ServiceError | null) => void) => void }).Export(Buffer.from(protobuf(loopSpansSmall())), (e) => resolve(e)),
    );
    client.close();
    expect(err?.code).toBe(8); // RESOURCE_EXHAUSTED
    const details = err?.metadata.get('grpc-status-details-bin')[0];
    expect(details).toBeInstanceOf(Buffer);
    const status = fromBinary(StatusSchema, details as Buffer);
    expect(status.code).toBe(8);
    expect(status.details[0]?.typeUrl).toBe('type.googleapis.com/google.rpc.RetryInfo');
    // RetryInfo { Duration retry_delay = 1 }
    const reader = new BinaryReader(status.details[0]?.value ?? new Uint8Array());
    const [field] = reader.tag();
    expect(field).toBe(1);
    const delay = fromBinary(DurationSchema, reader.bytes());
    expect(Number(delay.seconds)).toBeGreaterThanOrEqual(1);
  });
});

function decodedSpans(body: string | Uint8Array): Span[] {
  const request = typeof body === 'string' ? decodeTraceRequest(Buffer.from(body), 'json') : decodeTraceRequest(body, 'protobuf');
  return request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}

function loopSpansSmall(): OtlpSpan[] {
  return agentTrace({ label: `small-${Math.random()}`, prompt: 'p', steps: [{ tool: 'a', args: {}, result: 'r' }] });
}
