import { Finalizer, fmix, Mix, pack, seedA, seedB, type Hash } from './hash.js';
import type { Units } from './units.js';

/**
 * The arithmetic of structural fingerprints. A node's hash is a pair of 32-bit lanes kept in
 * integer registers from the leaves up and packed into a 53-bit `Hash` only once, at the root.
 * Functions "return" a pair through an `out` object.
 *
 * - Leaves (text, numbers) are raw lanes: cheap, injective enough, not yet mixed.
 * - Text: UTF-16 units paired into 32-bit words (unit 2k low, 2k + 1 high), words alternating
 *   between the two lanes, a rotate, xor and multiply each; the length goes into lane a.
 * - Numbers: the IEEE-754 bits.
 * - Arrays: an order-dependent chain over the element lanes, then mixed (`finish`).
 * - Objects and sets: the sum of mixed member hashes, so order cannot matter, then mixed.
 * The root is mixed once more before packing.
 */

/** Where pair-valued functions write their result. */
export interface LanePair {
  ha: number;
  hb: number;
}

/** Mixes two raw lanes into a finished pair: every output bit depends on every input bit (`hash.ts`'s finalizer). */
export function finish(out: LanePair, a: number, b: number): void {
  const fa = fmix(a ^ Math.imul(b ^ (b >>> 15), Finalizer.CrossA));
  out.hb = fmix(b ^ Math.imul(fa ^ (fa >>> 13), Finalizer.CrossB));
  out.ha = fa;
}

/** Tests for a control character (below U+0020, `Char.Space`) in a 32-bit word of two units. */
const enum ControlTest {
  /** The bits of a unit from U+0020 up: none is set in a control character. */
  LowUnit = 0xffe0,
  /** The same bits of the high unit, shifted down (16 + 5). */
  HighUnitShift = 21,
}

/** The rotation before each word goes into a text lane. */
export function rotl7(x: number): number {
  return (x << 7) | (x >>> 25);
}

/**
 * Raw lanes of the text in `units[start, end)` salted by `tag`: a string, a member name. Returns
 * whether a unit below U+0020 was seen (a control character: invalid inside a JSON string), found
 * in the same pass since JSON-text hashing must reject what `JSON.parse` rejects.
 */
export function text(out: LanePair, tag: number, units: Units, start: number, end: number): boolean {
  let a = seedA(tag);
  let b = seedB(tag);
  // negative once a unit below U+0020 is seen: (unit & LowUnit) - 1 < 0 exactly then
  let low = 0;
  const words = (end - start) >> 1;
  const w32 = units.i32;
  if ((start & 1) === 0) {
    let j = start >> 1;
    const stop = j + words;
    for (; j + 1 < stop; j += 2) {
      const w0 = w32[j] as number;
      const w1 = w32[j + 1] as number;
      low |= ((w0 & ControlTest.LowUnit) - 1) | ((w0 >>> ControlTest.HighUnitShift) - 1) | ((w1 & ControlTest.LowUnit) - 1) | ((w1 >>> ControlTest.HighUnitShift) - 1);
      a = Math.imul(rotl7(a) ^ w0, Mix.Even);
      b = Math.imul(rotl7(b) ^ w1, Mix.Odd);
    }
    if (j < stop) {
      const w0 = w32[j] as number;
      low |= ((w0 & ControlTest.LowUnit) - 1) | ((w0 >>> ControlTest.HighUnitShift) - 1);
      a = Math.imul(rotl7(a) ^ w0, Mix.Even);
    }
  } else {
    // the pairs straddle the array's words: each is the high half of one and the low half of the next
    let j = (start - 1) >> 1;
    let prev = w32[j] as number;
    let k = 0;
    for (; k + 1 < words; k += 2) {
      const n1 = w32[j + 1] as number;
      const n2 = w32[j + 2] as number;
      const w0 = (prev >>> 16) | (n1 << 16);
      const w1 = (n1 >>> 16) | (n2 << 16);
      prev = n2;
      j += 2;
      low |= ((w0 & ControlTest.LowUnit) - 1) | ((w0 >>> ControlTest.HighUnitShift) - 1) | ((w1 & ControlTest.LowUnit) - 1) | ((w1 >>> ControlTest.HighUnitShift) - 1);
      a = Math.imul(rotl7(a) ^ w0, Mix.Even);
      b = Math.imul(rotl7(b) ^ w1, Mix.Odd);
    }
    if (k < words) {
      const w0 = (prev >>> 16) | ((w32[j + 1] as number) << 16);
      low |= ((w0 & ControlTest.LowUnit) - 1) | ((w0 >>> ControlTest.HighUnitShift) - 1);
      a = Math.imul(rotl7(a) ^ w0, Mix.Even);
    }
  }
  if (((end - start) & 1) !== 0) {
    // the last unit alone, as the low half of a word
    const c = units.u16[end - 1] as number;
    low |= (c & ControlTest.LowUnit) - 1;
    if ((words & 1) === 0) a = Math.imul(rotl7(a) ^ c, Mix.Even);
    else b = Math.imul(rotl7(b) ^ c, Mix.Odd);
  }
  out.ha = a ^ (end - start);
  out.hb = b;
  return low < 0;
}

