/**
 * The proxy's span of a `tools/call` is made off the request's path (when it is first written
 * to: its end, for a call relayed without a finding) and still says when the call came in: the
 * real OTLP/HTTP JSON exporter, received by a local HTTP endpoint.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LoopDetection } from '../../src/detector/types.js';
import { McpTelemetry } from '../../src/mcp/telemetry.js';

interface OtlpSpan {
  readonly name: string;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly events?: readonly { readonly name: string; readonly timeUnixNano: string }[];
}

const received: OtlpSpan[] = [];
let server: Server;
const saved = { ...process.env };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) received.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // the SDK's exporter reads the process's environment itself
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL = 'http/json';
});

afterAll(async () => {
  process.env = saved;
  await new Promise((resolve) => server.close(resolve));
});

const nanos = (ms: number): bigint => BigInt(Math.round(ms * 1e6));
const detection: LoopDetection = {
  kind: 'error_pattern',
  level: 'warning',
  toolName: 'fetch_page',
  count: 3,
  callIndex: 2,
  traceId: '',
  spanId: '',
  fingerprint: 'f',
  message: 'the same failure 3 times',
  rule: 'repeated_failure',
  threshold: 3,
  evidence: 'arguments+result',
  mode: 'enforce',
  evidenceStartTime: 0,
  evidenceCalls: 3,
};

it("a relayed call's span starts when the request came in and ends when the result did, made at its end", async () => {
  const telemetry = await McpTelemetry.fromEnv(
    { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' },
    'test',
    () => undefined,
  );
  const start = { toolName: 'fetch_page', sessionId: 's', transport: 'pipe', protocolVersion: '2025-06-18', meta: undefined } as const;
  const before = Date.now();
  const relayed = telemetry.startToolCall({ ...start, requestId: 1 });
  const after = Date.now();
  await sleep(60);
  const resultAt = performance.now();
  await sleep(30);
  // read after its relay: ended with the time the result arrived
  relayed.end({ kind: 'result', isError: false }, resultAt);

  const hinted = telemetry.startToolCall({ ...start, requestId: 2 });
  await sleep(20);
  const hintBefore = Date.now();
  hinted.loopDetected(detection, 'hinted');
  hinted.end({ kind: 'answered', action: 'hinted' });
  await telemetry.shutdown();

  expect(received.map((s) => s.name)).toEqual(['tools/call fetch_page', 'tools/call fetch_page']);
  const [first, second] = received as [OtlpSpan, OtlpSpan];
  const startNs = BigInt(first.startTimeUnixNano);
  expect(startNs).toBeGreaterThanOrEqual(nanos(before - 2));
  expect(startNs).toBeLessThanOrEqual(nanos(after + 2));
  const lasted = Number(BigInt(first.endTimeUnixNano) - startNs) / 1e6;
  expect(lasted).toBeGreaterThanOrEqual(55);
  expect(lasted).toBeLessThan(85);
  // a span made by its first event: started when its request came, the event when it was decided
  expect(Number(BigInt(second.events?.[0]?.timeUnixNano ?? '0') - BigInt(second.startTimeUnixNano)) / 1e6).toBeGreaterThanOrEqual(15);
  expect(BigInt(second.events?.[0]?.timeUnixNano ?? '0')).toBeGreaterThanOrEqual(nanos(hintBefore - 2));
});
