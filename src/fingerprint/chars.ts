/**
 * The UTF-16 code units that fingerprints compare text with, by name, and the character classes
 * built from them. A `const enum`: the bundler writes each number in place, as a literal would be.
 */
export const enum Char {
  Tab = 0x09,
  CarriageReturn = 0x0d,
  LineFeed = 0x0a,
  /** Code units below this are control characters (invalid inside a JSON string). */
  Space = 0x20,
  Quote = 0x22,
  Plus = 0x2b,
  Comma = 0x2c,
  Minus = 0x2d,
  Dot = 0x2e,
  Slash = 0x2f,
  Digit0 = 0x30,
  Digit1 = 0x31,
  Digit9 = 0x39,
  Colon = 0x3a,
  UpperA = 0x41,
  UpperE = 0x45,
  UpperF = 0x46,
  UpperZ = 0x5a,
  OpenBracket = 0x5b,
  Backslash = 0x5c,
  CloseBracket = 0x5d,
  Underscore = 0x5f,
  LowerA = 0x61,
  LowerB = 0x62,
  LowerD = 0x64,
  LowerE = 0x65,
  LowerF = 0x66,
  LowerI = 0x69,
  LowerL = 0x6c,
  LowerM = 0x6d,
  LowerN = 0x6e,
  LowerP = 0x70,
  LowerR = 0x72,
  LowerS = 0x73,
  LowerT = 0x74,
  LowerU = 0x75,
  LowerZ = 0x7a,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
  /** The last ASCII code unit. */
  LastAscii = 0x7f,
  NoBreakSpace = 0xa0,
  Micro = 0xb5,
  LineSeparator = 0x2028,
  ParagraphSeparator = 0x2029,
  ByteOrderMark = 0xfeff,
}

export function isDigit(c: number): boolean {
  return c >= Char.Digit0 && c <= Char.Digit9;
}

export function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= Char.UpperA && c <= Char.UpperF) || (c >= Char.LowerA && c <= Char.LowerF);
}

export function isUpperAscii(c: number): boolean {
  return c >= Char.UpperA && c <= Char.UpperZ;
}

export function isLowerAscii(c: number): boolean {
  return c >= Char.LowerA && c <= Char.LowerZ;
}

export function isAsciiLetter(c: number): boolean {
  return isUpperAscii(c) || isLowerAscii(c);
}

export function isAsciiAlnum(c: number): boolean {
  return isDigit(c) || isAsciiLetter(c);
}

/** An upper-case ASCII letter in lower case; any other unit unchanged. */
export function toLowerAscii(c: number): number {
  return isUpperAscii(c) ? c - Char.UpperA + Char.LowerA : c;
}

/** Whitespace between JSON tokens (JSON's own four). */
export function isJsonSpace(c: number): boolean {
  return c === Char.Space || c === Char.LineFeed || c === Char.CarriageReturn || c === Char.Tab;
}

/** Whitespace as `String.prototype.trim` sees it, for the code units text can hold here. */
export function isSpace(c: number): boolean {
  return (
    c === Char.Space ||
    (c >= Char.Tab && c <= Char.CarriageReturn) ||
    c === Char.NoBreakSpace ||
    c === Char.ByteOrderMark ||
    c === Char.LineSeparator ||
    c === Char.ParagraphSeparator
  );
}
