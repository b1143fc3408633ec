import { defaultAdapters } from '../conventions/index.js';
import type { ConventionAdapter } from '../conventions/types.js';
import type { LoopwatchConfig } from '../detector/config/index.js';
import { PriceTable } from '../cost/prices.js';
import { LoopEngine } from '../detector/engine.js';
import { LoopLogs, type LoopLoggerProvider } from '../otel/loop-logs.js';
import { LoopMetrics } from '../otel/loop-metrics.js';
import type { OtlpEncoding } from '../formats/protobuf/codec.js';
import type { MeterProvider } from '@opentelemetry/api';
import type { CompletionReason, ReplayedTrace } from '../replay/trace-replay.js';
import { Forwarder, type ForwarderStats } from './forwarder.js';
import { GrpcFront } from './grpc.js';
import type { HeldSpan } from './held.js';
import { handleHttp, TRACES_PATH, type Intake } from './http.js';
import { OnePortListener } from './listener.js';
import { ServePipeline, type PipelineStats } from './pipeline.js';

export const DEFAULT_SERVE_HOST = '127.0.0.1';
export const DEFAULT_SERVE_PORT = 4319;
export const DEFAULT_FORWARD_URL = 'http://127.0.0.1:4318';
export const DEFAULT_TRACE_WAIT_MS = 30_000;

export interface ServeOptions {
  readonly host?: string;
  readonly port?: number;
  /** Base URL of the downstream OTLP/HTTP endpoint; spans go to `forward + /v1/traces`. */
  readonly forward?: string;
  readonly forwardProtocol?: OtlpEncoding;
  /** A trace without its local root is complete after this long without a new span (ms). */
  readonly traceWaitMs?: number;
  /** A trace whose local root has arrived is complete after this long without a new span (ms; at most `traceWaitMs`). */
  readonly quietAfterRootMs?: number;
  readonly config?: LoopwatchConfig;
  readonly conventions?: readonly ConventionAdapter[];
  readonly normalizeToolSpans?: boolean;
  /** Spans held in open traces (memory): beyond it, the least recently active trace is evaluated and forwarded early. */
  readonly maxHeldSpans?: number;
  /** Spans waiting for the downstream: beyond it, new requests get 429/503 with Retry-After. */
  readonly maxQueuedSpans?: number;
  /** Completed traces remembered so that their late spans continue them (calls only, no payloads). */
  readonly retainTraces?: number;
  /** Largest request body, compressed or not (bytes; the spec's recommended 20 MiB by default). */
  readonly maxBodyBytes?: number;
  /** Forwarding retries stop after this long and the batch is dropped (ms). */
  readonly forwardMaxElapsedMs?: number;
  readonly forwardTimeoutMs?: number;
  /** Records `gen_ai.tool.loop.detections` and `gen_ai.tool.calls` through the Metrics API. */
  readonly meterProvider?: MeterProvider;
  /** Emits each detection as a `loop.detected` log record. */
  readonly loggerProvider?: LoopLoggerProvider;
  readonly version?: string;
  readonly log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Every completed trace (tests, monitoring). */
  readonly onTrace?: (trace: ReplayedTrace<HeldSpan>, reason: CompletionReason) => void;
}

export interface ServeStats extends PipelineStats, ForwarderStats {
  readonly accepting: boolean;
}

/**
 * `loopwatch serve`: an OTLP endpoint (HTTP/1.1 and gRPC on one port) that holds each trace
 * until it is complete, runs the detection engine on it through the same trace replayer as
 * `loopwatch scan`, adds `loop.detected` events, and forwards every span to the downstream.
 */
export class LoopwatchServer {
  readonly pipeline: ServePipeline;
  readonly forwarder: Forwarder;
  private readonly listener: OnePortListener;
  private readonly grpc: GrpcFront;
  private readonly timer: NodeJS.Timeout;
  private accepting = true;
  private closing: Promise<number> | undefined;
  private readonly log: NonNullable<ServeOptions['log']>;
  readonly forwardUrl: string;
  address: { host: string; port: number } | undefined;

