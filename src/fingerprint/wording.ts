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
/** An empty bin: above any value a bin keeps (16 bits). */
const EMPTY = 0x10000;
/** FNV-1a's offset basis and prime: every word's hash. */
const BASIS = 0x811c9dc5 | 0;
const PRIME = 0x01000193;

/**
 * What each ASCII unit is to a word: an ASCII letter or digit as compared (capitals as small
 * letters: "Paris" and "paris" are one word), 0 for any other. Every unit past ASCII is part of a
 * word, as it is.
 */
const ASCII_WORD_UNIT = new Uint8Array(0x80);
for (let c = 0; c < 0x80; c++) {
  const isWordUnit = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  ASCII_WORD_UNIT[c] = !isWordUnit ? 0 : c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
}

/** One sketch in progress; reused (a fingerprint's walker holds one). */
export class WordingSketch {
  private readonly mins = new Int32Array(BINS).fill(EMPTY);
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
    if (this.words >= MAX_WORDS) return;
    let h = BASIS;
    let len = 0;
    for (let i = start; i <= end; i++) {
      const c = i < end ? (u[i] as number) : 0;
      const w = c > 0x7f ? c : (ASCII_WORD_UNIT[c] as number);
      if (w !== 0) {
        h = Math.imul(h ^ w, PRIME);
        len++;
        continue;
      }
      if (len >= 2 && this.addWord(fmix(h ^ len))) return;
      h = BASIS;
      len = 0;
    }
  }

  /** One word's hash (32 bits): the top bits pick the bin (multiply-shift), the low 16 are what it keeps the least of. True once `MAX_WORDS` are read. */
  private addWord(v: number): boolean {
    const bin = ((v >>> 16) * BINS) >>> 16;
    const value = v & 0xffff;
    if (value < (this.mins[bin] as number)) this.mins[bin] = value;
    return ++this.words >= MAX_WORDS;
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
