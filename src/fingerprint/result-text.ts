import { Mix, seedA, seedB } from './hash.js';
import type { LanePair } from './lanes.js';
import { Char } from './chars.js';
import { Tag } from './tags.js';

/**
 * Result text, read once: whitespace runs collapse to one space (none at either end), each unit
 * of the collapsed text goes into two alternating hash lanes, and the same pass counts the word
 * characters and checks whether the text could hold a volatile value (ids, times, durations: see
 * `volatile.ts`), which only then costs a run of the regular expression.
 */


/** Whitespace as `String.prototype.trim` and `\s` know it, among the units a text may hold. */
export function isSpace(c: number): boolean {
  return c === Char.Space || (c >= Char.Tab && c <= Char.CarriageReturn) || c === Char.NoBreakSpace || c === Char.ByteOrderMark || c === Char.LineSeparator || c === Char.ParagraphSeparator;
}

function isDigit(c: number): boolean {
  return c >= Char.Digit0 && c <= Char.Digit9;
}

function isLetter(c: number): boolean {
  return (c >= Char.UpperA && c <= Char.UpperZ) || (c >= Char.LowerA && c <= Char.LowerZ);
}

function isAlnum(c: number): boolean {
  return isDigit(c) || isLetter(c);
}

/** What `ResultText.feed` must know of a code unit, as bits: most units are none of the first four. */
const enum UnitClass {
  Plain = 0,
  /** U+0020: hashed as it is, unless it follows whitespace. */
  Blank = 1,
  /** Other whitespace (`isSpace`): a run of it, with blanks, collapses to one U+0020. */
  Space = 2,
  /** Below U+0020: invalid inside a JSON string (tab and line breaks are whitespace as well). */
  Control = 4,
  Digit = 8,
  /** `-`, `_`, `:`, `=`: where an id, a date-time, a time of day or a labelled figure goes on (see `scanVolatile`). */
  Joint = 16,
  /** `p`, which `pid` starts with. */
  LowerP = 32,
  /** A digit, a capital or `a`-`f`: what the runs of an epoch, a hex id or a ULID are made of. */
  IdUnit = 64,
}

/** The class of every UTF-16 code unit, made once: one lookup a unit in `feed`. */
const UNIT_CLASS = new Uint8Array(0x10000);
for (let c = 0; c < UNIT_CLASS.length; c++) {
  const white = c === Char.Space ? UnitClass.Blank : isSpace(c) ? UnitClass.Space : 0;
  UNIT_CLASS[c] =
    white |
    (c < Char.Space ? UnitClass.Control : 0) |
    (isDigit(c) ? UnitClass.Digit : 0) |
    (c === Char.Minus || c === Char.Underscore || c === Char.Colon || c === Char.Equals ? UnitClass.Joint : 0) |
    (c === Char.LowerP ? UnitClass.LowerP : 0) |
    (isDigit(c) || (c >= Char.UpperA && c <= Char.UpperZ) || (c >= Char.LowerA && c <= Char.LowerF) ? UnitClass.IdUnit : 0);
}

/** A word character: an ASCII letter or digit, or a unit past ASCII that is not whitespace. */
export function isWordUnit(c: number): boolean {
  return c > Char.LastAscii ? !isSpace(c) : isAlnum(c);
}

/** Does `u[from, to)` hold a word character (`isWordUnit`)? */
export function hasWordUnit(u: Uint16Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (isWordUnit(u[i] as number)) return true;
  return false;
}

/**
 * The duration units after a number, each followed by a word boundary: the volatile pattern's
 * duration alternative is built from this list (`volatile.ts`), and `unitAt` reads it.
 */
export const DURATION_UNITS: readonly string[] = ['ms', 'µs', 'us', 'ns', 's', 'sec', 'secs', 'second', 'seconds', 'millisecond', 'milliseconds'];

/**
 * How the labels of execution figures end (`FIGURE_LABELS` in `volatile.ts`), in small letters:
 * the cheap check (`figureAt`) opens the pattern where a run of letters ends so before `:` or `=`.
 */
