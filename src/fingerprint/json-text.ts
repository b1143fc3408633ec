import { Char, isDigit, isHexDigit, isJsonSpace, isSpace } from './chars.js';
import { chainA, chainB, digest, finish, member, seedA, seedB, text, type LanePair } from './lanes.js';
import type { UnitBuffers, Units } from './units.js';
import { L_FALSE, L_NULL, L_TRUE, L_TRUNCATED, MAX_DEPTH, MAX_NODES, NOTE_DEPTH, TAG_ARRAY, TAG_KEY, TAG_OBJECT } from './tags.js';

/**
 * Hashes JSON text in one pass, without `JSON.parse` and without building the values: the hash is
 * exactly the one the structural walker (`canonical.ts`) gives the parsed value, so a JSON string
 * attribute (SDK 2.x) and the same structured value (SDK 3.x) stay equal. Tool arguments and
 * results arrive as JSON text on every tool span; parsing them into objects only to walk and drop
 * them was most of loopwatch's cost.
 *
 * The text is validated as strictly as `JSON.parse` does (malformed text is then hashed as plain
 * text by the caller). A few valid but unusual inputs are left to the exact parse-and-walk path
 * (`UNSUPPORTED`): an object with a repeated member name (`JSON.parse` keeps the last value), an
 * object with very many members (the repeat check would get slow), and values beyond the node cap
 * (which nodes are cut depends on the walker's visiting order).
 */

/**
 * What the JSON-text hasher needs of the structural walker (`Walker` in `canonical.ts`): the lanes
 * every hash lands in, the counters a fingerprint keeps, and the walker's own leaf methods, so
 * that both paths share one definition of every leaf.
 */
export interface LeafHasher extends LanePair {
  /** Values hashed so far (the node cap). */
  nodes: number;
  /** `NOTE_*` bits. */
  notes: number;
  /** Set by `stringLeaf` when the leaf held a control character. */
  control: boolean;
  /** The next free nesting level of `units`. */
  readonly level: number;
  readonly units: UnitBuffers;
  numberLeaf(n: number): void;
  stringLeaf(units: Units, raw: string, from: number, to: number, depth: number): void;
  isVolatileKey(units: Units, s: string, start: number, end: number, ka: number, kb: number): boolean;
}

/** Done: the hash is in the walker's `ha`/`hb`. */
export const OK = 0;
/** The text is not valid JSON. */
export const INVALID = -1;
/** Valid so far, but outside this hasher's scope: parse and walk instead. */
export const UNSUPPORTED = -2;

/** Objects with more members than this go to the parse-and-walk path (the repeat check is quadratic). */
const MAX_FAST_MEMBERS = 256;

/** Is there a unit below U+0020 (a control character) in `u[start, end)`? */
function hasControl(u: Uint16Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if ((u[i] as number) < Char.Space) return true;
  return false;
}

function indexOrEnd(i: number): number {
  return i < 0 ? Number.MAX_SAFE_INTEGER : i;
}

/** What `skipValue` is inside of, on its stack. */
const IN_OBJECT = 1;
const IN_ARRAY = 2;

/** The characters of a two-character escape: \" \\ \/ \b \f \n \r \t. */
function isShortEscape(e: number): boolean {
  return (
    e === Char.Quote ||
    e === Char.Backslash ||
    e === Char.Slash ||
    e === Char.LowerB ||
    e === Char.LowerF ||
    e === Char.LowerN ||
    e === Char.LowerR ||
    e === Char.LowerT
  );
}

/** Member-name hash lanes (a, b pairs) of the objects being hashed, innermost last (shared). */
const keyStack: number[] = [];
let keyTop = 0;

/**
 * One pass over `u[start, end)`, the code units of the string `s`; reusable, not re-entrant (a
 * nested text gets its own). Leaves are hashed by the walker's own leaf methods and every hash
 * lands in the walker's `ha`/`hb`, so both paths share one definition of every value.
 */
export class JsonTextHasher {
  private units: Units = { u16: new Uint16Array(0), i32: new Int32Array(0) };
  private u: Uint16Array = this.units.u16;
  private s = '';
  private pos = 0;
  private end = 0;
  /** Content of the last `stringToken`: `[tokenStart, tokenEnd)` of the text, or -1 when it had escapes. */
  private tokenStart = 0;
  private tokenEnd = 0;
  /** The last escaped string token, decoded, as a string and as code units. */
  private decoded = '';
  private decodedUnits: Units = this.units;
  /** Integer part of the last `scanNumber`: digits `[intStart, intEnd)`, a sign before them or not. */
  private intStart = 0;
  private intEnd = 0;
  /** Position of the next backslash at or after the last search (far beyond the end if none). */
  private nextBackslash = -1;

