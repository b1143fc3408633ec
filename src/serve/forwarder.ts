import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { CONTENT_TYPE, decodeTraceResponse, encodeTraceRequest, type OtlpEncoding } from '../formats/protobuf/codec.js';
import type { MemoryBudget } from './budget.js';
import { exportRequestOf, type HeldSpan } from './held.js';

export interface ForwarderOptions {
  /** Full URL of the downstream's trace endpoint (`.../v1/traces`). */
  readonly url: string;
  readonly encoding: OtlpEncoding;
  /** Where the queued bytes are counted. */
  readonly budget: MemoryBudget;
  /** Headers sent with every request (OTEL_EXPORTER_OTLP_TRACES_HEADERS, e.g. an authorization). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Spans per export request. */
  readonly maxBatchSpans?: number;
  /** Bytes (estimated) per export request; a larger span goes alone. */
  readonly maxBatchBytes?: number;
  /** A batch that is not full goes out after this long. */
  readonly flushMs?: number;
  /** Requests in flight at once. */
  readonly concurrency?: number;
  /** A request without an answer this long is retried. */
  readonly timeoutMs: number;
  /** Retry delays: exponential from `initialBackoffMs` to `maxBackoffMs`, with jitter, unless the downstream sends Retry-After. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** A batch still failing this long after its first try is dropped (and counted): the retry is bounded. */
  readonly maxElapsedMs: number;
  readonly log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Spans the downstream answered for (`delivered`), or that were given up (dropped). */
  readonly onSettled?: (spans: readonly HeldSpan[], delivered: boolean) => void;
}

interface Batch {
  readonly spans: HeldSpan[];
  readonly bytes: number;
  firstTry: number;
  attempts: number;
  notBefore: number;
}

export interface ForwarderStats {
  forwardedSpans: number;
  droppedSpans: number;
  /** Spans the downstream accepted with a partial success that rejected them. */
  rejectedByDownstream: number;
  queuedSpans: number;
  queuedBytes: number;
  retries: number;
  /** Requests that got no answer within the forward timeout (the downstream may still have taken them). */
  forwardTimeouts: number;
}

type Outcome =
  | { readonly ok: true; readonly body: Uint8Array }
  | { readonly ok: false; readonly retry: boolean; readonly retryAfterMs?: number | undefined; readonly why: string; readonly timedOut?: boolean };

const RETRYABLE = new Set([429, 502, 503, 504]);
/** While shutting down, retries come at least this often, so that the grace period is used. */
const DRAIN_MAX_BACKOFF_MS = 1_000;

/**
 * Sends completed traces downstream over OTLP/HTTP, in batches bounded in spans and bytes, as
 * the OTLP/HTTP spec asks of a client: retryable answers (429, 502, 503, 504, no answer) are
 * retried with exponential backoff and jitter, or after the server's Retry-After; other failures
 * are not retried. A span leaves the queue only when the downstream has answered for it (or it
 * was given up after `maxElapsedMs`, counted). A request that timed out may have been taken:
 * delivery is at least once.
 */
export class Forwarder {
  private readonly url: URL;
  private readonly agent: HttpAgent;
  private readonly maxBatch: number;
  private readonly maxBatchBytes: number;
  private readonly flushMs: number;
  private readonly concurrency: number;
  private readonly initialBackoff: number;
  private readonly maxBackoff: number;
  private open: HeldSpan[] = [];
  private openBytes = 0;
  private openSince = 0;
  private readonly queue: Batch[] = [];
  private readonly inFlight = new Set<ClientRequest>();
  private sending = 0;
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: (() => void)[] = [];
  /** While shutting down: the deadline (epoch ms). */
  private drainDeadline: number | undefined;
  /** The last answer was a failure worth retrying: the downstream is in trouble. */
  failing = false;
  readonly stats: ForwarderStats = { forwardedSpans: 0, droppedSpans: 0, rejectedByDownstream: 0, queuedSpans: 0, queuedBytes: 0, retries: 0, forwardTimeouts: 0 };

