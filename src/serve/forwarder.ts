import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { CONTENT_TYPE, decodeTraceResponse, encodeTraceRequest, type OtlpEncoding } from '../formats/protobuf/codec.js';
import { exportRequestOf, type HeldSpan } from './held.js';

export interface ForwarderOptions {
  /** Full URL of the downstream's trace endpoint (`.../v1/traces`). */
  readonly url: string;
  readonly encoding: OtlpEncoding;
  /** Spans waiting to be sent (or being sent) before the server refuses new data (429/503). */
  readonly maxQueuedSpans: number;
  /** Spans per export request. */
  readonly maxBatchSpans?: number;
  /** A batch that is not full goes out after this long. */
  readonly flushMs?: number;
  /** Requests in flight at once. */
  readonly concurrency?: number;
  readonly timeoutMs?: number;
  /** Retry delays: exponential from `initialBackoffMs` to `maxBackoffMs`, with jitter, unless the downstream sends Retry-After. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** A batch still failing this long after its first try is dropped (and counted): the retry is bounded. */
  readonly maxElapsedMs?: number;
  readonly log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

interface Batch {
  readonly spans: HeldSpan[];
  body: Uint8Array | undefined;
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
  retries: number;
}

type Outcome = { readonly ok: true; readonly body: Uint8Array } | { readonly ok: false; readonly retry: boolean; readonly retryAfterMs?: number | undefined; readonly why: string };

const RETRYABLE = new Set([429, 502, 503, 504]);

/**
 * Sends completed traces downstream over OTLP/HTTP, in batches, as the OTLP/HTTP spec asks of a
 * client: retryable answers (429, 502, 503, 504, no answer) are retried with exponential backoff
 * and jitter, or after the server's Retry-After; other failures are not retried. A span leaves
 * the queue only when the downstream has answered for it, so a short outage loses nothing; the
 * retry is bounded in time (`maxElapsedMs`), and the queue in size (the server refuses new data
 * while it is full, so the agents' exporters retry instead).
 */
export class Forwarder {
  private readonly url: URL;
  private readonly agent: HttpAgent;
  private readonly maxBatch: number;
  private readonly flushMs: number;
  private readonly concurrency: number;
  private readonly timeoutMs: number;
  private readonly initialBackoff: number;
  private readonly maxBackoff: number;
  private readonly maxElapsed: number;
  private open: HeldSpan[] = [];
  private openSince = 0;
  private readonly queue: Batch[] = [];
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: (() => void)[] = [];
  /** The last answer was a failure worth retrying: the downstream is in trouble. */
  failing = false;
  readonly stats: ForwarderStats = { forwardedSpans: 0, droppedSpans: 0, rejectedByDownstream: 0, queuedSpans: 0, retries: 0 };

  constructor(private readonly options: ForwarderOptions) {
    this.url = new URL(options.url);
    this.agent = this.url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.maxBatch = options.maxBatchSpans ?? 4096;
    this.flushMs = options.flushMs ?? 200;
    this.concurrency = options.concurrency ?? 2;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.initialBackoff = options.initialBackoffMs ?? 250;
    this.maxBackoff = options.maxBackoffMs ?? 10_000;
    this.maxElapsed = options.maxElapsedMs ?? 5 * 60_000;
  }

  /** No room for more spans until the queue drains. */
  get full(): boolean {
    return this.stats.queuedSpans >= this.options.maxQueuedSpans;
  }

  /** Seconds a client should wait before retrying while the queue is full. */
  retryAfterSeconds(): number {
    const next = this.queue.reduce((m, b) => Math.min(m, b.notBefore), Number.POSITIVE_INFINITY);
    const wait = Number.isFinite(next) ? next - Date.now() : 0;
    return Math.max(1, Math.ceil(wait / 1000));
  }

  add(spans: readonly HeldSpan[]): void {
    if (spans.length === 0) return;
    if (this.open.length === 0) this.openSince = Date.now();
    for (const s of spans) {
      this.open.push(s);
      if (this.open.length >= this.maxBatch) this.seal();
    }
    this.stats.queuedSpans += spans.length;
    this.schedule();
  }

