/**
 * Strings as UTF-16 code units in typed arrays, filled by a native copy from `NATIVE_FROM` units
 * on (bench/NOTES.md, agent mix): text hashes read two units at a time as one 32-bit word.
 * Every string a fingerprint reads (JSON text, string leaves, member names) is read from one of
 * these.
 */

/** The same code units seen 16 and 32 bits at a time (little-endian: unit 2k is the low half of word k). */
export interface Units {
  readonly u16: Uint16Array;
  readonly i32: Int32Array;
}

/** Arrays up to this many units are kept for reuse; longer texts get a temporary one. */
const RETAINED_UNITS = 1 << 15;
/** Shorter strings are copied by a loop. */
const NATIVE_FROM = 32;

interface Slot extends Units {
  readonly bytes: Buffer | undefined;
}

const hasBuffer = typeof Buffer === 'function' && typeof Buffer.from === 'function';

function slot(size: number): Slot {
  // Whole 32-bit words (an Int32Array view needs a byte length divisible by 4), with at least one
  // spare unit, so that a word read at the end of an odd-length text stays in bounds.
  const buffer = new ArrayBuffer(4 * ((size >> 1) + 2));
  return {
    u16: new Uint16Array(buffer),
    i32: new Int32Array(buffer),
    bytes: hasBuffer ? Buffer.from(buffer) : undefined,
  };
}

function fill(target: Slot, s: string): void {
  if (target.bytes !== undefined && s.length >= NATIVE_FROM) {
    target.bytes.write(s, 0, 'utf16le');
    return;
  }
  const u = target.u16;
  for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
}

/**
 * One array per nesting level: a string being hashed at level n may hold JSON whose escaped
 * strings are decoded and hashed at level n + 1 while level n is still being read.
 */
export class UnitBuffers {
  private readonly levels: Slot[] = [];

  /** `s` written as code units from index 0 of the arrays of `level` (valid until the next call for that level). */
  encode(s: string, level: number): Units {
    const n = s.length;
    let target = this.levels[level];
    if (target === undefined || target.u16.length < n + 2) {
      if (n > RETAINED_UNITS) {
        const temporary = slot(n);
        fill(temporary, s);
        return temporary;
      }
      target = slot(RETAINED_UNITS);
      this.levels[level] = target;
    }
    fill(target, s);
    return target;
  }
}