  constructor(private readonly options: ServeOptions = {}) {
    this.log = options.log ?? ((level, message) => console.error(`loopwatch serve: ${level}: ${message}`));
    const traceWaitMs = options.traceWaitMs ?? DEFAULT_TRACE_WAIT_MS;
    this.forwardUrl = tracesUrl(options.forward ?? DEFAULT_FORWARD_URL);
    const engine = new LoopEngine(options.config ?? {});
    const version = options.version ?? '0.0.0';
    const onProblem = (m: string): void => this.log('warn', m);
    this.forwarder = new Forwarder({
      url: this.forwardUrl,
      encoding: options.forwardProtocol ?? 'protobuf',
      maxQueuedSpans: options.maxQueuedSpans ?? 100_000,
      ...(options.forwardMaxElapsedMs !== undefined ? { maxElapsedMs: options.forwardMaxElapsedMs } : {}),
      ...(options.forwardTimeoutMs !== undefined ? { timeoutMs: options.forwardTimeoutMs } : {}),
      log: this.log,
    });
    this.pipeline = new ServePipeline({
      engine,
      adapters: options.conventions ?? defaultAdapters,
      forwarder: this.forwarder,
      traceWaitMs,
      quietAfterRootMs: Math.min(options.quietAfterRootMs ?? 1_000, traceWaitMs),
      maxHeldSpans: options.maxHeldSpans ?? 100_000,
      retainTraces: options.retainTraces ?? 10_000,
      normalizeToolSpans: options.normalizeToolSpans ?? true,
      prices: PriceTable.of(options.config?.prices, (model) => this.log('warn', `no price for model ${model} in the configuration's prices; loops on it are reported in tokens only`)),
      metrics: options.meterProvider ? new LoopMetrics(options.meterProvider, version, onProblem) : undefined,
      logs: options.loggerProvider ? new LoopLogs(options.loggerProvider, version, onProblem) : undefined,
      onTrace: options.onTrace,
      onProblem,
    });
    const intake: Intake = {
      maxBodyBytes: options.maxBodyBytes ?? 20 * 1024 * 1024,
      refusal: () => this.refusal(),
      ingest: (request) => this.pipeline.ingest(request),
      health: () => ({ ok: this.accepting && this.refusal() === undefined, body: this.stats }),
    };
    this.grpc = new GrpcFront(intake);
    this.listener = new OnePortListener(undefined, (socket) => this.grpc.accept(socket));
    this.listener.http.on('request', (req, res) => handleHttp(intake, req, res));
    // completion is checked a few times per quiet period, at least every 250 ms
    const every = Math.max(10, Math.min(250, Math.floor(Math.min(traceWaitMs, options.quietAfterRootMs ?? 1_000) / 4)));
    this.timer = setInterval(() => this.pipeline.tick(), every);
    this.timer.unref();
  }

  async listen(): Promise<{ host: string; port: number }> {
    this.address = await this.listener.listen(this.options.port ?? DEFAULT_SERVE_PORT, this.options.host ?? DEFAULT_SERVE_HOST);
    return this.address;
  }

  get stats(): ServeStats {
    return { accepting: this.accepting, ...this.pipeline.stats, ...this.forwarder.stats };
  }

  /**
   * Clean shutdown: refuses new data (503), evaluates and forwards every trace it holds, and
   * waits for the downstream until `graceMs` has passed. Resolves to the spans it could not forward.
   */
  close(graceMs = 30_000): Promise<number> {
    this.closing ??= this.doClose(graceMs);
    return this.closing;
  }

  private async doClose(graceMs: number): Promise<number> {
    const deadline = Date.now() + graceMs;
    this.accepting = false;
    clearInterval(this.timer);
    const closed = this.listener.close();
    this.grpc.close(Math.min(2_000, graceMs));
    this.pipeline.finish();
    const left = await this.forwarder.drain(deadline);
    if (left > 0) this.log('error', `shut down with ${left} spans the downstream did not take`);
    this.forwarder.close();
    this.listener.destroyAll();
    await closed;
    return left;
  }

  private refusal(): ReturnType<Intake['refusal']> {
    if (!this.accepting) return { status: 503, retryAfterSeconds: 5, why: 'loopwatch serve is shutting down' };
    if (!this.forwarder.full) return undefined;
    const failing = this.forwarder.failing;
    return {
      // 503: the downstream is failing and the buffer filled up waiting for it; 429: it is only slower than the input
      status: failing ? 503 : 429,
      retryAfterSeconds: this.forwarder.retryAfterSeconds(),
      why: failing ? `the buffer is full: the downstream ${this.forwardUrl} is not taking data` : 'the buffer is full: spans arrive faster than they are forwarded',
    };
  }
}

/** `URL/v1/traces` for a base URL, with or without a trailing slash. */
export function tracesUrl(base: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${TRACES_PATH}`;
  return url.href;
}