  constructor(private readonly options: ForwarderOptions) {
    this.url = new URL(options.url);
    this.agent = this.url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.maxBatch = options.maxBatchSpans ?? 4096;
    this.maxBatchBytes = options.maxBatchBytes ?? 4 * 1024 * 1024;
    this.flushMs = options.flushMs ?? 200;
    this.concurrency = options.concurrency ?? 2;
    this.initialBackoff = options.initialBackoffMs ?? 250;
    this.maxBackoff = options.maxBackoffMs ?? 10_000;
  }

  /** Seconds a client should wait before retrying while the queue is what fills memory. */
  retryAfterSeconds(): number {
    const next = this.queue.reduce((m, b) => Math.min(m, b.notBefore), Number.POSITIVE_INFINITY);
    const wait = Number.isFinite(next) ? next - Date.now() : 0;
    return Math.min(60, Math.max(1, Math.ceil(wait / 1000)));
  }

  add(spans: readonly HeldSpan[]): void {
    if (spans.length === 0) return;
    if (this.open.length === 0) this.openSince = Date.now();
    for (const s of spans) {
      if (this.open.length > 0 && this.openBytes + s.bytes > this.maxBatchBytes) this.seal();
      this.open.push(s);
      this.openBytes += s.bytes;
      this.stats.queuedSpans++;
      this.stats.queuedBytes += s.bytes;
      this.options.budget.queued += s.bytes;
      if (this.open.length >= this.maxBatch || this.openBytes >= this.maxBatchBytes) this.seal();
    }
    this.schedule();
  }

