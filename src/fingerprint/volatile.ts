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
    if (c === 95 || c === 45 || c === 46 || c === 32) continue;
    out += c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : key[i];
  }
  return out;
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
];

/** Volatile patterns searched inside result text. Every alternative needs a digit. */
const RESULT_TEXT_PATTERN = new RegExp(
  [
    // uuid
    '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}',
    // ISO-8601 date-time (a bare date is kept: "next slot 2026-11-23" is information)
    '\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}(?::\\d{2}(?:[.,]\\d+)?)?(?:Z|[+-]\\d{2}:?\\d{2})?',
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
    '\\b\\d+(?:\\.\\d+)?\\s?(?:ms|µs|us|ns|s|secs?|seconds?|milliseconds?)\\b',
    // process ids
    '\\bpid[=: ]\\s*\\d+',
  ].join('|'),
  'g',
);

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;
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
  if (text.length > 24) return false;
  let w = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) w += text[i];
    else if (c >= 65 && c <= 90) w += String.fromCharCode(c + 32);
  }
  return w.length === 0 || STATUS_WORDS.has(w);
}
