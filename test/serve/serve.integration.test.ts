import { fromBinary, fromJson, type JsonValue } from '@bufbuild/protobuf';
import { credentials, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeTracesData } from '../../src/formats/otlp-json.js';
import { defaultAdapters } from '../../src/conventions/index.js';
import { LoopEngine } from '../../src/detector/engine.js';
import type { LoopDetection } from '../../src/detector/types.js';
import { decodeTraceRequest, encodeTraceRequest } from '../../src/formats/protobuf/codec.js';
import { StatusSchema as RpcStatusSchema } from '../../src/formats/protobuf/gen/google/rpc/status_pb.js';
import { ExportTraceServiceResponseSchema } from '../../src/formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import { retryAfterMs } from '../../src/serve/forwarder.js';
import { LoopwatchServer, tracesUrl, type ServeOptions } from '../../src/serve/server.js';
import { TraceReplayer } from '../../src/replay/trace-replay.js';
import { agentTrace, attributes, batches, hexId, interleave, tracesData, type OtlpSpan } from '../support/otlp.js';
import { FakeDownstream } from './downstream.js';

const running: { server?: LoopwatchServer; down?: FakeDownstream }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.server?.close(2_000);
    await r.down?.stop();
  }
});

async function start(options: Partial<ServeOptions> = {}, down?: FakeDownstream) {
  const downstream = down ?? (await new FakeDownstream().start());
  const detections: LoopDetection[] = [];
  const server = new LoopwatchServer({
    port: 0,
    forward: downstream.url,
    log: () => undefined,
    onTrace: (t) => detections.push(...t.detections),
    ...options,
    limits: { traceWait: 2_000, quietAfterRoot: 50, ...options.limits },
  });
  const { port } = await server.listen();
  running.push({ server, down: downstream });
  return { server, down: downstream, detections, base: `http://127.0.0.1:${port}` };
}

const loopSpans = (label: string, prompt = 'support', n = 5): OtlpSpan[] =>
  agentTrace({ label, prompt, steps: Array.from({ length: n }, () => ({ tool: 'search', args: { q: 'weather' }, result: { items: [] } })) });
const honestSpans = (label: string): OtlpSpan[] =>
  agentTrace({ label, prompt: 'support', steps: Array.from({ length: 5 }, (_, i) => ({ tool: 'search', args: { page: i }, result: { page: i, items: [i] } })) });

