import { Char } from './chars.js';
import { DURATION_UNITS } from './result-text.js';
/**
 * What counts as volatile: values that change on every call without telling the agent anything
 * new (request ids, "now" timestamps, pids, durations). They are replaced by a placeholder
 * before hashing so that a loop cannot hide behind them.
 *
 * Arguments and results are treated differently on purpose. In arguments, an id or a date is
 * usually what the agent asks about (`get_order(id)`, `book(date)`): stripping them would make
 * different calls look identical and flag honest work. So arguments lose only keys that are
 * volatile by name and timestamps that are "now" (within a few minutes of the call). Results
 * also lose ids, uuids, timestamps, epochs, pids and durations found by value inside text.
 */

export type Side = 'arguments' | 'result';

/** Lowercase, without `_`, `-`, `.` or spaces: `request_id`, `requestId` and `Request-ID` match. */
export function normalizeKey(key: string): string {
  let out = '';
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (isKeySeparator(c)) continue;
    out += isUpper(c) ? String.fromCharCode(asciiLower(c)) : key[i];
  }
  return out;
}

/** The code units of a string (for the few callers that hold a string, not units). */
export function toUnits(s: string): Uint16Array {
  const u = new Uint16Array(s.length);
  for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
  return u;
}

const enum Keys {
  /** Keys longer than this are never volatile (and never normalised). */
  MaxVolatileLength = 40,
  /** Slots of the matcher's verdict cache (a power of two). */
  VerdictSlots = 256,
}

function isKeySeparator(c: number): boolean {
  return c === Char.Underscore || c === Char.Minus || c === Char.Dot || c === Char.Space;
}

function isUpper(c: number): boolean {
  return c >= Char.UpperA && c <= Char.UpperZ;
}

/** An ASCII capital's small letter; any other unit as it is. */
function asciiLower(c: number): number {
  return isUpper(c) ? c + (Char.LowerA - Char.UpperA) : c;
}

/** FNV-style hash of `normalizeKey` of the name in `u[start, end)`, computed without building it (a small integer). */
function normalizedKeyHash(u: Uint16Array, start: number, end: number): number {
  let h = 0x811c9dc5 | 0;
  for (let i = start; i < end; i++) {
    const c = u[i] as number;
    if (isKeySeparator(c)) continue;
    h = Math.imul(h ^ asciiLower(c), 0x01000193);
  }
  return h & 0x3fffffff;
}

/**
 * "Is this member name volatile?" without allocating: fingerprints ask it for every member of
 * every object, usually of the same few names. Answers are cached by the name's own text hash
 * (which the caller has computed anyway); a new name is normalised and looked up by a hash of
 * its normalised form, and only a hit is confirmed by building the normalised string.
 */
export class VolatileKeyMatcher {
  private readonly byHash = new Set<number>();
  /** Direct-mapped cache: [name hash lane a, lane b, verdict (1 no, 2 yes)] per slot (bench/NOTES.md, agent mix). */
  private readonly verdicts = new Int32Array(Keys.VerdictSlots * 3);
  /** No volatile names at all. */
  private readonly none: boolean;

  constructor(private readonly set: ReadonlySet<string>) {
    for (const key of set) this.byHash.add(normalizedKeyHash(toUnits(key), 0, key.length));
    this.none = set.size === 0;
  }

  /**
   * `set.has(normalizeKey(name))` for the name held in `u[start, end)` (and in `s`, the same text
   * as a string); `ka`/`kb` are the name's text hash (the cache key). Names longer than
   * `Keys.MaxVolatileLength` are never volatile.
   */
  has(u: Uint16Array, s: string, start: number, end: number, ka: number, kb: number): boolean {
    if (end - start > Keys.MaxVolatileLength || this.none) return false;
    const v = this.verdicts;
    const slot = (ka & (Keys.VerdictSlots - 1)) * 3;
    if (v[slot] === ka && v[slot + 1] === kb && v[slot + 2] !== 0) return v[slot + 2] === 2;
    const volatile = this.byHash.has(normalizedKeyHash(u, start, end)) && this.set.has(normalizeKey(s.slice(start, end)));
    v[slot] = ka;
    v[slot + 1] = kb;
    v[slot + 2] = volatile ? 2 : 1;
    return volatile;
  }
}

