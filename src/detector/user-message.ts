import { hashString, type Hash } from '../fingerprint/hash.js';

const TAG = 0x75e4;
/** Longest prefix of a user message that decides whether it says something new. */
const MAX_COMPARED = 4096;

/**
 * The identity of what a user said: its text with whitespace runs collapsed and case ignored, so
 * that a message re-sent with other spacing is the same message; undefined when it says nothing
 * (no text: an image alone, or a message the instrumentation did not record).
 */
export function userMessageHash(text: string): Hash | undefined {
  const normal = text.slice(0, MAX_COMPARED).replace(/\s+/g, ' ').trim().toLowerCase();
  return normal.length === 0 ? undefined : hashString(normal, TAG);
}

/** At most this many of the user messages one model call's input carries are read: the newest. */
export const MAX_USER_MESSAGES_READ = 8;
