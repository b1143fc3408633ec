/**
 * Issue 28, point 5: a 20 MB protobuf request of 320 000 spans took seconds to decode in one
 * block, during which /healthz could not answer. serve decodes protobuf span by span and gives
 * the event loop a turn every few thousand spans; the result is the whole decode's.
 */
import { describe, expect, it } from 'vitest';
import { decodeTraceRequest, decodeTraceRequestInSteps, encodeTraceRequest, OtlpDecodeError } from '../../src/formats/protobuf/codec.js';
import { turnTaker } from '../../src/serve/pipeline.js';
import { agentTrace, attributes, hexId, type OtlpSpan } from '../support/otlp.js';
import { protobuf } from './support.js';

/** `n` one-span traces: many small spans, the shape of the request. */
function oneSpanTraces(label: string, n: number): OtlpSpan[] {
  const now = String(BigInt(Date.now()) * 1_000_000n);
  return Array.from({ length: n }, (_, i) => ({
    traceId: hexId(`${label}:trace:${i}`, 16),
    spanId: hexId(`${label}:span:${i}`, 8),
    parentSpanId: hexId(`${label}:parent:${i}`, 8),
    name: 's',
    kind: 1,
    startTimeUnixNano: now,
    endTimeUnixNano: now,
    attributes: attributes({ i }),
  }));
}

describe('protobuf decoded in steps (serve)', () => {
  it('gives the same request as the decode in one block: resources, scopes, spans, attributes', async () => {
    // two encoded requests one after the other are one request with both resources (protobuf merges repeated fields)
    const a = agentTrace({ label: 'steps-a', prompt: 'p', steps: [{ tool: 'search', args: { q: 'x' }, result: { items: [1] } }] });
    const body = Buffer.concat([protobuf(a, 'service-a'), protobuf(oneSpanTraces('steps-b', 50), 'service-b')]);
    let steps = 0;
    const stepwise = await decodeTraceRequestInSteps(body, () => void steps++);
    const whole = decodeTraceRequest(body, 'protobuf');
    expect(stepwise.resourceSpans).toHaveLength(2);
    expect(steps).toBe(a.length + 50);
    expect(Buffer.from(encodeTraceRequest(stepwise, 'protobuf'))).toEqual(Buffer.from(encodeTraceRequest(whole, 'protobuf')));
  });

  it('gives the event loop turns while it decodes a large request', async () => {
    const body = protobuf(oneSpanTraces('turns', 10_000));
    let decoded = 0;
    const turn = turnTaker();
    let seenMidway: number | undefined;
    setImmediate(() => (seenMidway = decoded));
    const request = await decodeTraceRequestInSteps(body, () => {
      decoded++;
      return turn();
    });
    expect(request.resourceSpans[0]?.scopeSpans[0]?.spans).toHaveLength(10_000);
    // the callback ran while spans were still being decoded: the decode did not hold the loop
    expect(seenMidway).toBeGreaterThan(0);
    expect(seenMidway).toBeLessThan(10_000);
  });

  it('refuses a truncated body as the one-block decode does', async () => {
    const body = protobuf(oneSpanTraces('cut', 10));
    const cut = body.subarray(0, body.byteLength - 7);
    await expect(decodeTraceRequestInSteps(cut, () => undefined)).rejects.toBeInstanceOf(OtlpDecodeError);
    await expect(decodeTraceRequestInSteps(cut, () => undefined)).rejects.toThrow(/^not a protobuf ExportTraceServiceRequest: /);
    expect(() => decodeTraceRequest(cut, 'protobuf')).toThrow(OtlpDecodeError);
  });
});
