import { Char } from './chars.js';
import { DecimalReader, numberEnd } from './decimal.js';
import { Mix, seedA, seedB } from './hash.js';
import { chainA, chainB, digest, finish, member, rotl7, text, type LanePair } from './lanes.js';
import { Cap, L_FALSE, L_NULL, L_TRUE, L_TRUNCATED, Note, Tag } from './tags.js';
import type { UnitBuffers, Units } from './units.js';

/**
 * Hashes JSON text in one pass, without `JSON.parse` and without building the values: the hash is
 * exactly the one the structural walker (`canonical.ts`) gives the parsed value, so a JSON string
 * attribute (SDK 2.x) and the same structured value (SDK 3.x) stay equal.
 *
 * The text is validated as strictly as `JSON.parse` does (malformed text is then hashed as plain
 * text by the caller). A few valid but unusual inputs are left to the exact parse-and-walk path
 * (`UNSUPPORTED`): an object with a repeated member name (`JSON.parse` keeps the last value), an
 * object with very many members (the repeat check would get slow), and values beyond the node cap
 * (which nodes are cut depends on the walker's visiting order).
 *
 * The unit just past the text is set to 0 while it is read (and restored after): every loop stops
 * at a unit below U+0020 anyway (invalid outside strings, and inside them), so no loop tests for
 * the end of the text on every unit.
 */

/** Done: the hash is in the walker's `ha`/`hb`. */
export const OK = 0;
/** The text is not valid JSON. */
export const INVALID = -1;
/** Valid so far, but outside this hasher's scope: parse and walk instead. */
export const UNSUPPORTED = -2;

const enum Status {
  Ok = 0,
  Invalid = -1,
  Unsupported = -2,
}

/** The name stack's size when made, and the most it keeps between texts (lanes, two a name). */
const NAMES_FIRST_SIZE = 64;
const NAMES_KEPT_SIZE = 1024;

/** Objects with more members than this go to the parse-and-walk path (the repeat check is quadratic). */
const enum Members {
  MaxFast = 256,
}

/** The stop unit set past the end of the text (see above). */
const SENTINEL = 0;

function isHexDigit(c: number): boolean {
  return (c >= Char.Digit0 && c <= Char.Digit9) || (c >= Char.UpperA && c <= Char.UpperF) || (c >= Char.LowerA && c <= Char.LowerF);
}

/** Is there a unit below U+0020 (a control character) in `u[start, end)`? */
function hasControl(u: Uint16Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if ((u[i] as number) < Char.Space) return true;
  return false;
}

function indexOrEnd(i: number): number {
  return i < 0 ? Number.MAX_SAFE_INTEGER : i;
}

/**
 * What the JSON-text hasher needs of the structural walker (`Walker` in `canonical.ts`): the lanes
 * every hash lands in, the counters a fingerprint keeps, and the walker's own leaf methods, so
 * that both paths share one definition of every leaf (an interface: no import circle).
 */