const matchers = new WeakMap<ReadonlySet<string>, VolatileKeyMatcher>();

/** The matcher of a volatile-key set, built once per set (sets are per tool policy). */
export function volatileKeyMatcher(set: ReadonlySet<string>): VolatileKeyMatcher {
  let m = matchers.get(set);
  if (!m) {
    m = new VolatileKeyMatcher(set);
    matchers.set(set, m);
  }
  return m;
}

export const DEFAULT_VOLATILE_ARGUMENT_KEYS: readonly string[] = [
  'request_id', 'client_request_id', 'trace_id', 'span_id', 'correlation_id', 'idempotency_key',
  'nonce', 'cache_buster', 'ts', 'timestamp', 'client_timestamp', 'request_time', 'now',
];

export const DEFAULT_VOLATILE_RESULT_KEYS: readonly string[] = [
  'id', 'uuid', 'guid', 'request_id', 'trace_id', 'span_id', 'message_id', 'msg_id', 'event_id',
  'call_id', 'tool_call_id', 'session_id', 'run_id', 'correlation_id', 'etag', 'nonce',
  'ts', 'timestamp', 'time', 'datetime', 'now', 'server_time',
  'created', 'created_at', 'updated', 'updated_at', 'modified', 'modified_at', 'last_modified',
  'expires', 'expires_at', 'generated_at', 'fetched_at', 'retrieved_at',
  'pid', 'ppid', 'duration', 'duration_ms', 'elapsed', 'elapsed_ms', 'elapsed_time', 'took', 'took_ms',
  'latency', 'latency_ms', 'execution_time', 'response_time', 'uptime',
  'bytes_processed', 'total_bytes_processed', 'bytes_billed', 'total_bytes_billed', 'bytes_scanned', 'slot_ms', 'total_slot_ms',
];

/** An ISO-8601 date-time: one alternative of the result pattern, and the whole of `ISO_DATETIME`. */
const ISO_DATETIME_SOURCE = '\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}(?::\\d{2}(?:[.,]\\d+)?)?(?:Z|[+-]\\d{2}:?\\d{2})?';

/** `word` in any case, as a pattern: `ms` → `[mM][sS]`. */
function anyCase(word: string): string {
  return word.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
}

/**
 * The labels of a call's own execution statistics (`FIGURE_LABEL_ENDS` holds how they end):
 * what a query engine reports about running the query, not about its data. A cache's rerun of the
 * same query reports `Bytes processed: 0` where the first run read 32 480.
 */
const FIGURE_LABELS = [
  '(?:total[ _]?)?bytes[ _]?(?:processed|billed|scanned|shuffled)',
  '(?:total[ _]?)?slot[ _]?(?:ms|millis)',
  'elapsed(?:[ _]time)?',
  'took',
  '(?:execution|query|cpu|wall|run)[ _]?time',
  'runtime',
  'duration',
];

/** The words of the figures' labels (small letters): the corpus's pseudonymizer keeps them, as it keeps duration units. */
export const FIGURE_LABEL_WORDS: readonly string[] = [...new Set(FIGURE_LABELS.join(' ').match(/[a-z]+/g))];

/** A figure after its label and `:` or `=`: one alternative of the result pattern. */
const FIGURE_SOURCE = `\\b(?:${FIGURE_LABELS.map(anyCase).join('|')})["']?\\s?[:=]\\s?\\d+(?:[.,]\\d+)?(?:\\s?(?:[kKMGT]i?B|${anyCase('bytes')}|ms|s)\\b)?`;

