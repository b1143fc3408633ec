import { combine, hashString, StreamHasher, UnorderedHash, type Hash } from './hash.js';
import {
  isNowTimestampNumber,
  isNowTimestampString,
  isStatusWord,
  normalizeKey,
  resultTextPattern,
  type Side,
} from './volatile.js';

/**
 * Structural fingerprints of tool arguments and results. The hash is defined on the value, not on
 * a serialisation: object members combine order-independently, so key order and JSON whitespace
 * cannot matter, and no canonical string is ever built (a 1 MB argument costs one pass, not a
 * second 1 MB string). A string holding JSON hashes like the structure it holds, so SDK 3.x
 * structured attributes and 2.x JSON-string attributes of the same call are equal.
 */

export interface FingerprintOptions {
  readonly side: Side;
  /** Normalised (see `normalizeKey`) member names whose values are ignored. */
  readonly volatileKeys: ReadonlySet<string>;
  /** Start time of the call (epoch ms): in arguments, timestamps this close to it are "now". */
  readonly now?: number;
}

export interface Fingerprint {
  readonly hash: Hash;
  /**
   * Leaves that carry information: numbers and text other than status words ("ok", "done"),
   * after volatile values are removed. Zero means a generic result such as `{"status":"ok"}`,
   * which is no evidence that two different calls achieved the same thing.
   */
  readonly informative: number;
}

const TAG_STRING = 0x51;
const TAG_NUMBER = 0x52;
const TAG_TRUE = 0x53;
const TAG_FALSE = 0x54;
const TAG_NULL = 0x55;
const TAG_ARRAY = 0x56;
const TAG_OBJECT = 0x57;
const TAG_VOLATILE = 0x58;
const TAG_BYTES = 0x59;
const TAG_CYCLE = 0x5a;
const TAG_TRUNCATED = 0x5b;
const TAG_BIGINT = 0x5c;
const TAG_OTHER = 0x5d;
const TAG_KEY = 0x5e;
const TAG_SET = 0x5f;

/** Deeper structure than this hashes as one marker: bounded stack, never a RangeError. */
export const MAX_DEPTH = 96;
/** A value with more nodes than this is hashed on its first nodes only. */
export const MAX_NODES = 200_000;
/** Texts longer than this are not searched for JSON structure (hashed as text, in one pass). */
const MAX_JSON_TEXT = 8 * 1024 * 1024;

const PLACEHOLDER = 0x1;

const H_NULL = hashString('', TAG_NULL);
const H_TRUE = hashString('', TAG_TRUE);
const H_FALSE = hashString('', TAG_FALSE);
const H_VOLATILE = hashString('', TAG_VOLATILE);
const H_CYCLE = hashString('', TAG_CYCLE);
const H_TRUNCATED = hashString('', TAG_TRUNCATED);

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0xfeff || c === 0x2028 || c === 0x2029;
}

function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c > 127;
}

function hasDigit(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) return true;
  }
  return false;
}

class Walker {
  private readonly path = new Set<object>();
  private nodes = 0;
  informative = 0;
  private readonly text = new StreamHasher();

  constructor(private readonly options: FingerprintOptions) {}

  value(v: unknown, depth: number): Hash {
    if (++this.nodes > MAX_NODES) return H_TRUNCATED;
    switch (typeof v) {
      case 'string':
        return this.string(v, depth);
      case 'number':
        return this.number(v);
      case 'boolean':
        return v ? H_TRUE : H_FALSE;
      case 'bigint':
        this.informative++;
        return hashString(v.toString(), TAG_BIGINT);
      case 'undefined':
        return H_NULL;
      case 'object':
        return v === null ? H_NULL : this.object(v, depth);
      default:
        // functions and symbols carry no comparable content
        return hashString(typeof v, TAG_OTHER);
    }
  }

  private number(n: number): Hash {
    if (this.options.side === 'arguments' && isNowTimestampNumber(n, this.options.now)) return H_VOLATILE;
    this.informative++;
    // String(n) is canonical: 1.0, 1e0 and 1 all print "1"
    return hashString(String(n), TAG_NUMBER);
  }

