/**
 * Issue 18: trace files from where users get them. The same agent runs, recorded by the real SDK,
 * are scanned as OTLP/JSON, as Grafana Tempo and Jaeger API answers, and as OTLP protobuf, and
 * every form must give exactly the detections the live processor reported.
 *
 * The shapes follow these sources:
 * - Tempo: grafana/tempo docs/sources/tempo/api_docs/_index.md (`GET /api/traces/<traceid>`
 *   answers OTLP JSON; `GET /api/v2/traces/<traceid>` a "Query response with an OpenTelemetry
 *   JSON trace") and pkg/tempopb/tempo.proto (`message TraceByIDResponse { Trace trace = 1;
 *   TraceByIDMetrics metrics = 2; ... }`, `message Trace { repeated ResourceSpans batches = 1; }`,
 *   the field renamed `resourceSpans` in later releases). Tempo writes the protobuf JSON mapping:
 *   ids in base64, enums by name (`SPAN_KIND_SERVER`, `STATUS_CODE_ERROR`).
 * - Jaeger: jaegertracing/jaeger model/json/model.go (Trace {traceID, spans, processes, warnings};
 *   Span {traceID, spanID, flags, operationName, references [{refType CHILD_OF|FOLLOWS_FROM,
 *   traceID, spanID}], startTime and duration in µs, tags [{key, type, value}], logs [{timestamp,
 *   fields}], processID}; Process {serviceName, tags}); the query API wraps traces in
 *   `{"data":[...],"total","limit","offset","errors"}`. OpenTelemetry spans are translated as
 *   open-telemetry-collector-contrib pkg/translator/jaeger/README.md says: the parent is the first
 *   CHILD_OF reference, links are FOLLOWS_FROM, the status is `otel.status_code` /
 *   `otel.status_description` plus `error: true`, span kind a `span.kind` tag, an event's name the
 *   `event` field of its log. Jaeger's v3 API answers `{"result":{"resourceSpans":[...]}}`.
 * - OTLP protobuf files: the collector's file exporter README and file_writer.go
 *   (`format: proto`: each message preceded by its length as a 4-byte big-endian integer).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LoopDetection } from '../../src/index.js';
import { cli, jsonLines } from './support/cli.js';
import { framed, sdkTraces, type SdkTraces } from './support/sdk-traces.js';
import { toJaeger, toTempo, type OtlpJson } from './support/trace-shapes.js';

type Json = Record<string, unknown>;

const key = (d: LoopDetection): string => [d.traceId, d.spanId, d.kind, d.rule, d.level, d.callIndex, d.count, d.fingerprint, d.promptName].join(' ');

let sdk: SdkTraces;
let otlp: OtlpJson;
let dir: string;

async function detectionsOf(name: string, content: string | Uint8Array): Promise<string[]> {
  writeFileSync(join(dir, name), content);
  const r = await cli(['scan', '--json', join(dir, name)]);
  expect([name, r.code, r.stderr.includes('warning:')]).toEqual([name, 1, false]);
  return jsonLines<LoopDetection>(r.stdout).map(key).sort();
}

describe('trace files from where users get them', () => {
  beforeAll(async () => {
    sdk = await sdkTraces();
    otlp = JSON.parse(sdk.json) as OtlpJson;
    dir = mkdtempSync(join(tmpdir(), 'loopwatch-formats-'));
  });

  it('OTLP/JSON from the SDK serializer gives what the live processor reported', async () => {
    expect(sdk.live.length).toBeGreaterThanOrEqual(6);
    expect(await detectionsOf('export.json', sdk.json)).toEqual(sdk.live.map(key).sort());
  });

  it.each([
    ['Tempo /api/traces/<id> (older: batches)', (o: OtlpJson): unknown => toTempo(o)],
    ['Tempo /api/v2/traces/<id> (trace envelope, older batches)', (o: OtlpJson): unknown => ({ trace: toTempo(o), metrics: { inspectedBytes: '1024' } })],
    ['Tempo /api/v2/traces/<id> (trace envelope, resourceSpans)', (o: OtlpJson): unknown => ({ trace: { resourceSpans: (toTempo(o) as { batches: unknown }).batches }, status: 'COMPLETE' })],
    ['Jaeger /api/traces (data)', (o: OtlpJson): unknown => toJaeger(o)],
    ['Jaeger one trace object', (o: OtlpJson): unknown => toJaeger(o).data[0]],
    ['Jaeger /api/v3/traces (result envelope)', (o: OtlpJson): unknown => ({ result: o })],
  ])('%s, pretty-printed, gives the same detections', async (label, convert) => {
    const converted = convert(otlp);
    const expected = label.startsWith('Jaeger one trace')
      ? (await detectionsOf('whole.json', sdk.json)).filter((d) => d.startsWith((converted as { traceID: string }).traceID))
      : sdk.live.map(key).sort();
    expect(await detectionsOf(`${label.replace(/\W+/g, '-')}.json`, JSON.stringify(converted, null, 2))).toEqual(expected);
  });

  it('OTLP protobuf: the SDK exporter request as one bare message, and framed as the file exporter writes it', async () => {
    expect(await detectionsOf('request.pb', sdk.protobuf)).toEqual(sdk.live.map(key).sort());
    // two export requests in one framed file: the runs split across them
    const half = Math.floor(sdk.spans.length / 2);
    const { ProtobufTraceSerializer } = await import('@opentelemetry/otlp-transformer');
    const first = ProtobufTraceSerializer.serializeRequest(sdk.spans.slice(0, half));
    const second = ProtobufTraceSerializer.serializeRequest(sdk.spans.slice(half));
    if (!first || !second) throw new Error('nothing serialized');
    expect(await detectionsOf('export.binpb', framed(first, second))).toEqual(sdk.live.map(key).sort());
  });

  it('a truncated protobuf file and random bytes are errors that say so', async () => {
    const full = framed(sdk.protobuf);
    writeFileSync(join(dir, 'cut.pb'), full.subarray(0, full.length - 10));
    writeFileSync(join(dir, 'noise.pb'), Buffer.from([0x0a, 0x05, 0x01, 0x02, 0x03, 0x04, 0x05, 0xff, 0xff]));
    const r = await cli(['scan', join(dir, 'cut.pb'), join(dir, 'noise.pb')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cut\.pb: truncated protobuf message at byte 0 \(\d+ of \d+ bytes\)/);
    expect(r.stderr).toMatch(/noise\.pb: not OTLP protobuf/);
  });

  it('Jaeger details: 64-bit trace ids, the error tag alone, an event named by its log, FOLLOWS_FROM is not a parent', async () => {
    const tag = (k: string, v: string): Json => ({ key: k, type: 'string', value: v });
    const call = (n: number, extra: Json[] = [], references: Json[] = []): Json => ({
      traceID: 'a1b2c3d4e5f60718',
      spanID: `00000000000000${n.toString(16).padStart(2, '0')}`,
      operationName: 'execute_tool fetch',
      references,
      startTime: 1_763_715_600_000_000 + n * 1_000_000,
      duration: 2_000,
      tags: [tag('gen_ai.operation.name', 'execute_tool'), tag('gen_ai.tool.name', 'fetch'), tag('gen_ai.tool.call.arguments', '{"u":"x"}'), { key: 'error', type: 'bool', value: true }, ...extra],
      logs: [{ timestamp: 1_763_715_600_000_000 + n * 1_000_000 + 1_000, fields: [tag('event', 'exception'), tag('exception.type', 'Timeout'), tag('exception.message', 'upstream timed out')] }],
      processID: 'p1',
    });
    const doc = { data: [{ traceID: 'a1b2c3d4e5f60718', spans: [1, 2, 3, 4, 5].map((n) => call(n, [], [{ refType: 'FOLLOWS_FROM', traceID: 'ffffffffffffffff', spanID: '00000000000000ff' }])), processes: { p1: { serviceName: 'agent', tags: [] } } }] };
    writeFileSync(join(dir, 'jaeger-details.json'), JSON.stringify(doc));
    const r = await cli(['scan', '--json', join(dir, 'jaeger-details.json')]);
    const found = jsonLines<LoopDetection>(r.stdout);
    expect(found.map((d) => [d.kind, d.level, d.callIndex])).toEqual([
      ['error_pattern', 'warning', 3],
      ['error_pattern', 'critical', 5],
    ]);
    expect(found[0]?.traceId).toBe('0000000000000000a1b2c3d4e5f60718');
  });
});