  constructor(private readonly leaf: LeafHasher) {}

  /** Hashes the JSON value in `u[start, end)` (trimmed by the caller) into the walker: OK, INVALID or UNSUPPORTED. */
  hash(units: Units, s: string, start: number, end: number, depth: number): number {
    this.units = units;
    this.u = units.u16;
    this.s = s;
    this.pos = start;
    this.end = end;
    this.nextBackslash = -1;
    const keysBefore = keyTop;
    try {
      const status = this.value(depth);
      if (status !== OK) return status;
      this.skipSpace();
      return this.pos === this.end ? OK : INVALID;
    } finally {
      keyTop = keysBefore;
      this.decoded = '';
      this.s = '';
    }
  }

  /** The code unit at `pos`, or -1 at the end of the range (the array may go on beyond it). */
  private peek(): number {
    return this.pos < this.end ? (this.u[this.pos] as number) : -1;
  }

  private skipSpace(): void {
    const u = this.u;
    let p = this.pos;
    while (p < this.end && isJsonSpace(u[p] as number)) p++;
    this.pos = p;
  }

  private set(c: LanePair): number {
    this.leaf.ha = c.ha;
    this.leaf.hb = c.hb;
    return OK;
  }

  private value(depth: number): number {
    this.skipSpace();
    if (this.pos >= this.end) return INVALID;
    if (++this.leaf.nodes > MAX_NODES) return UNSUPPORTED;
    const c = this.peek();
    if (c === Char.OpenBrace || c === Char.OpenBracket) {
      if (depth >= MAX_DEPTH) {
        this.leaf.notes |= NOTE_DEPTH;
        return this.skipValue() ? this.set(L_TRUNCATED) : INVALID;
      }
      return c === Char.OpenBrace ? this.object(depth) : this.array(depth);
    }
    if (c === Char.Quote) {
      if (!this.stringToken()) return INVALID;
      if (this.tokenStart < 0) {
        // decoded from escapes: JSON.parse has checked it, and "\n" may decode to a control character
        this.leaf.stringLeaf(this.decodedUnits, this.decoded, 0, this.decoded.length, depth);
        return OK;
      }
      const first = this.u[this.tokenStart] as number;
      // Text that may be JSON is hashed as structure, whose reading skips whitespace: look first.
      if ((first === Char.OpenBrace || first === Char.OpenBracket || first <= Char.Space || isSpace(first)) && hasControl(this.u, this.tokenStart, this.tokenEnd)) return INVALID;
      this.leaf.control = false;
      this.leaf.stringLeaf(this.units, this.s, this.tokenStart, this.tokenEnd, depth);
      return this.leaf.control ? INVALID : OK;
    }
    if (c === Char.Minus || isDigit(c)) return this.number();
    return this.literal();
  }

  private object(depth: number): number {
    const leaf = this.leaf;
    this.pos++; // {
    let sa = 0;
    let sb = 0;
    let n = 0;
    const keysFrom = keyTop;
    // a 128-bit filter of the names seen: only a possible repeat is looked for in the list
    let seen0 = 0;
    let seen1 = 0;
    let seen2 = 0;
    let seen3 = 0;
    this.skipSpace();
    if (this.peek() === Char.CloseBrace) {
      this.pos++;
      digest(leaf, 0, 0, 0, TAG_OBJECT);
      return OK;
    }
    for (;;) {
      this.skipSpace();
      if (this.peek() !== Char.Quote || !this.stringToken()) return INVALID;
      const escaped = this.tokenStart < 0;
      const ku = escaped ? this.decodedUnits : this.units;
      const ks = escaped ? this.decoded : this.s;
      const k0 = escaped ? 0 : this.tokenStart;
      const k1 = escaped ? this.decoded.length : this.tokenEnd;
      if (text(leaf, TAG_KEY, ku, k0, k1) && !escaped) return INVALID;
      const ka = leaf.ha;
      const kb = leaf.hb;
      // JSON.parse keeps the last of repeated members: rare, so the exact path handles it.
      if (keyTop - keysFrom >= 2 * MAX_FAST_MEMBERS) return UNSUPPORTED;
      const bit = 1 << (ka & 31);
      const word = (ka >>> 5) & 3;
      const seen = word === 0 ? seen0 : word === 1 ? seen1 : word === 2 ? seen2 : seen3;
      if ((seen & bit) !== 0) {
        for (let i = keysFrom; i < keyTop; i += 2) if (keyStack[i] === ka && keyStack[i + 1] === kb) return UNSUPPORTED;
      }
      if (word === 0) seen0 |= bit;
      else if (word === 1) seen1 |= bit;
      else if (word === 2) seen2 |= bit;
      else seen3 |= bit;
      keyStack[keyTop++] = ka;
      keyStack[keyTop++] = kb;
      const volatile = leaf.isVolatileKey(ku, ks, k0, k1, ka, kb);
      this.skipSpace();
      if (this.peek() !== Char.Colon) return INVALID;
      this.pos++;
      if (volatile) {
        // Left out entirely, as the walker does (its nodes are not counted), but still validated.
        this.skipSpace();
        if (!this.skipValue()) return INVALID;
      } else {
        const status = this.value(depth + 1);
        if (status !== OK) return status;
        member(leaf, ka, kb, leaf.ha, leaf.hb);
        sa = (sa + leaf.ha) | 0;
        sb = (sb + leaf.hb) | 0;
        n++;
      }
      this.skipSpace();
      const c = this.peek();
      this.pos++;
      if (c === Char.CloseBrace) break;
      if (c !== Char.Comma) return INVALID;
    }
    keyTop = keysFrom;
    digest(leaf, sa, sb, n, TAG_OBJECT);
    return OK;
  }

