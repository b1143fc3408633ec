/**
 * Issue 28, the smaller protocol points: what the collector takes, serve takes (deep nesting,
 * broken UTF-8); what it must refuse, it refuses with a status (oversize and mislabelled gRPC
 * messages, all-zero ids); error answers never quote the request body.
 */
import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { ExportTraceServiceResponseSchema } from '../../src/formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import { agentTrace, hexId, type AnyValue, type OtlpSpan } from '../support/otlp.js';
import { frame, grpcCall, h2, json, loopSpans, postJson, protobuf, startServe, until } from './support.js';

const nested = (depth: number): AnyValue => (depth === 0 ? { stringValue: 'bottom' } : { kvlistValue: { values: [{ key: `level${depth}`, value: nested(depth - 1) }] } });

function withAttribute(span: OtlpSpan, key: string, value: AnyValue): OtlpSpan {
  return { ...span, attributes: [...span.attributes, { key, value }] };
}

describe('serve takes what the collector takes', () => {
  it('attributes nested 60 levels deep, in JSON and in protobuf, are taken and forwarded whole', async () => {
    const { base, down } = await startServe({ forwardProtocol: 'json' });
    const [a, b] = [agentTrace({ label: 'deep-json', steps: [{ tool: 't', args: {}, result: 'r' }] }), agentTrace({ label: 'deep-pb', steps: [{ tool: 't', args: {}, result: 'r' }] })];
    const deepJson = a.map((s, i) => (i === 0 ? withAttribute(s, 'deep', nested(60)) : s));
    const deepPb = b.map((s, i) => (i === 0 ? withAttribute(s, 'deep', nested(60)) : s));
    expect((await postJson(base, json(deepJson))).status).toBe(200);
    expect((await postJson(base, protobuf(deepPb), { 'content-type': 'application/x-protobuf' })).status).toBe(200);
    await until(() => down.spans.length === deepJson.length + deepPb.length, 'both traces forwarded');
    const forwarded = down.spans.filter((s) => 'deep' in s.attributes);
    expect(forwarded).toHaveLength(2);
  });

  it('a lone surrogate in OTLP/JSON and invalid UTF-8 in protobuf are taken (as U+FFFD), not a rejected request', async () => {
    const { base, down } = await startServe();
    const spans = agentTrace({ label: 'utf', steps: [{ tool: 't', args: {}, result: 'r' }] });
    const text = json([withAttribute(spans[0] as OtlpSpan, 'cut', { stringValue: 'PLACEHOLDER' }), ...spans.slice(1)]).replace('"PLACEHOLDER"', '"ab\\ud800"');
    expect((await postJson(base, text)).status).toBe(200);
    const other = agentTrace({ label: 'utf-pb', steps: [{ tool: 't', args: {}, result: 'r' }] });
    const pb = Buffer.from(protobuf([withAttribute(other[0] as OtlpSpan, 'cut', { stringValue: 'abXY' }), ...other.slice(1)]));
    const at = pb.indexOf(Buffer.from('abXY'));
    pb[at + 2] = 0xed; // the start of an encoded surrogate half: not UTF-8
    pb[at + 3] = 0xa0;
    expect((await postJson(base, pb, { 'content-type': 'application/x-protobuf' })).status).toBe(200);
    await until(() => down.spans.length === spans.length + other.length, 'both forwarded');
    const cut = down.spans.filter((s) => 'cut' in s.attributes).map((s) => String(s.attributes.cut));
    expect(cut.sort()).toEqual(['ab\uFFFD', 'ab\uFFFD\uFFFD'].sort());
  });
});

describe('serve refuses what OTLP and gRPC refuse, with a status', () => {
  it('rejects spans with all-zero ids or hex ids of the wrong length (partial success, saying ids are hex), keeps the rest', async () => {
    const { base, down } = await startServe();
    const spans = loopSpans('ids');
    const zeroTrace = { ...(spans[0] as OtlpSpan), traceId: '0'.repeat(32) };
    const zeroSpan = { ...(spans[1] as OtlpSpan), spanId: '0'.repeat(16) };
    const shortId = { ...(spans[2] as OtlpSpan), spanId: '1' };
    const res = await postJson(base, json([zeroTrace, zeroSpan, shortId, ...spans.slice(3)]));
    expect(res.status).toBe(200);
    const partial = fromJson(ExportTraceServiceResponseSchema, (await res.json()) as JsonValue).partialSuccess;
    expect(partial?.rejectedSpans).toBe(3n);
    expect(partial?.errorMessage).toMatch(/16 hex digits/);
    expect(partial?.errorMessage).not.toMatch(/base64/);
    await until(() => down.spans.length === spans.length - 3, 'the valid spans forwarded');
  });

  it('gRPC: a message over the size limit gets RESOURCE_EXHAUSTED from its length prefix (the connection goes on); one flagged compressed without grpc-encoding gets INTERNAL', async () => {
    const { port, down } = await startServe({ limits: { maxBody: 256 * 1024 } });
    const session = h2(port);
    const big = Buffer.alloc(1024 * 1024, 0x0a);
    const oversize = await grpcCall(session, frame(big));
    expect(oversize.status).toBe(8);
    expect(oversize.message).toMatch(/over the limit/);
    expect(oversize.error).toBeUndefined();
    // the same connection still works
    const spans = loopSpans('after-oversize');
    const ok = await grpcCall(session, frame(protobuf(spans)));
    expect(ok.status).toBe(0);
    const flagged = await grpcCall(session, frame(protobuf(loopSpans('flagged')), true));
    expect(flagged.status).toBe(13);
    expect(flagged.message).toMatch(/compressed but the call has no grpc-encoding/);
    const unknown = await grpcCall(session, frame(protobuf(spans)), { 'grpc-encoding': 'snappy' });
    expect(unknown.status).toBe(12);
    expect(unknown.headers['grpc-accept-encoding']).toBe('identity,gzip,deflate');
    session.close();
    await until(() => down.spans.length === spans.length, 'the good call forwarded');
  });
});

describe('serve error answers do not quote the request', () => {
  it('a malformed body is described by position, never by its content', async () => {
    const { base, port, logs } = await startServe();
    const secret = 'sk-live-0123456789abcdef';
    const bodies = [`{"resourceSpans": [ {"x": ${secret}}]}`, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${hexId('t', 16)}","spanId":"${hexId('s', 8)}","name":5,"kind":"${secret}"}]}]}]}`];
    for (const body of bodies) {
      const res = await postJson(base, body);
      expect(res.status).toBe(400);
      const message = ((await res.json()) as { message: string }).message;
      expect(message).not.toContain(secret);
      expect(message).not.toContain('sk-live');
      expect(message.length).toBeGreaterThan(10);
    }
    const session = h2(port);
    const answer = await grpcCall(session, frame(Buffer.from(`\x0a\x05${secret}`)));
    session.close();
    expect(answer.status).toBe(3);
    expect(answer.message).not.toContain(secret);
    expect(logs.join('\n')).not.toContain(secret);
  });
});


