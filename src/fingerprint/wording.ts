import { fmix } from './hash.js';

/**
 * A sketch of the words of a call's arguments, to tell a rewording of one request (most words
 * shared) from different content (a new fact written, another paragraph). One-permutation
 * MinHash: each word is hashed once, the hash picks one of `BINS` bins and the bin keeps the
 * smallest value it got, of which `BITS` bits are kept (0 marks an empty bin), all packed into one
 * number. Two sketches' bins agree, where both hold a word, with about the probability that the
 * word sets' Jaccard similarity gives (plus 1 in 15 by chance). Words are runs of letters and
 * digits (any case, non-ASCII letters included) of two units or more; at most `MAX_WORDS` are read.
 */

const BINS = 12;
const BITS = 4;
const LEVELS = 2 ** BITS;
const MAX_WORDS = 64;
/**
 * The share of the bins holding a word on either side that must agree for two wordings to be one
 * request reworded: 5 of 12 passes most pairs sharing more than a third of their words and few
 * sharing less than a sixth.
 */
const SIMILAR = 5 / 12;
const EMPTY = 0xffffffff;
/** FNV-1a's offset basis and prime: every word's hash. */
const BASIS = 0x811c9dc5 | 0;
const PRIME = 0x01000193;

/** Is the code unit part of a word (an ASCII letter or digit, or any unit past ASCII)? */
function isWordUnit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c > 0x7f;
}

/** One sketch in progress; reused (a fingerprint's walker holds one). */
export class WordingSketch {
  private readonly mins = new Uint32Array(BINS).fill(EMPTY);
  private words = 0;
  /** Code units of all the wording read, past `MAX_WORDS` too (see `Fingerprint.wordingLength`). */
  length = 0;

  clear(): void {
    this.length = 0;
    if (this.words === 0) return;
    this.mins.fill(EMPTY);
    this.words = 0;
  }

  /**
   * Reads the words of the text in `u[start, end)`, while the arguments' first `MAX_WORDS` last.
   * Only text with spaces is wording: a single token (an id, a path, a key) is a target, which the
   * call's outcome already tells apart (`Fingerprint.targets`).
   */
  addText(u: Uint16Array, start: number, end: number): void {
    this.length += end - start;
    let h = BASIS;
    let len = 0;
    for (let i = start; i <= end && this.words < MAX_WORDS; i++) {
      const c = i < end ? (u[i] as number) : 0;
      if (i < end && isWordUnit(c)) {
        // ASCII capitals as small letters: "Paris" and "paris" are one word
        h = Math.imul(h ^ (c >= 0x41 && c <= 0x5a ? c + 0x20 : c), PRIME);
        len++;
        continue;
      }
      if (len >= 2) this.addWord(fmix(h ^ len) >>> 0);
      h = BASIS;
      len = 0;
    }
  }

  private addWord(v: number): void {
    this.words++;
    // the top bits pick the bin (multiply-shift), the rest is the value it keeps the least of
    const bin = Math.floor(((v >>> 16) * BINS) / 65536);
    const value = v & 0xffff;
    if (value < (this.mins[bin] as number)) this.mins[bin] = value;
  }

  /** The packed sketch (`BITS` bits a bin, 0 for an empty one), or undefined when no word was read. */
  digest(): number | undefined {
    if (this.words === 0) return undefined;
    let packed = 0;
    for (let k = BINS - 1; k >= 0; k--) {
      const m = this.mins[k] as number;
      packed = packed * LEVELS + (m === EMPTY ? 0 : 1 + (m % (LEVELS - 1)));
    }
    return packed;
  }
}

/** Two packed sketches of one request reworded: enough of the bins that hold a word on either side agree. */
export function similarWording(a: number, b: number): boolean {
  let x = a;
  let y = b;
  let held = 0;
  let same = 0;
  for (let k = 0; k < BINS; k++) {
    const p = x % LEVELS;
    const q = y % LEVELS;
    if (p !== 0 || q !== 0) {
      held++;
      if (p === q) same++;
    }
    x = Math.floor(x / LEVELS);
    y = Math.floor(y / LEVELS);
  }
  return held > 0 && same >= SIMILAR * held;
}