  private array(depth: number): number {
    const leaf = this.leaf;
    this.pos++; // [
    let a = seedA(TAG_ARRAY);
    let b = seedB(TAG_ARRAY);
    let n = 0;
    this.skipSpace();
    if (this.peek() === Char.CloseBracket) {
      this.pos++;
    } else {
      for (;;) {
        const status = this.value(depth + 1);
        if (status !== OK) return status;
        a = chainA(a, leaf.ha);
        b = chainB(b, leaf.hb);
        n++;
        this.skipSpace();
        const c = this.peek();
        this.pos++;
        if (c === Char.CloseBracket) break;
        if (c !== Char.Comma) return INVALID;
      }
    }
    finish(leaf, a ^ n, b);
    return OK;
  }

  /**
   * Reads the string token at `pos` (on its opening quote). Without escapes its content is
   * `u[tokenStart, tokenEnd)`; with escapes it is decoded by `JSON.parse` into `decoded` (and its
   * units) and `tokenStart` is -1. False when the token is not a valid JSON string. The closing
   * quote is found by the engine's native string search, and so is the next backslash (rare, so
   * remembered): the content is not scanned here. Control characters (invalid in a JSON string)
   * are caught by the pass that hashes the content (`Walker.control`).
   */
  private stringToken(): boolean {
    const open = this.pos;
    const close = this.s.indexOf('"', open + 1);
    if (close < 0 || close >= this.end) return false;
    if (this.nextBackslash <= open) this.nextBackslash = indexOrEnd(this.s.indexOf('\\', open + 1));
    if (this.nextBackslash < close) return this.escapedToken(open);
    // control characters in the content are caught by whoever reads it (text, feed)
    this.pos = close + 1;
    this.tokenStart = open + 1;
    this.tokenEnd = close;
    return true;
  }

  /** A string token with escapes: found by scanning, decoded (and validated) by `JSON.parse`. */
  private escapedToken(open: number): boolean {
    const u = this.u;
    const end = this.end;
    let p = open + 1;
    for (;;) {
      if (p >= end) return false;
      const c = u[p] as number;
      if (c === Char.Quote) break;
      p += c === Char.Backslash ? 2 : 1;
    }
    this.pos = p + 1;
    try {
      this.decoded = JSON.parse(this.s.slice(open, p + 1)) as string;
    } catch {
      return false;
    }
    // the walker's next free level: this text's own units stay untouched
    this.decodedUnits = this.leaf.units.encode(this.decoded, this.leaf.level);
    this.tokenStart = -1;
    return true;
  }

  /**
   * Moves past the number token at `pos` (JSON grammar: `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`).
   * Returns 1 for a plain integer (no fraction, no exponent), 0 for another number, -1 when the
   * token is not a valid number.
   */
  private scanNumber(): number {
    const u = this.u;
    const end = this.end;
    let p = this.pos;
    if (p < end && u[p] === Char.Minus) p++;
    const intStart = p;
    const first = p < end ? (u[p] as number) : -1;
    if (first === Char.Digit0) p++;
    else if (first >= Char.Digit1 && first <= Char.Digit9) while (p < end && isDigit(u[p] as number)) p++;
    else return -1;
    const intEnd = p;
    let simple = 1;
    if (p < end && u[p] === Char.Dot) {
      simple = 0;
      p++;
      const fraction = p;
      while (p < end && isDigit(u[p] as number)) p++;
      if (p === fraction) return -1;
    }
    const e = p < end ? (u[p] as number) : -1;
    if (e === Char.LowerE || e === Char.UpperE) {
      simple = 0;
      p++;
      const sign = p < end ? (u[p] as number) : -1;
      if (sign === Char.Plus || sign === Char.Minus) p++;
      const exponent = p;
      while (p < end && isDigit(u[p] as number)) p++;
      if (p === exponent) return -1;
    }
    this.pos = p;
    this.intStart = intStart;
    this.intEnd = intEnd;
    return simple;
  }

