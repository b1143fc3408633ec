import type { ResolvedBackoff } from './options.js';

const TRANSIENT_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);
const TRANSIENT_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT', 'ESOCKETTIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'EHOSTUNREACH',
  'ENETUNREACH', 'ENETDOWN', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_SOCKET',
]);
const TRANSIENT_NAMES = new Set(['TimeoutError', 'RateLimitError', 'ServiceUnavailableError']);
const TRANSIENT_MESSAGE =
  /\b(?:rate.?limit(?:ed)?|too many requests|timed? ?out|temporar(?:y|ily)|unavailable|overloaded|try again|socket hang up|connection (?:reset|refused|closed)|bad gateway|gateway timeout|429|502|503|504|ETIMEDOUT|ECONNRESET|ECONNREFUSED|EAI_AGAIN|EPIPE)\b/i;

function readField(error: object, key: string): unknown {
  try {
    return (error as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function statusOf(error: object): number | undefined {
  for (const key of ['status', 'statusCode']) {
    const v = readField(error, key);
    if (typeof v === 'number') return v;
  }
  const response = readField(error, 'response');
  if (typeof response === 'object' && response !== null) {
    const v = readField(response, 'status');
    if (typeof v === 'number') return v;
  }
  return undefined;
}

/**
 * Is this failure worth retrying unchanged after a pause? HTTP 408/425/429/5xx-gateway statuses,
 * network error codes, timeouts and rate limits. Reads a few fields, never throws, and keeps
 * nothing: raw error text stays in process.
 */
export function isTransientError(error: unknown): boolean {
  if (typeof error === 'string') return TRANSIENT_MESSAGE.test(error.slice(0, 500));
  if (typeof error !== 'object' || error === null) return false;
  const status = statusOf(error);
  if (status !== undefined) return TRANSIENT_STATUS.has(status);
  const code = readField(error, 'code');
  if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
  const name = readField(error, 'name');
  if (typeof name === 'string' && TRANSIENT_NAMES.has(name)) return true;
  // An aborted call was cancelled on purpose; retrying it is not the answer.
  if (name === 'AbortError') return false;
  const retryable = readField(error, 'isRetryable');
  if (typeof retryable === 'boolean') return retryable;
  const message = readField(error, 'message');
  if (typeof message === 'string' && TRANSIENT_MESSAGE.test(message.slice(0, 500))) return true;
  const cause = readField(error, 'cause');
  return cause !== undefined && cause !== error && typeof cause === 'object' && cause !== null && isTransientError(cause);
}

/** Delay before retry number `failures` (1 after one failure) of the same call. */
export function backoffDelay(b: ResolvedBackoff, failures: number, random: () => number = Math.random): number {
  const raw = Math.min(b.maxMs, b.baseMs * b.factor ** Math.max(0, failures - 1));
  return Math.round(b.jitter ? raw * (0.5 + random() * 0.5) : raw);
}

/** Resolves after `ms`, or rejects with the reason of the first of `signals` to abort. */
export function sleep(ms: number, signals: ReadonlyArray<AbortSignal | undefined>): Promise<void> {
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  const aborted = live.find((s) => s.aborted);
  if (aborted) return Promise.reject(aborted.reason as unknown);
  if (ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = (e: Event): void => {
      clearTimeout(timer);
      for (const s of live) s.removeEventListener('abort', onAbort);
      reject((e.target as AbortSignal).reason as unknown);
    };
    const timer = setTimeout(() => {
      for (const s of live) s.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    for (const s of live) s.addEventListener('abort', onAbort, { once: true });
  });
}
