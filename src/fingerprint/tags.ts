import { constant } from './lanes.js';

/**
 * Type tags salted into every hash, so that the string "1" and the number 1, `[]` and `{}`, a
 * volatile value and a literal differ. Shared by the structured walker (`canonical.ts`) and the
 * JSON-text hasher (`json-text.ts`), which must produce the same hashes for the same value.
 * (`const enum`s, written into the code by the build: see `chars.ts`.)
 */
export const enum Tag {
  String = 0x51,
  Number = 0x52,
  True = 0x53,
  False = 0x54,
  Null = 0x55,
  Array = 0x56,
  Object = 0x57,
  Volatile = 0x58,
  Bytes = 0x59,
  Cycle = 0x5a,
  Truncated = 0x5b,
  BigInt = 0x5c,
  Other = 0x5d,
  Key = 0x5e,
  Set = 0x5f,
}

export const L_NULL = constant(Tag.Null);
export const L_TRUE = constant(Tag.True);
export const L_FALSE = constant(Tag.False);
export const L_VOLATILE = constant(Tag.Volatile);
export const L_CYCLE = constant(Tag.Cycle);
export const L_TRUNCATED = constant(Tag.Truncated);

export const enum Cap {
  /** Deeper structure than this hashes as one marker: bounded stack, never a RangeError. */
  Depth = 96,
  /** A value with more nodes than this is hashed on its first nodes only. */
  Nodes = 200_000,
  /** Texts longer than this are not searched for JSON structure (hashed as text, in one pass). */
  JsonText = 8_388_608, // 8 MiB
}

export const MAX_DEPTH: number = Cap.Depth;
export const MAX_NODES: number = Cap.Nodes;
export const MAX_JSON_TEXT: number = Cap.JsonText;

/** Bits of `Fingerprint.notes`: the fingerprint is still defined, but on less than all of the value. */
export const enum Note {
  Depth = 1,
  Nodes = 2,
  Cycle = 4,
  /** A string that looked like JSON (`{…}` / `[…]`) but was not valid: hashed as text. */
  MalformedJson = 8,
  /** A string too long to be searched for JSON structure (over 8 MiB): hashed as text. */
  HugeText = 16,
}

export const NOTE_DEPTH: number = Note.Depth;
export const NOTE_NODES: number = Note.Nodes;
export const NOTE_CYCLE: number = Note.Cycle;
export const NOTE_MALFORMED_JSON: number = Note.MalformedJson;
export const NOTE_HUGE_TEXT: number = Note.HugeText;