  private number(): number {
    const u = this.u;
    const start = this.pos;
    const simple = this.scanNumber();
    if (simple < 0) return INVALID;
    const { intStart, intEnd } = this;
    if (simple === 1 && intEnd - intStart <= 15) {
      // an integer of at most 15 digits is exact as read
      let n = 0;
      for (let i = intStart; i < intEnd; i++) n = n * 10 + ((u[i] as number) - Char.Digit0);
      this.leaf.numberLeaf(intStart > start ? -n : n);
    } else {
      this.leaf.numberLeaf(Number(this.s.slice(start, this.pos)));
    }
    return OK;
  }

  /** Validates a literal at `pos` and moves past it: the lanes of true, false or null, or undefined. */
  private scanLiteral(): LanePair | undefined {
    const u = this.u;
    const p = this.pos;
    const left = this.end - p;
    if (left >= 4 && u[p] === Char.LowerT && u[p + 1] === Char.LowerR && u[p + 2] === Char.LowerU && u[p + 3] === Char.LowerE) {
      this.pos = p + 4;
      return L_TRUE;
    }
    if (left >= 5 && u[p] === Char.LowerF && u[p + 1] === Char.LowerA && u[p + 2] === Char.LowerL && u[p + 3] === Char.LowerS && u[p + 4] === Char.LowerE) {
      this.pos = p + 5;
      return L_FALSE;
    }
    if (left >= 4 && u[p] === Char.LowerN && u[p + 1] === Char.LowerU && u[p + 2] === Char.LowerL && u[p + 3] === Char.LowerL) {
      this.pos = p + 4;
      return L_NULL;
    }
    return undefined;
  }

  private literal(): number {
    const l = this.scanLiteral();
    return l === undefined ? INVALID : this.set(l);
  }

  /**
   * Validates one value at `pos` and moves past it without hashing (a volatile member, or
   * structure beyond the depth cap). Iterative: 10 000 levels of nesting cost no stack.
   */
  private skipValue(): boolean {
    const u = this.u;
    const stack: number[] = [];
    for (;;) {
      this.skipSpace();
      if (this.pos >= this.end) return false;
      const c = u[this.pos] as number;
      if (c === Char.OpenBrace || c === Char.OpenBracket) {
        this.pos++;
        this.skipSpace();
        const close = c === Char.OpenBrace ? Char.CloseBrace : Char.CloseBracket;
        if (this.peek() === close) {
          this.pos++;
        } else {
          stack.push(c === Char.OpenBrace ? IN_OBJECT : IN_ARRAY);
          if (c === Char.OpenBrace && !this.memberName()) return false;
          continue;
        }
      } else if (c === Char.Quote) {
        if (!this.validString()) return false;
      } else if (c === Char.Minus || isDigit(c)) {
        if (this.scanNumber() < 0) return false;
      } else if (this.scanLiteral() === undefined) {
        return false;
      }
      // a value is complete: close containers or move to the next element
      for (;;) {
        if (stack.length === 0) return true;
        this.skipSpace();
        const top = stack[stack.length - 1];
        const d = this.peek();
        this.pos++;
        if (d === Char.Comma) {
          if (top === IN_OBJECT && !this.memberName()) return false;
          break;
        }
        if ((top === IN_OBJECT && d === Char.CloseBrace) || (top === IN_ARRAY && d === Char.CloseBracket)) {
          stack.pop();
          continue;
        }
        return false;
      }
    }
  }

  /** In `skipValue`: a member name and its colon. */
  private memberName(): boolean {
    this.skipSpace();
    if (this.peek() !== Char.Quote || !this.validString()) return false;
    this.skipSpace();
    if (this.peek() !== Char.Colon) return false;
    this.pos++;
    return true;
  }

  /** A string token checked as `JSON.parse` would, without decoding it. */
  private validString(): boolean {
    const u = this.u;
    const end = this.end;
    let p = this.pos + 1;
    for (;;) {
      if (p >= end) return false;
      const c = u[p] as number;
      if (c === Char.Quote) break;
      if (c < Char.Space) return false;
      if (c === Char.Backslash) {
        const e = p + 1 < end ? (u[p + 1] as number) : 0;
        if (e === Char.LowerU) {
          for (let k = 2; k < 6; k++) if (p + k >= end || !isHexDigit(u[p + k] as number)) return false;
          p += 6;
          continue;
        }
        if (!isShortEscape(e)) return false;
        p += 2;
        continue;
      }
      p++;
    }
    this.pos = p + 1;
    return true;
  }
}