export const FIGURE_LABEL_ENDS: readonly string[] = ['processed', 'billed', 'scanned', 'shuffled', 'ms', 'millis', 'elapsed', 'time', 'took', 'duration'];

const enum UnitFirst {
  /** Code units the table below covers: the units start with an ASCII letter or `µ`. */
  Size = 0x100,
}

/** 1 at the first code unit of each duration unit: the cheap test before comparing units. */
const UNIT_FIRST = new Uint8Array(UnitFirst.Size);
for (const unit of DURATION_UNITS) UNIT_FIRST[unit.charCodeAt(0)] = 1;

/** Does a duration unit start at `u[at]` and end where the pattern's `\b` holds? */
function unitAt(u: Uint16Array, at: number, end: number): boolean {
  if (at >= end) return false;
  const first = u[at] as number;
  if (first >= UnitFirst.Size || UNIT_FIRST[first] === 0) return false;
  for (const unit of DURATION_UNITS) {
    const stop = at + unit.length;
    if (stop > end) continue;
    let same = true;
    for (let k = 0; k < unit.length && same; k++) same = u[at + k] === unit.charCodeAt(k);
    if (!same) continue;
    // \b after the unit: the next character is not a word character (or the text ends)
    const next = stop < end ? (u[stop] as number) : -1;
    if (!(isAlnum(next) || next === Char.Underscore)) return true;
  }
  return false;
}

/** After the digit at `u[i]`: a duration unit right away, or after one character that may be a space. */
function unitAfterNumber(u: Uint16Array, i: number, end: number): boolean {
  if (i + 1 >= end) return false;
  const next = u[i + 1] as number;
  if (isDigit(next) || next === Char.Dot) return false;
  return unitAt(u, i + 1, end) || (!isAlnum(next) && unitAt(u, i + 2, end));
}

/** At `u[i]` (`-`, `_` or `:`) after runs of digits, hex digits and letters: could a volatile value be there? */
function volatileAfterRun(u: Uint16Array, i: number, end: number, c: number, digits: number, hex: number, letters: number): boolean {
  if (c === Char.Minus && (hex >= 8 || digits >= 4)) return true;
  if ((c === Char.Minus || c === Char.Underscore) && letters >= 2 && alnumRun(u, i + 1, end) >= 10) return true;
  return c === Char.Colon && digits >= 1 && i + 2 < end && isDigit(u[i + 1] as number) && isDigit(u[i + 2] as number);
}

/**
 * At `u[i]` (`:` or `=`), a number next (after one space at most), and before it (after one space
 * and one quote at most) letters that end as a figure's label does (`FIGURE_LABEL_ENDS`)?
 */
function figureAt(u: Uint16Array, i: number, start: number, end: number): boolean {
  const next = i + 1 < end && isSpace(u[i + 1] as number) ? i + 2 : i + 1;
  if (next >= end || !isDigit(u[next] as number)) return false;
  let j = i - 1;
  if (j >= start && isSpace(u[j] as number)) j--;
  if (j >= start && (u[j] === Char.Quote || u[j] === Char.Apostrophe)) j--;
  for (const label of FIGURE_LABEL_ENDS) {
    const from = j - label.length + 1;
    if (from < start) continue;
    let k = 0;
    while (k < label.length && ((u[from + k] as number) | 0x20) === label.charCodeAt(k)) k++;
    if (k === label.length) return true;
  }
  return false;
}

/** Letters and digits in a row from `u[from]` (at most 10 are counted). */
function alnumRun(u: Uint16Array, from: number, end: number): number {
  let n = 0;
  for (let i = from; i < end && n < 10 && isAlnum(u[i] as number); i++) n++;
  return n;
}

/**
 * One result text being read, possibly in pieces (around the volatile values the pattern found):
 * the hash lanes, the collapsed length, and what the pass learnt. The text as a whole must be
 * trimmed (`stringLeaf` trims it): a whitespace run then always has text after it, so its one
 * space is hashed where the run starts.
 */
