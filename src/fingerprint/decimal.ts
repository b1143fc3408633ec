import { Char } from './chars.js';

/**
 * The value of a JSON number token read from code units, exactly as `Number(text)` gives it,
 * without building the text (bench/NOTES.md, agent mix). Every value is either computed by a
 * path proven to round correctly or left to the caller, who converts the text:
 *
 * - up to 15 significant digits and a power of ten up to 10^22: one multiplication or division
 *   of two exact doubles, rounded once (Clinger's fast path);
 * - 16 to 19 significant digits over a power of ten up to 10^22: the digits as an exact sum of
 *   two doubles, the quotient with its remainder computed exactly (Dekker's product), and the
 *   rounding checked: a quotient within a hair of halfway between two doubles is left to the
 *   caller. (A decimal of at most 19 digits is either exactly halfway, where the remainder is
 *   exact and the sum rounds to even as `Number` does, or far from it; the check is a guard.)
 */


const enum Limit {
  /** Significant digits one double holds exactly (10^15 < 2^53). */
  ExactDigits = 15,
  /** Significant digits the two-double path holds (10^19 < 2^64, well inside 106 bits). */
  MaxDigits = 19,
  /** The largest power of ten that is an exact double. */
  MaxExactPower = 22,
  /** Digits an integer chunk takes (10^9 < 2^31). */
  Chunk = 9,
  /** 2^27 + 1: splits a double into two halves whose products are exact (Veltkamp). */
  Splitter = 134217729,
}

const POW10: readonly number[] = Array.from({ length: Limit.MaxExactPower + 1 }, (_, k) => Number(`1e${k}`));

/** a·b − p exactly, where p = fl(a·b) (Dekker; JS has no fused multiply-add). */
function productError(a: number, b: number, p: number): number {
  let t = Limit.Splitter * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = Limit.Splitter * b;
  const bh = t - (t - b);
  const bl = b - bh;
  return ah * bh - p + ah * bl + al * bh + al * bl;
}

const bits = new Float64Array(1);
const words = new Int32Array(bits.buffer);

/** `HALF_ULP[e]`: half the spacing of the doubles whose biased exponent is e, 2^(e − 1076) (0 below 55: never asked for). */
const HALF_ULP = new Float64Array(2048);
for (let e = 55, half = 2 ** -1021; e < HALF_ULP.length; e++, half *= 2) HALF_ULP[e] = half;

/** Half the spacing of doubles at the magnitude of x (normal, positive x). */
function halfUlp(x: number): number {
  bits[0] = x;
  return HALF_ULP[((words[1] as number) >>> 20) & 0x7ff] as number;
}

/**
 * Reads JSON numbers: `read` returns the index after the token (or -1 when the text there is no
 * JSON number) and leaves the value in `value`, or sets `exact` false when the caller must
 * convert the token's text (`Number(text)`) itself. The unit after the text must not continue a
 * number (none of `0-9 . e E + -`), or be past the array: the JSON-text hasher sets it to 0, so
 * the loops do not test for the end.
 */
export class DecimalReader {
  value = 0;
  exact = true;

  read(u: Uint16Array, start: number): number {
    // One pass over the grammar (-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?), taking the significant
    // digits in integer registers as it goes: 9 in `first`, 6 in `next` (15 in all: `high`),
    // then 4 in `low`. Value = digits·10^e.
    let p = start;
    const negative = u[p] === Char.Minus;
    if (negative) p++;
    let first = 0;
    let next = 0;
    let low = 0;
    let count = 0;
    let e = 0;
    let lost = false;
    let c = u[p] as number;
    if (c === Char.Digit0) {
      c = u[++p] as number;
    } else if (c > Char.Digit0 && c <= Char.Digit9) {
      do {
        const d = c - Char.Digit0;
        if (count < Limit.MaxDigits) {
          if (count < Limit.Chunk) first = first * 10 + d;
          else if (count < Limit.ExactDigits) next = next * 10 + d;
          else low = low * 10 + d;
          count++;
        } else {
          // beyond the digits kept: the integer part still scales the value
          e++;
          if (d !== 0) lost = true;
        }
        c = u[++p] as number;
      } while (c >= Char.Digit0 && c <= Char.Digit9);
    } else {
      return -1;
    }
    if (c === Char.Dot) {
      c = u[++p] as number;
      if (!(c >= Char.Digit0 && c <= Char.Digit9)) return -1;
      do {
        const d = c - Char.Digit0;
        if (count === 0 && d === 0) e--;
        else if (count < Limit.MaxDigits) {
          if (count < Limit.Chunk) first = first * 10 + d;
          else if (count < Limit.ExactDigits) next = next * 10 + d;
          else low = low * 10 + d;
          count++;
          e--;
        } else if (d !== 0) lost = true;
        c = u[++p] as number;
      } while (c >= Char.Digit0 && c <= Char.Digit9);
    }
    if (c === Char.LowerE || c === Char.UpperE) {
      c = u[++p] as number;
      const minus = c === Char.Minus;
      if (minus || c === Char.Plus) c = u[++p] as number;
      if (!(c >= Char.Digit0 && c <= Char.Digit9)) return -1;
      let exponent = 0;
      do {
        // beyond any double's range either way: the text decides (Infinity, 0)
        if (exponent < 100_000) exponent = exponent * 10 + (c - Char.Digit0);
        c = u[++p] as number;
      } while (c >= Char.Digit0 && c <= Char.Digit9);
      e += minus ? -exponent : exponent;
    }
    const high = count <= Limit.Chunk ? first : first * (POW10[Math.min(count, Limit.ExactDigits) - Limit.Chunk] as number) + next;
    this.convert(negative, high, low, count, e, lost);
    return p;
  }

