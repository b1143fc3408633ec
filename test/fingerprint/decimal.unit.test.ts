/**
 * JSON numbers read from code units give exactly the double `Number(text)` gives, or say that the
 * text must be converted: over generated decimals of every length and exponent, the doubles of
 * every magnitude in their shortest and longest forms, and constructed halfway cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecimalReader, numberEnd } from '../../src/fingerprint/decimal.js';
import { toUnits } from '../../src/fingerprint/volatile.js';

const reader = new DecimalReader();

/** The value read from `text` (converted the caller's way when the reader says so), and where it ended. */
function read(text: string): { value: number; end: number; exact: boolean } {
  const u = toUnits(text);
  const end = reader.read(u, 0);
  return { value: reader.exact ? reader.value : Number(text.slice(0, end)), end, exact: reader.exact };
}

function expectSame(text: string): void {
  const r = read(text);
  const want = Number(text);
  // expect() only on a mismatch: the sweeps below make 200 000 comparisons, and a matcher call
  // costs more than the read it checks
  if (r.end === text.length && (Object.is(r.value, want) || (r.value === 0 && want === 0))) return;
  expect(r.end, text).toBe(text.length);
  expect(r.value, text).toBe(want);
}

describe('JSON numbers read from code units', () => {
  it('equal Number() for generated decimals of 1 to 25 significant digits', () => {
    const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
    const decimal = fc
      .tuple(fc.boolean(), fc.stringMatching(/^(0|[1-9][0-9]{0,20})$/), fc.option(digits(1, 24)), fc.option(fc.integer({ min: -40, max: 40 })))
      .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac !== null ? `.${frac}` : ''}${exp !== null ? `e${exp}` : ''}`);
    fc.assert(fc.property(decimal, (text) => expectSame(text)), { numRuns: 20_000 });
  });

  it('equal Number() for doubles in their shortest form and with 17 to 19 digits', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e30, max: 1e30 }), (x) => {
        expectSame(String(x));
        expectSame(JSON.stringify(x));
        for (const p of [17, 18, 19]) expectSame(x.toPrecision(p).replace('+', ''));
      }),
      { numRuns: 20_000 },
    );
    // the scores of a search result: i / 97 and the like
    for (let i = 0; i < 10_000; i++) {
      expectSame(String(i / 97));
      expectSame(String((i * 7919) / 1e6 + 0.1));
    }
  });

  it('round halfway cases as Number() does (ties to even), converting when unsure', () => {
    // 2^53 + 1 and neighbours: exactly halfway between two doubles
    for (const t of ['9007199254740993', '9007199254740995', '4503599627370496.5', '4503599627370497.5', '18014398509481986', '0.30000000000000004', '-0', '0.0', '0e5', '1e400', '-1e-400']) {
      expectSame(t);
    }
    // halfway points between consecutive doubles, written out with 17 to 19 digits
    fc.assert(
      fc.property(fc.double({ min: 1e-5, max: 1e15, noNaN: true }), (x) => {
        const next = x + (Number.EPSILON * x) / 2;
        if (!(next > x)) return;
        const mid = (x / 2 + next / 2).toPrecision(19);
        expectSame(mid);
      }),
      { numRuns: 5_000 },
    );
  });

  it('rejects what is not a JSON number, where JSON.parse would', () => {
    for (const t of ['-', '01', '1.', '.5', '1e', '1e+', '+1', '-a', '1.e5', '']) {
      const u = toUnits(t);
      const end = reader.read(u, 0);
      let parsed = true;
      try {
        JSON.parse(t);
      } catch {
        parsed = false;
      }
      expect(end === t.length && parsed, t).toBe(false);
    }
    // a valid prefix ends where the number does
    expect(reader.read(toUnits('12,3'), 0)).toBe(2);
    expect(reader.read(toUnits('01'), 0)).toBe(1);
  });

  it('numberEnd (a left-out value, checked and not read) ends every text where read does', () => {
    const near = fc.stringMatching(/^-?[0-9.eE+\-a,]{0,14}$/);
    fc.assert(
      fc.property(near, (text) => {
        const u = toUnits(text);
        expect(numberEnd(u, 0), text).toBe(reader.read(u, 0));
      }),
      { numRuns: 20_000 },
    );
    for (const t of ['0', '-0.5e-3', '12,3', '01', '1.', '1e+', '1.5E+10x']) expect(numberEnd(toUnits(t), 0), t).toBe(reader.read(toUnits(t), 0));
  });
});