function post(base: string, body: Uint8Array | string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${base}/v1/traces`, { method: 'POST', headers, body });
}
const json = (spans: OtlpSpan[], service?: string): string => JSON.stringify(tracesData(spans, service));
const protobuf = (spans: OtlpSpan[], service?: string): Uint8Array => encodeTraceRequest(decodeTraceRequest(Buffer.from(json(spans, service)), 'json'), 'protobuf');

async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('loopwatch serve: OTLP/HTTP in, annotated spans out', () => {
  it('forwards every span once, with loop.detected events on the tool spans that completed the evidence', async () => {
    const { base, down } = await start();
    const loop = loopSpans('fwd-loop');
    const honest = honestSpans('fwd-honest');
    const res = await post(base, json(interleave(loop, honest)), { 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({});
    await until(() => down.spans.length === loop.length + honest.length, 'all spans downstream');
    expect(new Set(down.spans.map((s) => s.spanId)).size).toBe(down.spans.length);
    const withEvents = down.spans.filter((s) => s.events.some((e) => e.name === 'loop.detected'));
    expect(withEvents.map((s) => s.spanId).sort()).toEqual([hexId('tool:fwd-loop:2:0', 8), hexId('tool:fwd-loop:4:0', 8)].sort());
    const critical = withEvents.flatMap((s) => s.events).find((e) => e.attributes['loop.level'] === 'critical');
    expect(critical?.attributes).toMatchObject({
      'loop.kind': 'repeat',
      'loop.level': 'critical',
      'loop.count': 5,
      'loop.call_index': 5,
      'gen_ai.tool.name': 'search',
      'gen_ai.prompt.name': 'support',
    });
    expect(String(critical?.attributes['loop.fingerprint'])).toMatch(/^[0-9a-f]+$/);
    // no raw arguments or results in the event
    expect(JSON.stringify(critical?.attributes)).not.toContain('weather');
    expect(down.spans.filter((s) => s.traceId === hexId('trace:fwd-honest', 16)).flatMap((s) => s.events)).toEqual([]);
  });

  it('reads OpenInference tool spans, and writes the gen_ai keys and the prompt name the collector counts by', async () => {
    const { base, down, detections } = await start({ forwardProtocol: 'json' });
    const traceId = hexId('trace:oi', 16);
    const root = hexId('root:oi', 8);
    const t0 = Date.parse('2026-11-21T10:00:00Z');
    const ns = (ms: number): string => `${BigInt(ms) * 1_000_000n}`;
    const spans: OtlpSpan[] = [];
    for (let i = 0; i < 5; i++) {
      spans.push({
        traceId,
        spanId: hexId(`oi:${i}`, 8),
        parentSpanId: root,
        name: 'lookup_order',
        kind: 1,
        startTimeUnixNano: ns(t0 + i * 100),
        endTimeUnixNano: ns(t0 + i * 100 + 10),
        attributes: attributes({ 'openinference.span.kind': 'TOOL', 'tool.name': 'lookup_order', 'input.value': '{"order_id": 7}', 'output.value': '{"status": "unknown"}' }),
      });
    }
    spans.push({
      traceId,
      spanId: root,
      name: 'agent',
      kind: 1,
      startTimeUnixNano: ns(t0 - 10),
      endTimeUnixNano: ns(t0 + 1_000),
      attributes: attributes({ 'openinference.span.kind': 'AGENT', 'gen_ai.prompt.name': 'orders' }),
    });
    expect((await post(base, json(spans), { 'content-type': 'application/json' })).status).toBe(200);
    await until(() => down.spans.length === spans.length, 'OpenInference spans downstream');
    expect(detections.map((d) => [d.toolName, d.level, d.promptName])).toEqual([
      ['lookup_order', 'warning', 'orders'],
      ['lookup_order', 'critical', 'orders'],
    ]);
    const tools = down.spans.filter((s) => s.name === 'lookup_order');
    expect(tools).toHaveLength(5);
    for (const s of tools) {
      expect(s.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order', 'gen_ai.prompt.name': 'orders' });
      // hex ids in OTLP/JSON (parsed independently of the codec)
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it('rebuilds a trace from many requests, both encodings and gzip, out of order: the same detections as scan', async () => {
    // the roots come first: a quiet time longer than a busy machine's gap between two requests,
    // so that no trace is taken as complete before its last request
    const { base, down, detections } = await start({ limits: { quietAfterRoot: 1_000, traceWait: 10_000 } });
    const traces = [loopSpans('multi-a', 'a', 7), honestSpans('multi-b'), loopSpans('multi-c', 'c', 4)];
    const all = interleave(...traces);
    // root spans first (a tail sampler regrouping), then the rest shuffled in small requests
    const roots = all.filter((s) => s.parentSpanId === undefined);
    const rest = all.filter((s) => s.parentSpanId !== undefined).reverse();
    let i = 0;
    for (const batch of [roots, ...batches(rest, 3)]) {
      const enc = i++ % 3;
      const res =
        enc === 0
          ? await post(base, protobuf(batch), { 'content-type': 'application/x-protobuf' })
          : enc === 1
            ? await post(base, gzipSync(json(batch)), { 'content-type': 'application/json', 'content-encoding': 'gzip' })
            : await post(base, gzipSync(protobuf(batch)), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
      expect(res.status).toBe(200);
    }
    await until(() => down.spans.length === all.length, 'every span downstream');
    const scanDetections: LoopDetection[] = [];
    const scan = new TraceReplayer({ engine: new LoopEngine(), adapters: defaultAdapters, onTrace: (t) => scanDetections.push(...t.detections) });
    for (const s of decodeTracesData(tracesData(all))) scan.add(s);
    scan.finish();
    const key = (d: LoopDetection): string => [d.traceId, d.spanId, d.kind, d.level, d.callIndex, d.fingerprint].join(' ');
    expect(detections.map(key).sort()).toEqual(scanDetections.map(key).sort());
    expect(detections.length).toBeGreaterThanOrEqual(3);
  });

  it('answers as the OTLP/HTTP spec says: 400 with a Status for bad data, 415, 413, 405, 404, partial success for spans without valid ids', async () => {
    const { base } = await start({ limits: { maxBody: 64 * 1024 } });
    const bad = await post(base, new Uint8Array([0x0a, 0xff, 0xff, 0xff]), { 'content-type': 'application/x-protobuf' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('application/x-protobuf');
    expect(fromBinary(RpcStatusSchema, new Uint8Array(await bad.arrayBuffer())).message).toMatch(/not a protobuf ExportTraceServiceRequest/);
    const badJson = await post(base, '{"resourceSpans": [', { 'content-type': 'application/json' });
    expect(badJson.status).toBe(400);
    expect(((await badJson.json()) as { message: string }).message).toMatch(/not JSON/);
    expect((await post(base, json(honestSpans('x')), { 'content-type': 'text/plain' })).status).toBe(415);
    const huge = json(Array.from({ length: 200 }, () => honestSpans('big')).flat());
    expect((await post(base, huge, { 'content-type': 'application/json' })).status).toBe(413);
    expect((await post(base, gzipSync(huge), { 'content-type': 'application/json', 'content-encoding': 'gzip' })).status).toBe(413);
    expect((await fetch(`${base}/v1/traces`)).status).toBe(405);
    expect((await fetch(`${base}/v1/metrics`, { method: 'POST', body: '{}' })).status).toBe(404);

    const spans = honestSpans('partial');
    const broken = { ...(spans[0] as OtlpSpan), traceId: 'abcd' };
    const res = await post(base, protobuf([broken, ...spans.slice(1)]), { 'content-type': 'application/x-protobuf' });
    expect(res.status).toBe(200);
    const partial = fromBinary(ExportTraceServiceResponseSchema, new Uint8Array(await res.arrayBuffer())).partialSuccess;
    expect(partial?.rejectedSpans).toBe(1n);
    expect(partial?.errorMessage).toMatch(/without a valid trace id/);
    const resJson = await post(base, json([broken]), { 'content-type': 'application/json' });
    const partialJson = fromJson(ExportTraceServiceResponseSchema, (await resJson.json()) as JsonValue).partialSuccess;
    expect(partialJson?.rejectedSpans).toBe(1n);
    // an empty request is a success
    expect((await post(base, '{}', { 'content-type': 'application/json' })).status).toBe(200);
  });

  it('holds spans while the downstream is down (retrying), refuses with 429 + Retry-After when memory is full, then delivers each span exactly once', async () => {
    const down = await new FakeDownstream().start();
    down.status = 503;
    down.retryAfter = '1';
    // room for about two of these 11-span traces
    const { base, server } = await start({ limits: { maxMemory: 2 * 11 * 1_000, quietAfterRoot: 10 } }, down);
    const sent: OtlpSpan[] = [];
    const send = async (label: string): Promise<Response> => {
      const spans = honestSpans(label);
      const res = await post(base, json(spans), { 'content-type': 'application/json' });
      if (res.status === 200) sent.push(...spans);
      return res;
    };
    // two traces of 11 spans fill the memory before the downstream answered: 429
    expect((await send('outage-0')).status).toBe(200);
    expect((await send('outage-1')).status).toBe(200);
    await until(() => server.budget.full, 'memory full');
    // once the downstream has failed, the refusal says it is the downstream
    await until(() => down.requests.some((r) => r.status === 503), 'a failed forward');
    const refused = await send('outage-3');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('content-type')).toBe('application/json');
    expect(((await refused.json()) as { message: string }).message).toMatch(/downstream/);
    expect((await fetch(`${base}/healthz`)).status).toBe(503);
    down.status = 200;
    await until(() => down.spans.length >= sent.length, 'spans delivered after the outage', 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(down.spans.map((s) => s.spanId).sort()).toEqual(sent.map((s) => s.spanId).sort());
    expect(sent).toHaveLength(22);
    expect(server.stats.droppedSpans).toBe(0);
    expect(server.stats.retries).toBeGreaterThan(0);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('on close, evaluates and forwards the traces it still holds', async () => {
    const { server, down } = await start({ limits: { traceWait: 60_000 } });
    // no root: would be held for a minute
    const spans = loopSpans('held', 'p', 5).slice(0, -1);
    expect((await post(`http://127.0.0.1:${server.address?.port}`, json(spans), { 'content-type': 'application/json' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    expect(down.spans).toHaveLength(0);
    expect(await server.close(5_000)).toBe(0);
    expect(down.spans).toHaveLength(spans.length);
    expect(down.spans.flatMap((s) => s.events).filter((e) => e.name === 'loop.detected')).toHaveLength(2);
  });

  it('takes OTLP/gRPC on the same port (what the load_balancing exporter sends)', async () => {
    const { server, down } = await start();
    const Client = makeGenericClientConstructor(
      {
        Export: {
          path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
          requestStream: false,
          responseStream: false,
          requestSerialize: (b: Buffer) => b,
          requestDeserialize: (b: Buffer) => b,
          responseSerialize: (b: Buffer) => b,
          responseDeserialize: (b: Buffer) => b,
        },
      },
      'TraceService',
    );
    const client = new Client(`127.0.0.1:${server.address?.port}`, credentials.createInsecure(), { 'grpc.default_compression_algorithm': 2 });
    const call = (body: Uint8Array) =>
      new Promise<{ err: ServiceError | null; res?: Buffer }>((resolve) =>
        (client as unknown as { Export: (b: Buffer, cb: (err: ServiceError | null, res?: Buffer) => void) => void }).Export(Buffer.from(body), (err, res) => resolve({ err, ...(res ? { res } : {}) })),
      );
    const spans = loopSpans('grpc');
    const ok = await call(protobuf(spans));
    expect(ok.err).toBeNull();
    expect(fromBinary(ExportTraceServiceResponseSchema, ok.res as Buffer).partialSuccess).toBeUndefined();
    const bad = await call(new Uint8Array([0x0a, 0xff, 0xff]));
    expect(bad.err?.code).toBe(3); // INVALID_ARGUMENT
    await until(() => down.spans.length === spans.length, 'gRPC spans downstream');
    expect(down.spans.flatMap((s) => s.events).filter((e) => e.name === 'loop.detected')).toHaveLength(2);
    client.close();
  });
});

describe('serve helpers', () => {
  it('Retry-After: seconds or an HTTP date, capped', () => {
    expect(retryAfterMs('3')).toBe(3_000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 5_000)).toBe(5_000);
    expect(retryAfterMs('99999')).toBe(300_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });

  it('forward URL is the base plus /v1/traces', () => {
    expect(tracesUrl('http://gw:4318')).toBe('http://gw:4318/v1/traces');
    expect(tracesUrl('http://gw:4318/otlp/')).toBe('http://gw:4318/otlp/v1/traces');
  });
});