/**
 * Volatile patterns searched inside result text. Every alternative but the ULID needs a digit, and
 * text without a digit is never searched (a ULID of letters only stays).
 */
const RESULT_TEXT_PATTERN = new RegExp(
  [
    // uuid
    '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}',
    // ISO-8601 date-time (a bare date is kept: "next slot 2026-11-23" is information)
    ISO_DATETIME_SOURCE,
    // time of day with seconds (`date` output, log prefixes)
    '\\b\\d{1,2}:\\d{2}:\\d{2}(?:[.,]\\d+)?\\b',
    // epoch seconds or milliseconds, 2001..2033
    '\\b1\\d{9}(?:\\d{3})?(?:\\.\\d+)?\\b',
    // long hex ids (git shas, trace ids), at least one digit and one letter
    '\\b(?=[0-9a-fA-F]*\\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{16,}\\b',
    // prefixed random ids: msg_01HX..., req-8f2k...
    '\\b[A-Za-z]{2,12}[_-](?=[A-Za-z0-9]*\\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{10,}\\b',
    // ULID
    '\\b[0-9A-HJKMNP-TV-Z]{26}\\b',
    // durations
    `\\b\\d+(?:\\.\\d+)?\\s?(?:${DURATION_UNITS.join('|')})\\b`,
    // process ids
    '\\bpid[=: ]\\s*\\d+',
    // a figure of the call's own execution (bytes processed, slot ms, elapsed), after its label and `:` or `=`
    FIGURE_SOURCE,
  ].join('|'),
  'g',
);

export { mayHoldVolatile } from './result-text.js';

const ISO_DATETIME = new RegExp(`^${ISO_DATETIME_SOURCE}$`);
const NOW_WINDOW_MS = 15 * 60_000;

export function resultTextPattern(): RegExp {
  RESULT_TEXT_PATTERN.lastIndex = 0;
  return RESULT_TEXT_PATTERN;
}

/** In arguments, only a timestamp close to the call's own time is "now" and volatile. */
export function isNowTimestampString(s: string, now: number | undefined): boolean {
  if (now === undefined || s.length < 16 || s.length > 40 || !ISO_DATETIME.test(s)) return false;
  const t = Date.parse(s);
  return Number.isFinite(t) && Math.abs(t - now) <= NOW_WINDOW_MS;
}

/** `isNowTimestampString` of the text in `u[start, end)` (also `s[start, end)`), slicing only when it could be one. */
export function isNowTimestampRange(u: Uint16Array, s: string, start: number, end: number, now: number | undefined): boolean {
  if (now === undefined || end - start < 16 || end - start > 40) return false;
  const c = u[start] as number;
  return c >= Char.Digit0 && c <= Char.Digit9 && isNowTimestampString(s.slice(start, end), now);
}

export function isNowTimestampNumber(n: number, now: number | undefined): boolean {
  if (now === undefined || !Number.isFinite(n)) return false;
  if (Math.abs(n - now) <= NOW_WINDOW_MS) return true; // epoch milliseconds
  return Math.abs(n * 1000 - now) <= NOW_WINDOW_MS; // epoch seconds
}

/** Words that say "it worked" or "still going" and nothing else: not evidence across arguments. */
const STATUS_WORDS = new Set([
  'ok', 'okay', 'done', 'success', 'succeeded', 'successful', 'successfully', 'true', 'false', 'yes', 'no',
  'saved', 'written', 'updated', 'created', 'deleted', 'removed', 'applied', 'completed', 'complete',
  'accepted', 'queued', 'pending', 'running', 'inprogress', 'processing', 'started', 'waiting',
  'null', 'none', 'nil', 'undefined', 'noop', 'nochange', 'nochanges', 'unchanged', 'ack', 'acknowledged',
]);

/** Is this (already whitespace-collapsed) text only a status word such as "OK." or "Done!"? */
export function isStatusWord(text: string): boolean {
  return text.length <= 24 && isStatusWordRange(toUnits(text), 0, text.length);
}