export class ResultText implements LanePair {
  ha = 0;
  hb = 0;
  /** Lanes in progress: even units go into `a`, odd ones into `b`. */
  private a = 0;
  private b = 0;
  /** Units of the collapsed text so far. */
  private n = 0;
  /** `UnitClass.Blank` where whitespace is dropped (at the start, after a space), else 0. */
  private blank: number = UnitClass.Blank;
  digit = false;
  /** A unit below U+0020 was seen (invalid inside a JSON string). */
  control = false;
  /**
   * The text could match the volatile pattern somewhere (a necessary condition, checked after
   * the pass when it saw a digit: see `feed`); false means it cannot.
   */
  mayHoldVolatile = false;

  start(): void {
    this.a = seedA(Tag.String);
    this.b = seedB(Tag.String);
    this.n = 0;
    this.blank = UnitClass.Blank;
    this.digit = false;
    this.control = false;
    this.mayHoldVolatile = false;
  }

  /** One unit of the collapsed text that is not whitespace (a volatile value's placeholder). */
  unit(c: number): void {
    if ((this.n & 1) === 0) this.a = Math.imul(this.a ^ c, Mix.Even);
    else this.b = Math.imul(this.b ^ c, Mix.Odd);
    this.n++;
    this.blank = 0;
  }

  /** The hash of the text read: the lanes back in their order, the length in lane a. */
  finish(): void {
    this.ha = this.a ^ this.n;
    this.hb = this.b;
  }

  /**
   * Reads `u[from, to)`, one table lookup a unit (`UNIT_CLASS`). Two units in a row that are
   * hashed as they are (no whitespace but single blanks, no control character, no digit: most of
   * any text) go into both lanes at once; the rest is read a unit at a time, and there a digit is
   * looked at for a duration unit after it. Text with a digit is then checked for what the
   * volatile pattern's alternatives need (`scanVolatile`) only where the cheap checks leave it
   * open, without a second pass over every unit (bench/NOTES.md, JSON results).
   */
  feed(u: Uint16Array, from: number, to: number): void {
    let a = this.a;
    let b = this.b;
    let n = this.n;
    let blank = this.blank;
    let seen = 0;
    let duration = false;
    let i = from;
    while (i < to) {
      if ((n & 1) === 0) {
        // the fast stretch: pairs of units hashed as they are, the first into lane a
        const first = i;
        const stop = to - 1;
        while (i < stop) {
          const c0 = u[i] as number;
          const c1 = u[i + 1] as number;
          const k0 = UNIT_CLASS[c0] as number;
          const k1 = UNIT_CLASS[c1] as number;
          if (((k0 | k1) & (UnitClass.Space | UnitClass.Control | UnitClass.Digit)) !== 0 || (k0 & (k1 | blank) & UnitClass.Blank) !== 0) break;
          a = Math.imul(a ^ c0, Mix.Even);
          b = Math.imul(b ^ c1, Mix.Odd);
          seen |= k0 | k1;
          blank = k1 & UnitClass.Blank;
          i += 2;
        }
        n += i - first;
        if (i >= to) break;
      }
      // one unit: whitespace collapses to one space where its run starts
      let c = u[i] as number;
      const k = UNIT_CLASS[c] as number;
      seen |= k;
      if ((k & UnitClass.Digit) !== 0 && !duration) duration = unitAfterNumber(u, i, to);
      i++;
      if ((k & (UnitClass.Blank | UnitClass.Space)) !== 0) {
        if (blank !== 0) continue;
        c = Char.Space;
        blank = UnitClass.Blank;
      } else {
        blank = 0;
      }
      if ((n & 1) === 0) a = Math.imul(a ^ c, Mix.Even);
      else b = Math.imul(b ^ c, Mix.Odd);
      n++;
    }
    this.a = a;
    this.b = b;
    this.n = n;
    this.blank = blank;
    if ((seen & UnitClass.Control) !== 0) this.control = true;
    if ((seen & UnitClass.Digit) !== 0) {
      this.digit = true;
      // Without `-`, `_`, `:` or `p`, only a duration after a digit and a run of 10 id units are
      // left of `scanVolatile`'s checks: the exact check runs only when one of those holds.
      if (((seen & (UnitClass.Joint | UnitClass.LowerP)) !== 0 || duration || hasIdRun(u, from, to)) && scanVolatile(u, from, to)) this.mayHoldVolatile = true;
    }
  }
}

