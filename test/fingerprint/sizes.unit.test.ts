/**
 * Fingerprints of any size: texts, JSON texts and member names of every length around the unit
 * buffers' boundaries (the native-copy threshold, the retained 32 Ki units, odd and even) are
 * hashed whole, equal for equal content and different when only the last character differs.
 * A 32 Ki+1 odd-length result once failed to fingerprint and was taken as "not captured".
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fingerprint, volatileKeySet, type FingerprintOptions } from '../../src/fingerprint/canonical.js';
import { DEFAULT_VOLATILE_RESULT_KEYS } from '../../src/fingerprint/volatile.js';
import { LoopEngine } from '../../src/detector/engine.js';
import { buildToolCall } from '../../src/detector/tool-call.js';

const RESULT: FingerprintOptions = { side: 'result', volatileKeys: volatileKeySet(DEFAULT_VOLATILE_RESULT_KEYS) };
const RETAINED = 1 << 15;
const BOUNDARIES = [1, 2, 31, 32, 33, 64, RETAINED - 3, RETAINED - 2, RETAINED - 1, RETAINED, RETAINED + 1, RETAINED + 2, RETAINED + 3, 2 * RETAINED + 1, 40_001];
const lengths = fc.oneof(fc.constantFrom(...BOUNDARIES), fc.integer({ min: 1, max: 3 * RETAINED }));

/** Text of exactly `n` characters with no volatile-looking runs (letters only), ending in `last`. */
function text(n: number, last: string): string {
  return 'abcdefghij'.repeat(Math.ceil(n / 10)).slice(0, n - 1) + last;
}

describe('fingerprints of any size', () => {
  it('hash texts, JSON texts and member names of every length around the buffer boundaries', () => {
    fc.assert(
      fc.property(lengths, fc.constantFrom('plain', 'json-string', 'member'), (n, shape) => {
        const wrap = (s: string): unknown => (shape === 'plain' ? s : shape === 'json-string' ? JSON.stringify({ out: s }) : { [s]: 1 });
        const a = fingerprint(wrap(text(n, 'x')), RESULT);
        const same = fingerprint(wrap(text(n, 'x')), RESULT);
        const other = fingerprint(wrap(text(n, 'y')), RESULT);
        expect(same.hash).toBe(a.hash);
        expect(other.hash).not.toBe(a.hash);
      }),
      { numRuns: 60 },
    );
  });

  it('a 40 001-character result is captured evidence, like a 40 000-character one', () => {
    const engine = new LoopEngine();
    for (const n of [40_000, 40_001]) {
      const problems: string[] = [];
      const call = buildToolCall(
        engine,
        { toolName: 'search', arguments: { q: 'x' }, result: text(n, 'z'), startTime: 0, endTime: 1, batch: 'b', callIndex: 1 },
        (m) => problems.push(m),
      );
      expect(problems).toEqual([]);
      expect(call.outcome.ok && call.outcome.resultHash !== undefined).toBe(true);
    }
  });

  it('five identical calls with a 40 001-character result are stopped, not only warned on arguments', () => {
    const engine = new LoopEngine();
    const trace = engine.createTrace('t');
    const levels: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const raw = { toolName: 'search', arguments: { q: 'x' }, result: text(40_001, 'z'), startTime: i * 10, endTime: i * 10 + 5, batch: `b${i}`, callIndex: i };
      for (const d of trace.record(buildToolCall(engine, raw))) levels.push(`${i}:${d.level}:${d.evidence}`);
    }
    expect(levels).toEqual(['3:warning:arguments+result', '5:critical:arguments+result']);
  });
});