/** Lowercase letters and digits of a status word, as compared: other characters are dropped. */
function statusCode(c: number): number {
  const lower = asciiLower(c);
  return (lower >= Char.LowerA && lower <= Char.LowerZ) || (lower >= Char.Digit0 && lower <= Char.Digit9) ? lower : -1;
}

/** Letters and digits of the longest status word: text with more of them is never one. */
export const MAX_STATUS_WORD_LENGTH = Math.max(...[...STATUS_WORDS].map((w) => w.length));

const STATUS_WORDS_BY_LENGTH: ReadonlyArray<readonly string[]> = byLength(STATUS_WORDS);

/**
 * `isStatusWord` of the text in `u[start, end)` without building strings: its letters and digits
 * are compared in place with the status words of the same length.
 */
export function isStatusWordRange(u: Uint16Array, start: number, end: number): boolean {
  if (end - start > 24) return false;
  let length = 0;
  for (let i = start; i < end; i++) if (statusCode(u[i] as number) >= 0) length++;
  if (length === 0) return true;
  const candidates = STATUS_WORDS_BY_LENGTH[length];
  if (!candidates) return false;
  for (const word of candidates) {
    let k = 0;
    let same = true;
    for (let i = start; i < end && same; i++) {
      const c = statusCode(u[i] as number);
      if (c >= 0) same = c === word.charCodeAt(k++);
    }
    if (same) return true;
  }
  return false;
}

/**
 * Words of acknowledgements that say a command or a write went through and nothing else: shell
 * tools' envelopes (`<returncode>0</returncode><output></output>`), "File written", "The command
 * completed successfully with no output". Different commands answered this way are different
 * work, not one question rephrased (honest coding runs were stopped on them).
 */
const ACK_WORDS = new Set([
  ...STATUS_WORDS,
  'file', 'files', 'wrote', 'edited', 'edit', 'edits', 'change', 'changes', 'changed', 'made', 'patch', 'patched',
  'command', 'commands', 'ran', 'run', 'executed', 'finished', 'exit', 'exited', 'code', 'status', 'returncode', 'return',
  'output', 'outputs', 'stdout', 'stderr', 'empty', 'result', 'results', 'the', 'a', 'an', 'was', 'were', 'has', 'have',
  'been', 'is', 'with', 'and', 'to', 'of', 'successfully', 'without', 'errors', 'error', '0',
]);

/** Longest text read as an acknowledgement (longer text says more than "it worked"). */
const MAX_ACK_LENGTH = 160;

/** Is the result text in `u[start, end)` only an acknowledgement (see `ACK_WORDS`)? */
export function isAcknowledgementRange(u: Uint16Array, start: number, end: number): boolean {
  if (end - start > MAX_ACK_LENGTH) return false;
  let from = -1;
  for (let i = start; i <= end; i++) {
    const word = i < end && statusCode(u[i] as number) >= 0;
    if (word) {
      if (from < 0) from = i;
    } else if (from >= 0) {
      if (!isWordIn(ACK_WORDS_BY_LENGTH, u, from, i)) return false;
      from = -1;
    }
  }
  return true;
}

/** Words by length, for comparing a word of a text in place (`isWordIn`). */
function byLength(words: Iterable<string>): ReadonlyArray<readonly string[]> {
  const table: string[][] = [];
  for (const w of words) (table[w.length] ??= []).push(w);
  return table;
}

const ACK_WORDS_BY_LENGTH = byLength(ACK_WORDS);

/** Is the word in `u[from, to)` (letters and digits only, any case) one of `table`'s? */
function isWordIn(table: ReadonlyArray<readonly string[]>, u: Uint16Array, from: number, to: number): boolean {
  const candidates = table[to - from];
  if (candidates === undefined) return false;
  for (const word of candidates) {
    let k = 0;
    while (k < word.length && statusCode(u[from + k] as number) === word.charCodeAt(k)) k++;
    if (k === word.length) return true;
  }
  return false;
}
