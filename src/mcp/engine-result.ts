import { createHash } from 'node:crypto';
import { MAX_JSON_TEXT } from '../fingerprint/canonical.js';

/**
 * What the engine reads of a tool result the proxy relayed: the result itself, except that a
 * text longer than `MAX_JSON_TEXT` (which the fingerprint reads as plain text anyway, never as
 * JSON) is read as its first `MAX_JSON_TEXT` characters and a digest of the whole. The
 * fingerprint works on a copy of a text two bytes a character wide: for a 50 MB result that copy
 * was the largest the proxy made; bounded, it is 16 MiB whatever the result. Beyond the cap the
 * comparison is exact (two huge results that differ only by a timestamp past the first 8 MiB are
 * different results), below it nothing changes.
 */
export function resultForEngine(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > MAX_JSON_TEXT ? boundedText(value) : value;
  if (typeof value !== 'object' || value === null || depth >= MAX_NESTING) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const read = resultForEngine(v, depth + 1);
      if (read === v) continue;
      copy ??= value.slice();
      copy[i] = read;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, v] of Object.entries(value)) {
    const read = resultForEngine(v, depth + 1);
    if (read === v) continue;
    copy ??= { ...(value as Record<string, unknown>) };
    copy[key] = read;
  }
  return copy ?? value;
}

/** Nesting read for huge texts: MCP results keep their texts at depth 2 (`content[i].text`) or near it. */
const MAX_NESTING = 16;
/** Characters encoded at a time for the digest (a bounded temporary buffer, not one of the whole text). */
const DIGEST_SLICE = 1 << 20;

/** The head of the text, and a digest of the whole in base64 (the fingerprint takes long hex runs for volatile ids). */
function boundedText(text: string): { readonly head: string; readonly digest: string } {
  const hash = createHash('sha256');
  for (let at = 0; at < text.length; at += DIGEST_SLICE) hash.update(text.slice(at, at + DIGEST_SLICE));
  return { head: text.slice(0, MAX_JSON_TEXT), digest: hash.digest('base64') };
}