/** The shortest run of id units (`UnitClass.IdUnit`) an epoch, a hex id or a ULID is written with. */
const ID_RUN = 10;

function isIdUnit(c: number): boolean {
  return ((UNIT_CLASS[c] as number) & UnitClass.IdUnit) !== 0;
}

/**
 * Is there a run of `ID_RUN` id units in `u[start, end)`? Every such run holds one of the units
 * `ID_RUN` apart from `start + ID_RUN - 1`: only those are looked at, and the run is measured
 * around the ones that are id units.
 */
function hasIdRun(u: Uint16Array, start: number, end: number): boolean {
  for (let p = start + ID_RUN - 1; p < end; p += ID_RUN) {
    if (!isIdUnit(u[p] as number)) continue;
    let left = p;
    while (left > start && p - left < ID_RUN - 1 && isIdUnit(u[left - 1] as number)) left--;
    let right = p + 1;
    while (right < end && right - left < ID_RUN && isIdUnit(u[right] as number)) right++;
    if (right - left >= ID_RUN) return true;
  }
  return false;
}

/**
 * Could the volatile pattern match in `u[start, end)`? Its alternatives each need, in a row: 8 hex
 * digits then `-` (uuid); 4 digits then `-` (ISO date-time); a digit, `:`, two digits (time of
 * day); 10 digits (epoch); 16 hex digits (long hex id); 26 of [0-9A-Z] (ULID); 2 letters, `-` or
 * `_`, then 10 letters or digits (prefixed id); a digit then a unit, right away or after one
 * character (duration); `pid` (process id); a figure's label, `:` or `=`, a number (`figureAt`).
 */
function scanVolatile(u: Uint16Array, start: number, end: number): boolean {
  let digits = 0;
  let hex = 0;
  let upper = 0;
  let letters = 0;
  for (let i = start; i < end; i++) {
    const c = u[i] as number;
    if (c >= Char.Digit0 && c <= Char.Digit9) {
      digits++;
      hex++;
      upper++;
      letters = 0;
      if (digits >= 10 || hex >= 16 || upper >= 26 || unitAfterNumber(u, i, end)) return true;
      continue;
    }
    if (c >= Char.LowerA ? c <= Char.LowerZ : c >= Char.UpperA && c <= Char.UpperZ) {
      digits = 0;
      hex = (c >= Char.LowerA && c <= Char.LowerF) || (c >= Char.UpperA && c <= Char.UpperF) ? hex + 1 : 0;
      upper = c <= Char.UpperZ ? upper + 1 : 0;
      letters++;
      if (hex >= 16 || upper >= 26) return true;
      if (c === Char.LowerP && i + 2 < end && u[i + 1] === Char.LowerI && u[i + 2] === Char.LowerD) return true;
      continue;
    }
    if ((c === Char.Minus || c === Char.Underscore || c === Char.Colon) && volatileAfterRun(u, i, end, c, digits, hex, letters)) return true;
    if ((c === Char.Colon || c === Char.Equals) && figureAt(u, i, start, end)) return true;
    digits = hex = upper = letters = 0;
  }
  return false;
}

const probe = new ResultText();

/** Could the volatile pattern match anywhere in `u[start, end)`? (The check `ResultText.feed` makes.) */
export function mayHoldVolatile(u: Uint16Array, start: number, end: number): boolean {
  probe.start();
  probe.feed(u, start, end);
  return probe.mayHoldVolatile;
}