  /**
   * Sends what is queued until it is all answered for or `deadline` (epoch ms) passes, whatever
   * the downstream does (requests still in flight then are abandoned); resolves to the spans not
   * forwarded. Its timers keep the process alive until then.
   */
  async drain(deadline: number): Promise<number> {
    this.drainDeadline = deadline;
    this.seal();
    for (const b of this.queue) b.notBefore = Math.min(b.notBefore, Date.now());
    this.pump();
    while (this.stats.queuedSpans > 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        setTimeout(resolve, Math.min(100, Math.max(0, deadline - Date.now())));
      });
      this.pump();
    }
    for (const req of this.inFlight) req.destroy(new Error('the shutdown grace period ended'));
    return this.stats.queuedSpans;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const req of this.inFlight) req.destroy(new Error('closed'));
    this.agent.destroy();
  }

  /** Sends an empty export request: whether the downstream answers, and how. */
  async probe(timeoutMs: number): Promise<{ ok: boolean; status?: number; ms: number; why?: string }> {
    const t0 = performance.now();
    const outcome = await this.post(encodeTraceRequest(exportRequestOf([]), this.options.encoding), timeoutMs);
    const ms = Math.round(performance.now() - t0);
    if (outcome.ok) return { ok: true, status: 200, ms };
    return { ok: false, ms, why: outcome.why };
  }

  private seal(): void {
    if (this.open.length === 0) return;
    const now = Date.now();
    this.queue.push({ spans: this.open, bytes: this.openBytes, firstTry: now, attempts: 0, notBefore: now });
    this.open = [];
    this.openBytes = 0;
  }

  /** One timer for both jobs: sealing a batch that waited long enough, and retrying when due. */
  private schedule(): void {
    this.pump();
    if (this.timer) return;
    const now = Date.now();
    let at = this.open.length > 0 ? this.openSince + this.flushMs : Number.POSITIVE_INFINITY;
    if (this.sending < this.concurrency) for (const b of this.queue) at = Math.min(at, b.notBefore);
    if (!Number.isFinite(at)) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.open.length > 0 && Date.now() - this.openSince >= this.flushMs) this.seal();
      this.schedule();
    }, Math.max(0, at - now));
    this.timer.unref();
  }

  private pump(): void {
    const now = Date.now();
    while (this.sending < this.concurrency) {
      const i = this.queue.findIndex((b) => b.notBefore <= now);
      if (i < 0) break;
      const [batch] = this.queue.splice(i, 1);
      if (batch) void this.send(batch);
    }
  }

  private async send(batch: Batch): Promise<void> {
    this.sending++;
    let outcome: Outcome;
    // the encoded request exists while it is sent: counted, and not kept for a retry (encoding again is cheaper than holding it)
    let bodyBytes = 0;
    try {
      const body = encodeTraceRequest(exportRequestOf(batch.spans), this.options.encoding);
      bodyBytes = body.byteLength;
      this.options.budget.queued += bodyBytes;
      batch.attempts++;
      const left = this.drainDeadline === undefined ? Number.POSITIVE_INFINITY : this.drainDeadline - Date.now();
      outcome = await this.post(body, Math.max(1, Math.min(this.options.timeoutMs, left)));
    } catch (e) {
      outcome = { ok: false, retry: false, why: `could not encode the batch: ${e instanceof Error ? e.message : String(e)}` };
    }
    this.options.budget.queued -= bodyBytes;
    this.sending--;
    const n = batch.spans.length;
    if (outcome.ok) {
      this.failing = false;
      this.stats.forwardedSpans += n;
      this.settle(batch, true);
      const { rejectedSpans, errorMessage } = decodeTraceResponse(outcome.body, this.options.encoding);
      if (rejectedSpans > 0) {
        this.stats.rejectedByDownstream += rejectedSpans;
        this.options.log('warn', `the downstream rejected ${rejectedSpans} of ${n} spans: ${errorMessage}`);
      }
    } else if (outcome.retry) {
      this.failing = true;
      if (outcome.timedOut) this.stats.forwardTimeouts++;
      const now = Date.now();
      const backoff = Math.min(this.maxBackoff, this.initialBackoff * 2 ** (batch.attempts - 1));
      let wait = outcome.retryAfterMs ?? backoff / 2 + Math.random() * (backoff / 2);
      if (this.drainDeadline !== undefined) wait = Math.min(wait, DRAIN_MAX_BACKOFF_MS);
      if (now + wait - batch.firstTry > this.options.maxElapsedMs) {
        this.drop(batch, `still failing after ${Math.round((now - batch.firstTry) / 1000)} s and ${batch.attempts} tries (${outcome.why})`);
      } else {
        this.stats.retries++;
        if (batch.attempts === 1 || batch.attempts % 10 === 0) this.options.log('warn', `forwarding ${n} spans failed (${outcome.why}); retrying in ${Math.round(wait)} ms`);
        batch.notBefore = now + wait;
        this.queue.push(batch);
      }
    } else {
      this.drop(batch, outcome.why);
    }
    if (this.stats.queuedSpans === 0 || this.queue.length === 0) for (const w of this.idleWaiters.splice(0)) w();
    this.schedule();
  }

  private settle(batch: Batch, delivered: boolean): void {
    this.stats.queuedSpans -= batch.spans.length;
    this.stats.queuedBytes -= batch.bytes;
    this.options.budget.queued -= batch.bytes;
    this.options.onSettled?.(batch.spans, delivered);
  }

  private drop(batch: Batch, why: string): void {
    const n = batch.spans.length;
    this.stats.droppedSpans += n;
    this.settle(batch, false);
    this.options.log('error', `dropped ${n} spans that the downstream did not take: ${why}`);
  }

  private post(body: Uint8Array, timeoutMs: number): Promise<Outcome> {
    return new Promise((resolve) => {
      const send = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(this.url, {
        method: 'POST',
        agent: this.agent,
        headers: { ...this.options.headers, 'content-type': CONTENT_TYPE[this.options.encoding], 'content-length': body.byteLength },
      });
      this.inFlight.add(req);
      let timedOut = false;
      const done = (outcome: Outcome): void => {
        this.inFlight.delete(req);
        resolve(outcome);
      };
      req.setTimeout(timeoutMs, () => {
        timedOut = true;
        req.destroy(new Error(`no answer within ${timeoutMs} ms`));
      });
      req.on('error', (e) => done({ ok: false, retry: true, why: e.message, timedOut }));
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => done({ ok: false, retry: true, why: e.message, timedOut }));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return done({ ok: true, body: Buffer.concat(chunks) });
          const why = `HTTP ${status} from ${this.url.href}`;
          if (!RETRYABLE.has(status)) return done({ ok: false, retry: false, why });
          done({ ok: false, retry: true, why, retryAfterMs: retryAfterMs(res.headers['retry-after']) });
        });
      });
      req.end(body);
    });
  }
}

/** Retry-After: delay-seconds or an HTTP date (RFC 9110 §10.2.3); capped at 5 minutes. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const v = value.trim();
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), 5 * 60_000) : undefined;
}
