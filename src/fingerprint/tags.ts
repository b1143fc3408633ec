import { constant } from './lanes.js';

/**
 * Type tags salted into every hash, so that the string "1" and the number 1, `[]` and `{}`, a
 * volatile value and a literal differ. Shared by the structured walker (`canonical.ts`) and the
 * JSON-text hasher (`json-text.ts`), which must produce the same hashes for the same value.
 */
export const TAG_STRING = 0x51;
export const TAG_NUMBER = 0x52;
export const TAG_TRUE = 0x53;
export const TAG_FALSE = 0x54;
export const TAG_NULL = 0x55;
export const TAG_ARRAY = 0x56;
export const TAG_OBJECT = 0x57;
export const TAG_VOLATILE = 0x58;
export const TAG_BYTES = 0x59;
export const TAG_CYCLE = 0x5a;
export const TAG_TRUNCATED = 0x5b;
export const TAG_BIGINT = 0x5c;
export const TAG_OTHER = 0x5d;
export const TAG_KEY = 0x5e;
export const TAG_SET = 0x5f;

export const L_NULL = constant(TAG_NULL);
export const L_TRUE = constant(TAG_TRUE);
export const L_FALSE = constant(TAG_FALSE);
export const L_VOLATILE = constant(TAG_VOLATILE);
export const L_CYCLE = constant(TAG_CYCLE);
export const L_TRUNCATED = constant(TAG_TRUNCATED);

/** Deeper structure than this hashes as one marker: bounded stack, never a RangeError. */
export const MAX_DEPTH = 96;
/** A value with more nodes than this is hashed on its first nodes only. */
export const MAX_NODES = 200_000;
/** Texts longer than this are not searched for JSON structure (hashed as text, in one pass). */
export const MAX_JSON_TEXT = 8 * 1024 * 1024;

/** Bits of `Fingerprint.notes`: the fingerprint is still defined, but on less than all of the value. */
export const NOTE_DEPTH = 1;
export const NOTE_NODES = 2;
export const NOTE_CYCLE = 4;
/** A string that looked like JSON (`{…}` / `[…]`) but was not valid: hashed as text. */
export const NOTE_MALFORMED_JSON = 8;
/** A string too long to be searched for JSON structure (over 8 MiB): hashed as text. */
export const NOTE_HUGE_TEXT = 16;