export interface LeafHasher extends LanePair {
  /** Values hashed so far (the node cap). */
  nodes: number;
  /** `Note` bits. */
  notes: number;
  /** Set by `stringLeaf` when the leaf held a control character. */
  control: boolean;
  /** The next free nesting level of `units`. */
  readonly level: number;
  readonly units: UnitBuffers;
  numberLeaf(n: number): void;
  stringLeaf(units: Units, raw: string, from: number, to: number, depth: number): void;
  isVolatileKey(units: Units, s: string, start: number, end: number, ka: number, kb: number): boolean;
  /** Does the member name in `units[start, end)` of an object at `depth` name the call's action (see `Fingerprint.action`)? */
  isActionKey(units: Units, s: string, start: number, end: number, ka: number, kb: number, depth: number): boolean;
  /** The member (name lanes `ka`/`kb`, its hash in the walker's lanes) named the action and held a string: see `Fingerprint.action`. */
  actionMember(): void;
}

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
  private readonly decimal = new DecimalReader();
  /** Position of the next backslash at or after the last search (far beyond the end if none). */
  private nextBackslash = -1;
  /**
   * The name lanes (a, b pairs) of the members of the objects being read, the innermost last:
   * one stack for all of them rather than an array per object (bench/NOTES.md, heap allocated per
   * tool call). Deep text grows it (at most `Cap.Depth` objects of `Members.MaxFast`
   * names); it goes back to its first size after such a text (see `hash`).
   */
  private names = new Int32Array(NAMES_FIRST_SIZE);
  private namesTop = 0;

  constructor(private readonly leaf: LeafHasher) {}

  /** Hashes the JSON value in `u[start, end)` (trimmed by the caller) into the walker: OK, INVALID or UNSUPPORTED. */
  hash(units: Units, s: string, start: number, end: number, depth: number): number {
    const u = units.u16;
    this.units = units;
    this.u = u;
    this.s = s;
    this.pos = start;
    this.end = end;
    this.nextBackslash = -1;
    this.namesTop = 0;
    // the arrays always have room past the text (see `units.ts`)
    const past = u[end] as number;
    u[end] = SENTINEL;
    try {
      const status = this.value(depth);
      if (status !== Status.Ok) return status;
      this.skipSpace();
      return this.pos === end ? Status.Ok : Status.Invalid;
    } finally {
      u[end] = past;
      if (this.names.length > NAMES_KEPT_SIZE) this.names = new Int32Array(NAMES_FIRST_SIZE);
      this.decoded = '';
      this.s = '';
    }
  }

  /** Moves past JSON whitespace; returns the unit there (the sentinel at the end). */
  private skipSpace(): number {
    const u = this.u;
    let p = this.pos;
    let c = u[p] as number;
    while (c === Char.Space || c === Char.LineFeed || c === Char.CarriageReturn || c === Char.Tab) c = u[++p] as number;
    this.pos = p;
    return c;
  }

  private set(c: LanePair): number {
    this.leaf.ha = c.ha;
    this.leaf.hb = c.hb;
    return Status.Ok;
  }

  private value(depth: number): number {
    const c = this.skipSpace();
    const leaf = this.leaf;
    if (c === Char.Quote) {
      if (++leaf.nodes > Cap.Nodes) return Status.Unsupported;
      return this.stringValue(depth);
    }
    if (c === SENTINEL && this.pos >= this.end) return Status.Invalid;
    if (++leaf.nodes > Cap.Nodes) return Status.Unsupported;
    if (c === Char.OpenBrace || c === Char.OpenBracket) {
      if (depth >= Cap.Depth) {
        leaf.notes |= Note.Depth;
        return this.skipValue() ? this.set(L_TRUNCATED) : Status.Invalid;
      }
      return c === Char.OpenBrace ? this.object(depth) : this.array(depth);
    }
    if (c === Char.Minus || (c >= Char.Digit0 && c <= Char.Digit9)) return this.number();
    const literal = this.scanLiteral(c);
    return literal === undefined ? Status.Invalid : this.set(literal);
  }

  /** A string value at `pos` (its opening quote). */
  private stringValue(depth: number): number {
    const leaf = this.leaf;
    if (!this.stringToken()) return Status.Invalid;
    if (this.tokenStart < 0) {
      // decoded from escapes: JSON.parse has checked it, and "\n" may decode to a control character
      leaf.stringLeaf(this.decodedUnits, this.decoded, 0, this.decoded.length, depth);
      return Status.Ok;
    }
    const u = this.u;
    const first = u[this.tokenStart] as number;
    // Text that may be JSON is hashed as structure, whose reading skips whitespace: look first.
    if (
      (first === Char.OpenBrace || first === Char.OpenBracket || first <= Char.Space || first === Char.NoBreakSpace || first >= Char.LineSeparator) &&
      hasControl(u, this.tokenStart, this.tokenEnd)
    ) {
      return Status.Invalid;
    }
    leaf.control = false;
    leaf.stringLeaf(this.units, this.s, this.tokenStart, this.tokenEnd, depth);
    return leaf.control ? Status.Invalid : Status.Ok;
  }

  private object(depth: number): number {
    const leaf = this.leaf;
    const u = this.u;
    this.pos++; // {
    let sa = 0;
    let sb = 0;
    let n = 0;
    let c = this.skipSpace();
    if (c === Char.CloseBrace) {
      this.pos++;
      digest(leaf, 0, 0, 0, Tag.Object);
      return Status.Ok;
    }
    /** This object's member names are `names[base, namesTop)`. */
    const base = this.namesTop;
    for (;;) {
      if (c !== Char.Quote) return Status.Invalid;
      // The member name, hashed as it is scanned (`text` in `lanes.ts`: pairs of units as 32-bit
      // words, alternating lanes), unless it has escapes (bench/NOTES.md, agent mix).
      const k0 = this.pos + 1;
      let p = k0;
      let a = seedA(Tag.Key);
      let b = seedB(Tag.Key);
      let words = 0;
      let c0 = u[p] as number;
      for (;;) {
        if (c0 === Char.Quote || c0 === Char.Backslash || c0 < Char.Space) break;
        const c1 = u[p + 1] as number;
        if (c1 === Char.Quote || c1 === Char.Backslash || c1 < Char.Space) {
          // the last unit alone, as the low half of a word
          if ((words & 1) === 0) a = Math.imul(rotl7(a) ^ c0, Mix.Even);
          else b = Math.imul(rotl7(b) ^ c0, Mix.Odd);
          p++;
          c0 = c1;
          break;
        }
        const w = c0 | (c1 << 16);
        if ((words & 1) === 0) a = Math.imul(rotl7(a) ^ w, Mix.Even);
        else b = Math.imul(rotl7(b) ^ w, Mix.Odd);
        words++;
        p += 2;
        c0 = u[p] as number;
      }
      let ku = this.units;
      let ks = this.s;
      let kStart = k0;
      let kEnd = p;
      let ka: number;
      let kb: number;
      if (c0 === Char.Quote) {
        this.pos = p + 1;
        ka = a ^ (p - k0);
        kb = b;
      } else if (c0 === Char.Backslash) {
        this.pos = k0 - 1;
        if (!this.stringToken() || this.tokenStart >= 0) return Status.Invalid;
        ku = this.decodedUnits;
        ks = this.decoded;
        kStart = 0;
        kEnd = ks.length;
        // a decoded name may hold control characters ("\n"): valid, as JSON.parse says
        text(leaf, Tag.Key, ku, 0, kEnd);
        ka = leaf.ha;
        kb = leaf.hb;
      } else {
        // a control character in the name, or the end of the text
        return Status.Invalid;
      }
      // JSON.parse keeps the last of repeated members: rare, so the exact path handles it.
      const top = this.namesTop;
      if (top - base >= 2 * Members.MaxFast) return Status.Unsupported;
      let names = this.names;
      for (let k = base; k < top; k += 2) if (names[k] === ka && names[k + 1] === kb) return Status.Unsupported;
      if (top + 2 > names.length) {
        names = new Int32Array(2 * names.length);
        names.set(this.names);
        this.names = names;
      }
      names[top] = ka;
      names[top + 1] = kb;
      this.namesTop = top + 2;
      const volatile = leaf.isVolatileKey(ku, ks, kStart, kEnd, ka, kb);
      if (this.skipSpace() !== Char.Colon) return Status.Invalid;
      this.pos++;
      if (volatile) {
        // Left out entirely, as the walker does (its nodes are not counted), but still validated.
        this.skipSpace();
        if (!this.skipValue()) return Status.Invalid;
      } else {
        const action = leaf.isActionKey(ku, ks, kStart, kEnd, ka, kb, depth) && this.skipSpace() === Char.Quote;
        const status = this.value(depth + 1);
        if (status !== Status.Ok) return status;
        member(leaf, ka, kb, leaf.ha, leaf.hb);
        if (action) leaf.actionMember();
        sa = (sa + leaf.ha) | 0;
        sb = (sb + leaf.hb) | 0;
        n++;
      }
      const d = this.skipSpace();
      this.pos++;
      if (d === Char.CloseBrace) break;
      if (d !== Char.Comma) return Status.Invalid;
      c = this.skipSpace();
    }
    this.namesTop = base;
    digest(leaf, sa, sb, n, Tag.Object);
    return Status.Ok;
  }

  private array(depth: number): number {
    const leaf = this.leaf;
    this.pos++; // [
    let a = seedA(Tag.Array);
    let b = seedB(Tag.Array);
    let n = 0;
    if (this.skipSpace() === Char.CloseBracket) {
      this.pos++;
    } else {
      for (;;) {
        const status = this.value(depth + 1);
        if (status !== Status.Ok) return status;
        a = chainA(a, leaf.ha);
        b = chainB(b, leaf.hb);
        n++;
        const c = this.skipSpace();
        this.pos++;
        if (c === Char.CloseBracket) break;
        if (c !== Char.Comma) return Status.Invalid;
      }
    }
    finish(leaf, a ^ n, b);
    return Status.Ok;
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

  /** The number token at `pos`, its value handed to the walker (converted from text only when `DecimalReader` cannot). */
  private number(): number {
    const start = this.pos;
    const reader = this.decimal;
    const after = reader.read(this.u, start);
    if (after < 0) return Status.Invalid;
    this.pos = after;
    this.leaf.numberLeaf(reader.exact ? reader.value : Number(this.s.slice(start, after)));
    return Status.Ok;
  }

  /** Validates a literal at `pos` (starting with `c`) and moves past it: the lanes of true, false or null, or undefined. */
  private scanLiteral(c: number): LanePair | undefined {
    const u = this.u;
    const p = this.pos;
    // the sentinel past the end fails every comparison: no length check needed
    if (c === Char.LowerT && u[p + 1] === Char.LowerR && u[p + 2] === Char.LowerU && u[p + 3] === Char.LowerE) {
      this.pos = p + 4;
      return L_TRUE;
    }
    if (c === Char.LowerF && u[p + 1] === Char.LowerA && u[p + 2] === Char.LowerL && u[p + 3] === Char.LowerS && u[p + 4] === Char.LowerE) {
      this.pos = p + 5;
      return L_FALSE;
    }
    if (c === Char.LowerN && u[p + 1] === Char.LowerU && u[p + 2] === Char.LowerL && u[p + 3] === Char.LowerL) {
      this.pos = p + 4;
      return L_NULL;
    }
    return undefined;
  }

  /**
   * Validates one value at `pos` and moves past it without hashing (a volatile member, or
   * structure beyond the depth cap). Iterative: 10 000 levels of nesting cost no stack.
   */
  private skipValue(): boolean {
    // 1 = inside an object, 2 = inside an array
    const stack: number[] = [];
    for (;;) {
      const c = this.skipSpace();
      if (c === Char.OpenBrace || c === Char.OpenBracket) {
        this.pos++;
        const close = c === Char.OpenBrace ? Char.CloseBrace : Char.CloseBracket;
        if (this.skipSpace() === close) {
          this.pos++;
        } else {
          stack.push(c === Char.OpenBrace ? 1 : 2);
          if (c === Char.OpenBrace && !this.memberName()) return false;
          continue;
        }
      } else if (c === Char.Quote) {
        if (!this.validString()) return false;
      } else if (c === Char.Minus || (c >= Char.Digit0 && c <= Char.Digit9)) {
        const after = numberEnd(this.u, this.pos);
        if (after < 0) return false;
        this.pos = after;
      } else if (this.scanLiteral(c) === undefined) {
        return false;
      }
      // a value is complete: close containers or move to the next element
      for (;;) {
        if (stack.length === 0) return true;
        const top = stack[stack.length - 1];
        const d = this.skipSpace();
        this.pos++;
        if (d === Char.Comma) {
          if (top === 1 && !this.memberName()) return false;
          break;
        }
        if ((top === 1 && d === Char.CloseBrace) || (top === 2 && d === Char.CloseBracket)) {
          stack.pop();
          continue;
        }
        return false;
      }
    }
  }

  /** In `skipValue`: a member name and its colon. */
  private memberName(): boolean {
    if (this.skipSpace() !== Char.Quote || !this.validString()) return false;
    if (this.skipSpace() !== Char.Colon) return false;
    this.pos++;
    return true;
  }

  /** A string token checked as `JSON.parse` would, without decoding it. */
  private validString(): boolean {
    const u = this.u;
    let p = this.pos + 1;
    for (;;) {
      const c = u[p] as number;
      if (c === Char.Quote) break;
      // a control character, or the sentinel at the end
      if (c < Char.Space) return false;
      if (c === Char.Backslash) {
        const e = u[p + 1] as number;
        if (e === Char.LowerU) {
          for (let k = 2; k < 6; k++) if (!isHexDigit(u[p + k] as number)) return false;
          p += 6;
          continue;
        }
        if (
          e !== Char.Quote &&
          e !== Char.Backslash &&
          e !== Char.Slash &&
          e !== Char.LowerB &&
          e !== Char.LowerF &&
          e !== Char.LowerN &&
          e !== Char.LowerR &&
          e !== Char.LowerT
        ) {
          return false;
        }
        p += 2;
        continue;
      }
      p++;
    }
    this.pos = p + 1;
    return true;
  }
}
