import { fmix } from './hash.js';

/**
 * A sketch of the words of a call's arguments, to tell a rewording of one request (most words
 * shared) from different content (a new fact written, another paragraph): a b-bit MinHash, the
 * smallest hash of the words under each of `SLOTS` hash functions, `BITS` bits of each kept, packed
 * into one number. Two sketches agree in a slot with the probability that the word sets' Jaccard
 * similarity gives (plus 1 in 2^BITS by chance). Words are runs of letters and digits (any case,
 * non-ASCII letters included) of two units or more; at most `MAX_WORDS` are read.
 */

const SLOTS = 12;
const BITS = 4;
const SLOT_MASK = (1 << BITS) - 1;
const MAX_WORDS = 256;
/**
 * Slots that must agree for two wordings to be one request reworded: a slot agrees with the
 * probability J + (1 - J) / 16 for a Jaccard similarity J, so 5 of 12 passes most pairs above
 * a third and few below a sixth.
 */
const SIMILAR_SLOTS = 5;
/** Seeds of the slots' hash functions (odd constants: `fmix(word ^ seed)`). */
const SEEDS = new Int32Array([0x1b873593, 0x27d4eb2f, 0x165667b1, 0x61c88647, 0x2545f491, 0x3c6ef372, 0x68e31da4, 0x4cf5ad43, 0x7feb352d, 0x846ca68b, 0x2c1b3c6d, 0x297a2d39]);
const EMPTY = 0xffffffff;
const TWO_BITS = 2 ** BITS;

/** Is the code unit part of a word (an ASCII letter or digit, or any unit past ASCII)? */
function isWordUnit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c > 0x7f;
}

/** One sketch in progress; reused (a fingerprint's walker holds one). */
export class WordingSketch {
  private readonly mins = new Uint32Array(SLOTS).fill(EMPTY);
  private words = 0;
  /** FNV-1a's offset basis: where every word's hash starts. */
  private static readonly BASIS = 0x811c9dc5 | 0;

  clear(): void {
    this.mins.fill(EMPTY);
    this.words = 0;
  }

  /** Reads the words of the text in `u[start, end)`. */
  addText(u: Uint16Array, start: number, end: number): void {
    let h = WordingSketch.BASIS;
    let len = 0;
    for (let i = start; i <= end && this.words < MAX_WORDS; i++) {
      const c = i < end ? (u[i] as number) : 0;
      if (i < end && isWordUnit(c)) {
        // ASCII capitals as small letters: "Paris" and "paris" are one word
        const lower = c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
        h = Math.imul(h ^ lower, 0x01000193);
        len++;
        continue;
      }
      if (len >= 2) this.addWord(h ^ len);
      h = WordingSketch.BASIS;
      len = 0;
    }
  }

  private addWord(word: number): void {
    this.words++;
    const mins = this.mins;
    for (let k = 0; k < SLOTS; k++) {
      const v = fmix(word ^ (SEEDS[k] as number)) >>> 0;
      if (v < (mins[k] as number)) mins[k] = v;
    }
  }

  /** The packed sketch, or undefined when no word was read. */
  digest(): number | undefined {
    if (this.words === 0) return undefined;
    let packed = 0;
    for (let k = SLOTS - 1; k >= 0; k--) packed = packed * TWO_BITS + ((this.mins[k] as number) & SLOT_MASK);
    return packed;
  }
}

/** Two packed sketches of one request reworded: at least `SIMILAR_SLOTS` of the slots agree. */
export function similarWording(a: number, b: number): boolean {
  let x = a;
  let y = b;
  let same = 0;
  for (let k = 0; k < SLOTS; k++) {
    if (x % TWO_BITS === y % TWO_BITS) same++;
    x = Math.floor(x / TWO_BITS);
    y = Math.floor(y / TWO_BITS);
  }
  return same >= SIMILAR_SLOTS;
}
