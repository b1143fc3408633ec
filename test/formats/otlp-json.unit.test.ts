import { describe, expect, it } from 'vitest';
import { locateJsonError, lineAndColumn } from '../../src/formats/json-error.js';
import { decodeTracesData, OtlpFormatError } from '../../src/formats/otlp-json.js';

const span = (extra: Record<string, unknown> = {}) => ({
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  name: 'execute_tool search',
  startTimeUnixNano: '1795240204296000000',
  endTimeUnixNano: '1795240204296413933',
  ...extra,
});

describe('OTLP/JSON decoding', () => {
  it('decodes ids (hex or base64), nanosecond times, status, events and every AnyValue kind', () => {
    const [s] = decodeTracesData({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agent' } }] },
          scopeSpans: [
            {
              spans: [
                span({
                  traceId: Buffer.from('4bf92f3577b34da6a3ce929d0e0e4736', 'hex').toString('base64'),
                  parentSpanId: 'AAAAAAAAAAE=',
                  status: { code: 2, message: 'boom' },
                  events: [{ name: 'exception', attributes: [{ key: 'exception.type', value: { stringValue: 'E' } }] }],
                  attributes: [
                    { key: 's', value: { stringValue: 'x' } },
                    { key: 'i', value: { intValue: '42' } },
                    { key: 'd', value: { doubleValue: 1.5 } },
                    { key: 'nan', value: { doubleValue: 'NaN' } },
                    { key: 'b', value: { boolValue: true } },
                    { key: 'a', value: { arrayValue: { values: [{ intValue: 1 }, { stringValue: 'y' }] } } },
                    { key: 'kv', value: { kvlistValue: { values: [{ key: 'q', value: { stringValue: 'z' } }] } } },
                    { key: 'bytes', value: { bytesValue: 'AQI=' } },
                  ],
                }),
              ],
            },
          ],
        },
      ],
    });
    expect(s?.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(s?.parentSpanId).toBe('0000000000000001');
    expect(s?.startTime).toBe(1795240204296);
    expect(s?.endTime).toBeCloseTo(1795240204296.414, 2);
    expect(s?.status).toEqual({ code: 2, message: 'boom' });
    expect(s?.events?.[0]?.attributes).toEqual({ 'exception.type': 'E' });
    expect(s?.service).toBe('agent');
    expect(s?.attributes).toMatchObject({ s: 'x', i: 42, d: 1.5, b: true, a: [1, 'y'], kv: { q: 'z' }, bytes: new Uint8Array([1, 2]) });
    expect(Number.isNaN(s?.attributes.nan)).toBe(true);
  });

  it('reads the pre-1.0 instrumentationLibrarySpans name', () => {
    expect(decodeTracesData({ resourceSpans: [{ instrumentationLibrarySpans: [{ spans: [span()] }] }] })).toHaveLength(1);
  });

  it('rejects what is not OTLP with a message saying what is wrong', () => {
    expect(() => decodeTracesData({ spans: [] })).toThrow(OtlpFormatError);
    expect(() => decodeTracesData({ resourceSpans: [{ scopeSpans: [{ spans: [span({ spanId: 'xyz' })] }] }] })).toThrow(/spanId is neither 16 hex digits nor base64 of 8 bytes \(got a string of 3 characters\)/);
    expect(() => decodeTracesData({ resourceSpans: [{ scopeSpans: [{ spans: [span({ startTimeUnixNano: 'yesterday' })] }] }] })).toThrow(/startTimeUnixNano must be nanoseconds since the epoch, got a string of 9 characters/);
    expect(() => decodeTracesData({ resourceSpans: [{ scopeSpans: [{ spans: [span({ traceId: undefined })] }] }] })).toThrow(/span without traceId/);
  });
});

describe('JSON error location', () => {
  it('finds the offset of the first syntax error, or -1', () => {
    const cases: Array<[string, number]> = [
      ['{"a":1}', -1],
      ['[1,2,[3,{"x":[]}]]', -1],
      ['{"a":{"b":[1,{"c":null}]},"d":"e"}', -1],
      ['{"a":1,}', 7],
      ['{"a" 1}', 5],
      ['{\n"a": tru\n}', 7],
      ['nope', 0],
      ['{"a":1} x', 8],
      ['{"a":"\u0001"}', 6],
      ['[1,2', 4],
      ['{"a":[1 2]}', 8],
      ['  {"a":-}', 7],
    ];
    for (const [text, offset] of cases) expect([text, locateJsonError(text)]).toEqual([text, offset]);
    expect(() => locateJsonError('['.repeat(100_000))).not.toThrow();
  });

  it('turns an offset into a 1-based line and column', () => {
    expect(lineAndColumn('ab\ncd\nef', 7)).toEqual({ line: 3, column: 2 });
    expect(lineAndColumn('abc', 0)).toEqual({ line: 1, column: 1 });
  });
});