/** `text` of a whole string read with `charCodeAt` (short texts: type names, big integers). Same lanes. */
export function textOf(out: LanePair, tag: number, s: string): void {
  let a = seedA(tag);
  let b = seedB(tag);
  const n = s.length;
  let k = 0;
  for (let i = 0; i + 1 < n; i += 2, k++) {
    const w = s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16);
    if ((k & 1) === 0) a = Math.imul(rotl7(a) ^ w, Mix.Even);
    else b = Math.imul(rotl7(b) ^ w, Mix.Odd);
  }
  if ((n & 1) !== 0) {
    const c = s.charCodeAt(n - 1);
    if ((k & 1) === 0) a = Math.imul(rotl7(a) ^ c, Mix.Even);
    else b = Math.imul(rotl7(b) ^ c, Mix.Odd);
  }
  out.ha = a ^ n;
  out.hb = b;
}

const bits = new Float64Array(1);
const bitLanes = new Int32Array(bits.buffer);

/**
 * Hash of a number, from its IEEE-754 bits: one value, one hash, however it was written (`1`,
 * `1.0`, `1e0`), and no conversion to text. -0 counts as 0 and every NaN as one NaN.
 */
export function number(out: LanePair, tag: number, n: number): void {
  bits[0] = n === 0 ? 0 : Number.isNaN(n) ? Number.NaN : n;
  out.ha = Mix.Even ^ tag ^ (bitLanes[0] as number);
  out.hb = Math.imul(Mix.SeedB ^ tag, Mix.Odd) ^ (bitLanes[1] as number);
}

/** One step of an ordered chain (arrays): order and position matter. */
export function chainA(a: number, ea: number): number {
  return Math.imul(((a << 13) | (a >>> 19)) ^ ea, Mix.Even);
}

export function chainB(b: number, eb: number): number {
  return Math.imul(((b << 11) | (b >>> 21)) ^ eb, Mix.Odd);
}

/** The member hash of (name, value): finished, so that a sum of members is a sound set hash. */
export function member(out: LanePair, ka: number, kb: number, va: number, vb: number): void {
  finish(out, ka ^ Math.imul(va, Mix.Even), (kb ^ Math.imul(vb, Mix.Odd)) + Mix.Salt);
}

/** The hash of an unordered collection (object, set) from the sums of its finished member hashes. */
export function digest(out: LanePair, sa: number, sb: number, n: number, tag: number): void {
  finish(out, sa ^ tag, (sb + Math.imul(n, Mix.Even)) | 0);
}

/**
 * An order-independent sum of finished hashes (the targets of a call's arguments, its action),
 * kept as two integer lanes and a count so that adding costs no allocation.
 */
export class HashSum {
  /** The sums' lanes and the count (read to go back with `restore`: a JSON text that is not JSON adds nothing). */
  sa = 0;
  sb = 0;
  n = 0;

  clear(): void {
    this.sa = 0;
    this.sb = 0;
    this.n = 0;
  }

  /** Adds the leaf whose raw lanes are (a, b), finished first so that the sum is a sound set hash. */
  add(a: number, b: number): void {
    const fa = fmix(a ^ Math.imul(b ^ (b >>> 15), Finalizer.CrossA));
    const fb = fmix(b ^ Math.imul(fa ^ (fa >>> 13), Finalizer.CrossB));
    this.sa = (this.sa + fa) | 0;
    this.sb = (this.sb + fb) | 0;
    this.n++;
  }

  restore(sa: number, sb: number, n: number): void {
    this.sa = sa;
    this.sb = sb;
    this.n = n;
  }

  /** The packed digest of the targets (into `scratch`'s lanes), or undefined when there are none. */
  digest(scratch: LanePair, tag: number): Hash | undefined {
    if (this.n === 0) return undefined;
    digest(scratch, this.sa, this.sb, this.n, tag);
    finish(scratch, scratch.ha, scratch.hb);
    return pack(scratch.ha, scratch.hb);
  }
}

/** A finished constant: the hash of the empty text under `tag` (null, true, volatile, ...). */
export function constant(tag: number): LanePair {
  const out = { ha: 0, hb: 0 };
  textOf(out, tag, '');
  return out;
}
