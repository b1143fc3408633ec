/**
 * A message's id read from its ends, without parsing it: serialisers put `id` first or last, the
 * Python SDK `{"jsonrpc":"2.0","id":7,"result":…}`, the TypeScript SDK `{"result":…,"jsonrpc":"2.0","id":7}`.
 * So the proxy can tell a response nobody awaits (a result it only relays) from one it must read,
 * at the cost of a few bytes whatever the message's size. Only the forms that cannot be anything
 * else are read: an id after `{` or after `{"jsonrpc":"2.0",` at the start is a member of the
 * outer object, and so is an id right before the last `}`; anything else (an id in the middle,
 * escapes in it, a number with a fraction, a form split across two chunks) is left to the parse.
 */
import { Char } from '../fingerprint/chars.js';
import type { JsonRpcId } from './messages.js';

const ID = Buffer.from('"id"');
const JSONRPC_MEMBER = Buffer.from('"jsonrpc"');
const VERSION = Buffer.from('"2.0"');

/** The message's id when one of its ends says it plainly (see above), else undefined. */
export function idAtEnds(parts: readonly Buffer[]): JsonRpcId | undefined {
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (first === undefined || last === undefined) return undefined;
  return idAtStart(first) ?? idAtEnd(last);
}

function isSpace(c: number | undefined): boolean {
  return c === Char.Space || c === 0x09 || c === 0x0a || c === 0x0d;
}

function skipSpace(b: Buffer, i: number): number {
  while (i < b.length && isSpace(b[i])) i++;
  return i;
}

function skipSpaceBack(b: Buffer, i: number): number {
  while (i >= 0 && isSpace(b[i])) i--;
  return i;
}

/** Byte by byte: the tokens are a few bytes, shorter than a call into `Buffer.compare`. */
function startsWith(b: Buffer, i: number, token: Buffer): boolean {
  if (i < 0 || i + token.length > b.length) return false;
  for (let k = 0; k < token.length; k++) if (b[i + k] !== token[k]) return false;
  return true;
}

/** The integer in `b` from `from` to `to` (digits, a leading minus): read here, not through a string. */
function integerAt(b: Buffer, from: number, to: number): number {
  // past 15 digits a sum of digits may round otherwise than the parse does
  if (to - from > 15) return Number(b.toString('latin1', from, to));
  const negative = b[from] === Char.Minus;
  let n = 0;
  for (let i = negative ? from + 1 : from; i < to; i++) n = n * 10 + ((b[i] as number) - Char.Digit0);
  return negative ? -n : n;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= Char.Digit0 && c <= Char.Digit9;
}

/** A string's content between `from` and `to` holds an escape (then its text is left to the parse). */
function hasEscape(b: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (b[i] === Char.Backslash) return true;
  return false;
}

/** `{"id":…` or `{"jsonrpc":"2.0","id":…`, the value followed by `,` or `}`. */
function idAtStart(b: Buffer): JsonRpcId | undefined {
  let i = skipSpace(b, 0);
  if (b[i] !== Char.OpenBrace) return undefined;
  i = skipSpace(b, i + 1);
  if (startsWith(b, i, JSONRPC_MEMBER)) {
    i = skipSpace(b, i + JSONRPC_MEMBER.length);
    if (b[i] !== Char.Colon) return undefined;
    i = skipSpace(b, i + 1);
    if (!startsWith(b, i, VERSION)) return undefined;
    i = skipSpace(b, i + VERSION.length);
    if (b[i] !== Char.Comma) return undefined;
    i = skipSpace(b, i + 1);
  }
  if (!startsWith(b, i, ID)) return undefined;
  i = skipSpace(b, i + ID.length);
  if (b[i] !== Char.Colon) return undefined;
  i = skipSpace(b, i + 1);
  const start = i;
  let id: JsonRpcId;
  if (b[i] === Char.Quote) {
    const close = b.indexOf(Char.Quote, i + 1);
    if (close === -1 || hasEscape(b, i + 1, close)) return undefined;
    id = b.toString('utf8', i + 1, close);
    i = close + 1;
  } else {
    if (b[i] === Char.Minus) i++;
    if (!isDigit(b[i])) return undefined;
    while (isDigit(b[i])) i++;
    id = integerAt(b, start, i);
  }
  i = skipSpace(b, i);
  return b[i] === Char.Comma || b[i] === Char.CloseBrace ? id : undefined;
}

/** `…,"id":…}` (or `{"id":…}`) as the message's last bytes. */
function idAtEnd(b: Buffer): JsonRpcId | undefined {
  let i = skipSpaceBack(b, b.length - 1);
  if (b[i] !== Char.CloseBrace) return undefined;
  i = skipSpaceBack(b, i - 1);
  const end = i + 1;
  let id: JsonRpcId;
  if (b[i] === Char.Quote) {
    const open = b.lastIndexOf(Char.Quote, i - 1);
    if (open === -1 || b[open - 1] === Char.Backslash || hasEscape(b, open + 1, i)) return undefined;
    id = b.toString('utf8', open + 1, i);
    i = open - 1;
  } else {
    while (i >= 0 && isDigit(b[i])) i--;
    if (i === end - 1) return undefined;
    if (b[i] === Char.Minus) i--;
    id = integerAt(b, i + 1, end);
  }
  i = skipSpaceBack(b, i);
  if (b[i] !== Char.Colon) return undefined;
  i = skipSpaceBack(b, i - 1);
  if (!startsWith(b, i - ID.length + 1, ID)) return undefined;
  i = skipSpaceBack(b, i - ID.length);
  // the key's opening quote follows a separator of the outer object, not a character of a string
  return b[i] === Char.Comma || b[i] === Char.OpenBrace ? id : undefined;
}
