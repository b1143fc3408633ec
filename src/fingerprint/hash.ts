/**
 * Fixed-size 53-bit hashes held in a plain `number`, so they compare with `===`, pack into a
 * Float64Array and never allocate. Collisions matter only as false equality between two calls
 * of one trace; at 2^53 that is negligible. This is not a cryptographic hash and is not meant
 * to hide anything: raw values never leave the process anyway.
 */

export type Hash = number;

const TWO_32 = 4294967296;
const LOW_21 = 0x1fffff;

/** Seeds and multipliers of the hash lanes (a `const enum`: the numbers are written into the code). */
export const enum Mix {
  /** 0x9e3779b1 | 0: the seed of lane a, and the multiplier of even words (the golden ratio's bits). */
  Even = -1640531535,
  /** 0x85ebca77 | 0: the multiplier of odd words. */
  Odd = -2048144777,
  /** The seed of lane b. */
  SeedB = 0x7f4a7c15,
  /** What a tag is multiplied by before it salts lane b. */
  Salt = 0x27d4eb2f,
}

/** The multipliers of the finalizer: murmur3's `fmix32`, then the cross-lane mix of `finish`. */
export const enum Finalizer {
  Fmix1 = 0x85ebca6b,
  Fmix2 = 0xc2b2ae35,
  CrossA = 0x2c1b3c6d,
  CrossB = 0x297a2d39,
}

/** The seed of lane a for a value of kind `tag`. */
export function seedA(tag: number): number {
  return Mix.Even ^ tag;
}

/** The seed of lane b for a value of kind `tag`. */
export function seedB(tag: number): number {
  return Mix.SeedB ^ Math.imul(tag, Mix.Salt);
}

/** murmur3's 32-bit finalizer: every output bit depends on every input bit (an int32; its sign never matters here). */
export function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, Finalizer.Fmix1);
  h ^= h >>> 13;
  h = Math.imul(h, Finalizer.Fmix2);
  h ^= h >>> 16;
  return h;
}

/** Two finished 32-bit lanes as a 53-bit `Hash`: 21 bits of `b` above the 32 of `a` (`high` reads them back). */
export function pack(a: number, b: number): Hash {
  return (b & LOW_21) * TWO_32 + (a >>> 0);
}

export function high(h: Hash): number {
  return Math.floor(h / TWO_32) & LOW_21;
}

/** Hash of a string slice, salted by `tag` so that e.g. the string "1" and the number 1 differ. */
export function hashString(s: string, tag = 0, start = 0, end = s.length): Hash {
  let a = seedA(tag);
  let b = seedB(tag);
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, Mix.Even);
    b = Math.imul(b ^ c, Mix.Odd);
  }
  a ^= end - start;
  return finish(a, b);
}

function finish(a: number, b: number): Hash {
  a = fmix(a ^ Math.imul(b ^ (b >>> 15), Finalizer.CrossA));
  b = fmix(b ^ Math.imul(a ^ (a >>> 13), Finalizer.CrossB));
  return pack(a, b);
}

/** Ordered combination: combine(combine(seed, x), y) differs from combine(combine(seed, y), x). */
export function combine(seed: Hash, value: Hash): Hash {
  const sa = seed >>> 0;
  const sb = high(seed);
  const va = value >>> 0;
  const vb = high(value);
  let a = Math.imul(sa ^ va, Mix.Even) ^ Math.imul(vb, Mix.Odd);
  let b = Math.imul(sb ^ vb, 0xc2b2ae3d) ^ Math.imul(va, Mix.Salt);
  a = (a + 0x165667b1) | 0;
  b = (b ^ 0x61c88647) | 0;
  return finish(a, b);
}

/** Combines several hashes in order into one. */
export function combineAll(...values: Hash[]): Hash {
  let h = 0x2545f491;
  for (const v of values) h = combine(h, v);
  return h;
}

/** One element of an order-independent sum (see `UnorderedHash`): mixed on its own first. */
export function unorderedMix(value: Hash): Hash {
  return combine(0x3c6ef372, value);
}

/**
 * The digest of an order-independent sum whose lanes the caller kept in locals: `a` and `b` are
 * the sums modulo 2^32 of `mixed >>> 0` and `high(mixed)` over `n` mixed elements. The same value
 * `UnorderedHash.digest` gives, without an object per sum (the JSON-text hasher's hot path).
 */
export function unorderedDigest(a: number, b: number, n: number, tag: number): Hash {
  return finish(a ^ tag, (b + Math.imul(n, Mix.Even)) | 0);
}

/**
 * Order-independent accumulator (object members, multisets of calls in a parallel batch):
 * each element is mixed on its own, then the lanes are summed modulo 2^32.
 */
export class UnorderedHash {
  private a = 0;
  private b = 0;
  private n = 0;

  add(value: Hash): void {
    const mixed = unorderedMix(value);
    this.a = (this.a + (mixed >>> 0)) | 0;
    this.b = (this.b + high(mixed)) | 0;
    this.n++;
  }

  get size(): number {
    return this.n;
  }

  digest(tag: number): Hash {
    return unorderedDigest(this.a, this.b, this.n, tag);
  }

  /** Empty again, as new. */
  clear(): void {
    this.a = this.b = this.n = 0;
  }
}

/** Short lowercase hex form used on events and in CLI output (14 hex digits for 53 bits). */
export function toHex(h: Hash): string {
  return h.toString(16).padStart(14, '0');
}

/** Incremental hash over a stream of UTF-16 code units (text with placeholders, collapsed spaces). */
export class StreamHasher {
  private a = 0;
  private b = 0;
  private n = 0;

  reset(tag: number): void {
    this.a = seedA(tag);
    this.b = seedB(tag);
    this.n = 0;
  }

  unit(c: number): void {
    this.a = Math.imul(this.a ^ c, Mix.Even);
    this.b = Math.imul(this.b ^ c, Mix.Odd);
    this.n++;
  }

  get length(): number {
    return this.n;
  }

  digest(): Hash {
    return finish(this.a ^ this.n, this.b);
  }
}