  /** Sends what is queued; resolves when the queue is empty or at `deadline` (epoch ms), with the spans still queued then. */
  async drain(deadline: number): Promise<number> {
    this.seal();
    this.pump();
    while (this.stats.queuedSpans > 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        setTimeout(resolve, Math.min(100, Math.max(0, deadline - Date.now()))).unref();
      });
      this.pump();
    }
    return this.stats.queuedSpans;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.agent.destroy();
  }

  private seal(): void {
    if (this.open.length === 0) return;
    const now = Date.now();
    this.queue.push({ spans: this.open, body: undefined, firstTry: now, attempts: 0, notBefore: now });
    this.open = [];
  }

  /** One timer for both jobs: sealing a batch that waited long enough, and retrying when due. */
  private schedule(): void {
    this.pump();
    if (this.timer) return;
    const now = Date.now();
    let at = this.open.length > 0 ? this.openSince + this.flushMs : Number.POSITIVE_INFINITY;
    if (this.inFlight < this.concurrency) for (const b of this.queue) at = Math.min(at, b.notBefore);
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
    while (this.inFlight < this.concurrency) {
      const i = this.queue.findIndex((b) => b.notBefore <= now);
      if (i < 0) break;
      const [batch] = this.queue.splice(i, 1);
      if (batch) void this.send(batch);
    }
  }

  private async send(batch: Batch): Promise<void> {
    this.inFlight++;
    let outcome: Outcome;
    try {
      batch.body ??= encodeTraceRequest(exportRequestOf(batch.spans), this.options.encoding);
      batch.attempts++;
      outcome = await this.post(batch.body);
    } catch (e) {
      outcome = { ok: false, retry: false, why: `could not encode the batch: ${e instanceof Error ? e.message : String(e)}` };
    }
    this.inFlight--;
    const n = batch.spans.length;
    if (outcome.ok) {
      this.failing = false;
      this.stats.forwardedSpans += n;
      this.stats.queuedSpans -= n;
      const { rejectedSpans, errorMessage } = decodeTraceResponse(outcome.body, this.options.encoding);
      if (rejectedSpans > 0) {
        this.stats.rejectedByDownstream += rejectedSpans;
        this.options.log('warn', `the downstream rejected ${rejectedSpans} of ${n} spans: ${errorMessage}`);
      }
    } else if (outcome.retry) {
      this.failing = true;
      const now = Date.now();
      const backoff = Math.min(this.maxBackoff, this.initialBackoff * 2 ** (batch.attempts - 1));
      const delay = outcome.retryAfterMs ?? backoff / 2 + Math.random() * (backoff / 2);
      if (now + delay - batch.firstTry > this.maxElapsed) {
        this.drop(batch, `still failing after ${Math.round((now - batch.firstTry) / 1000)} s and ${batch.attempts} tries (${outcome.why})`);
      } else {
        this.stats.retries++;
        if (batch.attempts === 1 || batch.attempts % 10 === 0) this.options.log('warn', `forwarding ${n} spans failed (${outcome.why}); retrying in ${Math.round(delay)} ms`);
        batch.notBefore = now + delay;
        this.queue.push(batch);
      }
    } else {
      this.drop(batch, outcome.why);
    }
    if (this.stats.queuedSpans === 0 || this.queue.length === 0) for (const w of this.idleWaiters.splice(0)) w();
    this.schedule();
  }

  private drop(batch: Batch, why: string): void {
    const n = batch.spans.length;
    this.stats.droppedSpans += n;
    this.stats.queuedSpans -= n;
    this.options.log('error', `dropped ${n} spans that the downstream did not take: ${why}`);
  }

  private post(body: Uint8Array): Promise<Outcome> {
    return new Promise((resolve) => {
      const send = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(this.url, {
        method: 'POST',
        agent: this.agent,
        headers: { 'content-type': CONTENT_TYPE[this.options.encoding], 'content-length': body.byteLength },
      });
      req.setTimeout(this.timeoutMs, () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on('error', (e) => resolve({ ok: false, retry: true, why: e.message }));
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => resolve({ ok: false, retry: true, why: e.message }));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve({ ok: true, body: Buffer.concat(chunks) });
          const why = `HTTP ${status} from ${this.url.href}`;
          if (!RETRYABLE.has(status)) return resolve({ ok: false, retry: false, why });
          resolve({ ok: false, retry: true, why, retryAfterMs: retryAfterMs(res.headers['retry-after']) });
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
