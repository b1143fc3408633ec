/**
 * JSON-RPC batches: an array of messages sent as one, which MCP allowed before 2025-06-18. Each
 * element goes through the guard as a message of its own would. The elements the guard lets
 * through are relayed as a batch of their own bytes (the whole message as it came when the guard
 * answers none of them); the guard's answers go back as one batch of responses of their own. A
 * JSON-RPC client matches responses to its requests by id, whatever batch they come in.
 */
import type { ClientVerdict } from './call-guard.js';
import { isObject } from './messages.js';
import { Char } from '../fingerprint/chars.js';

/**
 * The bytes of each element of the JSON array in `bytes` (as views, with the whitespace around
 * them), or undefined when `bytes` is not an array. Only structure is read (strings and nesting);
 * the text was parsed before, so it is valid JSON.
 */
export function arrayElements(bytes: Buffer): Buffer[] | undefined {
  let open = 0;
  while (open < bytes.length && (bytes[open] as number) <= Char.Space) open++;
  if (bytes[open] !== Char.OpenBracket) return undefined;
  const elements: Buffer[] = [];
  let depth = 0;
  let start = open + 1;
  let inString = false;
  for (let i = start; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (inString) {
      if (c === Char.Backslash) i++;
      else if (c === Char.Quote) inString = false;
      continue;
    }
    if (c === Char.Quote) inString = true;
    else if (c === Char.OpenBracket || c === Char.OpenBrace) depth++;
    else if (depth > 0 && (c === Char.CloseBracket || c === Char.CloseBrace)) depth--;
    else if (depth === 0 && (c === Char.Comma || c === Char.CloseBracket)) {
      const element = bytes.subarray(start, i);
      // `[]` and `[ ]` have no element
      if (c === Char.Comma || elements.length > 0 || element.some((b) => b > Char.Space)) elements.push(element);
      if (c === Char.CloseBracket) return elements;
      start = i + 1;
    }
  }
  return undefined;
}

export interface BatchVerdict {
  /** What goes on to the server: the batch as it came, the elements relayed, or nothing when the guard kept them all. */
  readonly relay: Buffer | undefined;
  /** The guard's responses (JSON texts) to the elements it answered: `asBatch` makes them one message. */
  readonly answers: readonly string[];
  /** Ids of the requests relayed (their responses will come from the server). */
  readonly relayedIds: readonly unknown[];
}

/**
 * A client's batch through the guard, element by element (`judge`: the guard's verdict on one
 * message). `bytes`: the batch as it came; `batch`: its parsed elements.
 */
export function judgeBatch(bytes: Buffer, batch: readonly unknown[], judge: (msg: unknown) => ClientVerdict): BatchVerdict {
  const verdicts = batch.map(judge);
  const relayedIds = batch.filter((m, i) => verdicts[i]?.relay && isObject(m) && 'id' in m && 'method' in m).map((m) => (m as { id: unknown }).id);
  if (verdicts.every((v) => v.relay)) return { relay: bytes, answers: [], relayedIds };
  const answers: string[] = [];
  for (const v of verdicts) if (!v.relay && v.answer !== undefined) answers.push(v.answer);
  const elements = arrayElements(bytes);
  // the scan and the parse disagree (cannot happen on valid JSON): the relayed elements re-serialised
  const kept = elements?.length === batch.length ? elements.filter((_, i) => verdicts[i]?.relay) : batch.filter((_, i) => verdicts[i]?.relay).map((m) => Buffer.from(JSON.stringify(m)));
  if (kept.length === 0) return { relay: undefined, answers, relayedIds };
  const parts: Buffer[] = [OPEN];
  kept.forEach((element, i) => parts.push(...(i > 0 ? [COMMA, element] : [element])));
  parts.push(CLOSE);
  return { relay: Buffer.concat(parts), answers, relayedIds };
}

/** JSON texts as one batch. */
export function asBatch(messages: readonly string[]): string {
  return `[${messages.join(',')}]`;
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');