  /** value = ±(high·10^(count−15) + low)·10^e, when a proven path can round it. */
  private convert(negative: boolean, high: number, low: number, count: number, e: number, lost: boolean): void {
    this.exact = true;
    if (count === 0) {
      this.value = 0;
      return;
    }
    let v = Number.NaN;
    if (lost) {
      // not exact: the caller converts
    } else if (count <= Limit.ExactDigits) {
      if (e === 0) v = high;
      else if (e > 0 && e <= Limit.MaxExactPower) v = high * (POW10[e] as number);
      else if (e < 0 && e >= -Limit.MaxExactPower) v = high / (POW10[-e] as number);
    } else {
      v = longSignificand(high, low, count, e);
    }
    if (Number.isNaN(v)) this.exact = false;
    else this.value = negative ? -v : v;
  }
}

/**
 * (high·10^(count−15) + low)·10^e for 16 to 19 significant digits (`count`), or NaN when no proven
 * path rounds it: its own function, so that the common path of `convert` stays small enough to
 * be inlined into `read` (bench/NOTES.md, JSON arguments and results).
 */
function longSignificand(high: number, low: number, count: number, e: number): number {
  const scale = POW10[count - Limit.ExactDigits] as number;
  // m = high·scale + low as mh + ml exactly: the product's error, then the sum's
  const ph = high * scale;
  const pl = productError(high, scale, ph);
  const mh = ph + low;
  const back = mh - ph;
  const ml = pl + (ph - (mh - back)) + (low - back);
  if (e === 0) return mh + ml; // one rounding of the exact sum
  if (e > 0 || e < -Limit.MaxExactPower) return Number.NaN;
  const divisor = POW10[-e] as number;
  const q1 = mh / divisor;
  const th = q1 * divisor;
  const tl = productError(q1, divisor, th);
  // m − q1·divisor: mh − th is exact (they are within a factor of two)
  const remainder = mh - th - tl + ml;
  const q2 = remainder / divisor;
  const v = q1 + q2;
  // the rounding error of that sum; halfway between two doubles it could go either way
  const back2 = v - q1;
  const error = Math.abs(q1 - (v - back2) + (q2 - back2));
  const half = halfUlp(v);
  const margin = half * 2 ** -24;
  return half === 0 || Math.abs(error - half) <= margin || Math.abs(error - half / 2) <= margin ? Number.NaN : v;
}

function isDigit(c: number): boolean {
  return c >= Char.Digit0 && c <= Char.Digit9;
}

/** The index after the run of digits from `u[p]` on. */
function digitsEnd(u: Uint16Array, p: number): number {
  let q = p;
  while (isDigit(u[q] as number)) q++;
  return q;
}

/**
 * Where the JSON number token at `u[start]` ends (-1 when the text there is no JSON number),
 * checked by the grammar and the end rule of `DecimalReader.read` but not read: a value that is
 * left out (a volatile member's) needs no conversion (bench/NOTES.md, JSON results).
 */
export function numberEnd(u: Uint16Array, start: number): number {
  let p = u[start] === Char.Minus ? start + 1 : start;
  const c = u[p] as number;
  if (c === Char.Digit0) p++;
  else if (isDigit(c)) p = digitsEnd(u, p + 1);
  else return -1;
  if (u[p] === Char.Dot) {
    if (!isDigit(u[p + 1] as number)) return -1;
    p = digitsEnd(u, p + 2);
  }
  const e = u[p] as number;
  if (e === Char.LowerE || e === Char.UpperE) {
    p++;
    if (u[p] === Char.Minus || u[p] === Char.Plus) p++;
    if (!isDigit(u[p] as number)) return -1;
    p = digitsEnd(u, p + 1);
  }
  return p;
}