  private string(raw: string, depth: number): Hash {
    let start = 0;
    let end = raw.length;
    while (start < end && isSpace(raw.charCodeAt(start))) start++;
    while (end > start && isSpace(raw.charCodeAt(end - 1))) end--;
    const first = raw.charCodeAt(start);
    const last = raw.charCodeAt(end - 1);
    if (((first === 123 && last === 125) || (first === 91 && last === 93)) && end - start <= MAX_JSON_TEXT) {
      const parsed = tryParseJson(start === 0 && end === raw.length ? raw : raw.slice(start, end));
      if (parsed !== undefined) return this.value(parsed.value, depth);
    }
    if (this.options.side === 'arguments') {
      const s = start === 0 && end === raw.length ? raw : raw.slice(start, end);
      if (isNowTimestampString(s, this.options.now)) return H_VOLATILE;
      if (!isStatusWord(s)) this.informative++;
      return hashString(s, TAG_STRING);
    }
    return this.resultText(raw, start, end);
  }

  /** Result text: whitespace runs collapse to one space, volatile values become one placeholder. */
  private resultText(s: string, start: number, end: number): Hash {
    const h = this.text;
    h.reset(TAG_STRING);
    let pendingSpace = false;
    let words = 0;
    const feed = (from: number, to: number): void => {
      for (let i = from; i < to; i++) {
        const c = s.charCodeAt(i);
        if (isSpace(c)) {
          pendingSpace = h.length > 0;
          continue;
        }
        if (pendingSpace) {
          h.unit(32);
          pendingSpace = false;
        }
        h.unit(c);
        if (isWordChar(c)) words++;
      }
    };
    if (hasDigit(s)) {
      const pattern = resultTextPattern();
      pattern.lastIndex = start;
      let at = start;
      for (let m = pattern.exec(s); m !== null && m.index < end; m = pattern.exec(s)) {
        const matchEnd = Math.min(m.index + m[0].length, end);
        feed(at, m.index);
        if (pendingSpace) {
          h.unit(32);
          pendingSpace = false;
        }
        h.unit(PLACEHOLDER);
        at = matchEnd;
        if (m[0].length === 0) pattern.lastIndex++;
      }
      feed(at, end);
    } else {
      feed(start, end);
    }
    if (words > 0 && !(end - start <= 48 && isStatusWord(s.slice(start, end)))) this.informative++;
    return h.digest();
  }

  private object(o: object, depth: number): Hash {
    if (depth >= MAX_DEPTH) return H_TRUNCATED;
    if (this.path.has(o)) return H_CYCLE;
    if (o instanceof Uint8Array) {
      if (o.length > 0) this.informative++;
      let h = hashString('', TAG_BYTES);
      const step = Math.max(1, Math.floor(o.length / 65536));
      for (let i = 0; i < o.length; i += step) h = combine(h, o[i] ?? 0);
      return combine(h, o.length);
    }
    if (o instanceof Date) {
      const t = o.getTime();
      return this.options.side === 'result' ? H_VOLATILE : this.number(t);
    }
    this.path.add(o);
    try {
      if (Array.isArray(o)) return this.array(o, depth);
      if (o instanceof Map) {
        const members = new UnorderedHash();
        for (const [k, v] of o) this.member(members, String(k), v, depth);
        return members.digest(TAG_OBJECT);
      }
      if (o instanceof Set) {
        const items = new UnorderedHash();
        for (const v of o) items.add(this.value(v, depth + 1));
        return items.digest(TAG_SET);
      }
      const members = new UnorderedHash();
      const record = o as Record<string, unknown>;
      for (const key of Object.keys(record)) this.member(members, key, record[key], depth);
      return members.digest(TAG_OBJECT);
    } finally {
      this.path.delete(o);
    }
  }

  private array(items: readonly unknown[], depth: number): Hash {
    let h = hashString('', TAG_ARRAY);
    const n = items.length;
    for (let i = 0; i < n; i++) {
      h = combine(h, this.value(items[i], depth + 1));
      if (this.nodes > MAX_NODES) break;
    }
    return combine(h, n);
  }

  private member(into: UnorderedHash, key: string, v: unknown, depth: number): void {
    // A volatile member is left out entirely: `{q}` and `{q, request_id}` are the same request.
    if (key.length <= 40 && this.options.volatileKeys.has(normalizeKey(key))) return;
    into.add(combine(hashString(key, TAG_KEY), this.value(v, depth + 1)));
  }
}

function tryParseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** Fingerprint of one tool argument or result value: a string (JSON or not) or a structured value. */
export function fingerprint(value: unknown, options: FingerprintOptions): Fingerprint {
  const walker = new Walker(options);
  const hash = walker.value(value, 0);
  return { hash, informative: walker.informative };
}

/** Normalised key set from user-facing names (`request_id`, `requestId`, ...). */
export function volatileKeySet(...lists: ReadonlyArray<readonly string[] | undefined>): ReadonlySet<string> {
  const set = new Set<string>();
  for (const list of lists) for (const key of list ?? []) set.add(normalizeKey(key));
  return set;
}
