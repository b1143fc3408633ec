import { defaultAdapters } from '../conventions/index.js';
import type { ConventionAdapter } from '../conventions/types.js';
import type { LoopwatchConfig } from '../detector/config/index.js';
import { PriceTable } from '../cost/prices.js';
import { LoopEngine } from '../detector/engine.js';
import type { LoopDetection } from '../detector/types.js';
import { LoopLogs, type LoopLoggerProvider } from '../otel/loop-logs.js';
import { LoopMetrics } from '../otel/loop-metrics.js';
import { decodeTraceRequest, decodeTraceRequestInSteps, type OtlpEncoding } from '../formats/protobuf/codec.js';
import type { MeterProvider } from '@opentelemetry/api';
import type { ExportTraceServiceRequest } from '../formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import type { CompletionReason, ReplayedTrace } from '../replay/types.js';
import { Authorizer, type Credentials } from './auth.js';
import { MemoryBudget, type MemoryUsage } from './budget.js';
import { Forwarder, type ForwarderStats } from './forwarder.js';
import { GrpcFront } from './grpc.js';
import type { HeldSpan } from './held.js';
import { handleHttp, TRACES_PATH } from './http.js';
import { DEFAULT_LIMITS, type ServeLimits } from './limits.js';
import { OnePortListener } from './listener.js';
import { ServePipeline, turnTaker, type IngestResult, type PipelineStats } from './pipeline.js';
import { SpoolWriteError, type Intake, type Refusal } from './receive.js';
import { SpoolLedger } from './ledger.js';
import { observeServe } from './serve-metrics.js';
import { Spool, type SpoolReplay, type SpoolSegment, type SpoolStats } from './spool.js';

export const DEFAULT_SERVE_HOST = '127.0.0.1';
export const DEFAULT_SERVE_PORT = 4319;
export const DEFAULT_FORWARD_URL = 'http://127.0.0.1:4318';

export interface ServeOptions {
  readonly host?: string;
  readonly port?: number;
  /** Base URL of the downstream OTLP/HTTP endpoint; spans go to `forward + /v1/traces`. */
  readonly forward?: string;
  readonly forwardProtocol?: OtlpEncoding;
  /** Headers sent to the downstream with every request. */
  readonly forwardHeaders?: Readonly<Record<string, string>>;
  /** Every limit (see `LIMITS`); the defaults for those not given. */
  readonly limits?: Partial<ServeLimits>;
  readonly config?: LoopwatchConfig;
  readonly conventions?: readonly ConventionAdapter[];
  readonly normalizeToolSpans?: boolean;
  /** Folder of the on-disk spool: what is accepted survives a kill and a restart. */
  readonly spoolDir?: string;
  /** PEM certificate chain and key: the port speaks TLS. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** What every request must carry (health endpoints excepted). */
  readonly credentials?: Credentials;
  /** Records `gen_ai.tool.loop.detections` and `gen_ai.tool.calls` through the Metrics API, and serve's own gauges. */
  readonly meterProvider?: MeterProvider;
  /**
   * With a spool and a meter provider: counts (and forwarded spans) are written down once the
   * metrics export holding them succeeded, which the caller reports through `countsExported`
   * (see `ReportingExporter`) and ends with `closeSpool` after its last export; otherwise as soon
   * as they happen (see `SpoolLedger`).
   */
  readonly countsExportedLater?: boolean;
  /** Emits each detection as a `loop.detected` log record. */
  readonly loggerProvider?: LoopLoggerProvider;
  readonly version?: string;
  readonly log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Each detection counted (the command writes its log line). */
  readonly onDetection?: (detection: LoopDetection) => void;
  /** Every completed trace (tests, monitoring). */
  readonly onTrace?: (trace: ReplayedTrace<HeldSpan>, reason: CompletionReason) => void;
}

export interface ServeStats extends PipelineStats, ForwarderStats, Partial<SpoolStats> {
  readonly accepting: boolean;
  readonly memory: MemoryUsage & { readonly limit: number };
  readonly connections: number;
}

/**
 * `loopwatch serve`: an OTLP endpoint (HTTP/1.1 and gRPC on one port) that holds each trace
 * until it is complete, runs the detection engine on it through the same trace replayer as
 * `loopwatch scan`, adds `loop.detected` events, and forwards every span to the downstream,
 * within one memory limit, and (with a spool) across a kill and a restart.
 */
export class LoopwatchServer {
  readonly limits: ServeLimits;
  readonly budget: MemoryBudget;
  readonly pipeline: ServePipeline;
  readonly forwarder: Forwarder;
  readonly spool: Spool | undefined;
  private readonly ledger: SpoolLedger | undefined;
  private readonly countsAfterExport: boolean;
  private readonly listener: OnePortListener;
  private readonly grpc: GrpcFront;
  private readonly authorizer: Authorizer;
  private readonly timer: NodeJS.Timeout;
  private accepting = true;
  private closing: Promise<number> | undefined;
  private replaying: Promise<void> | undefined;
  private readonly log: NonNullable<ServeOptions['log']>;
  readonly forwardUrl: string;
  address: { host: string; port: number } | undefined;

  constructor(private readonly options: ServeOptions = {}) {
    this.log = options.log ?? ((level, message) => console.error(`loopwatch serve: ${level}: ${message}`));
    const limits = (this.limits = { ...DEFAULT_LIMITS, ...options.limits });
    limits.quietAfterRoot = Math.min(limits.quietAfterRoot, limits.traceWait);
    limits.requestTimeout = Math.max(limits.requestTimeout, limits.headersTimeout);
    this.forwardUrl = tracesUrl(options.forward ?? DEFAULT_FORWARD_URL);
    const engine = new LoopEngine(options.config ?? {});
    const version = options.version ?? '0.0.0';
    const onProblem = (m: string): void => this.log('warn', m);
    this.budget = new MemoryBudget(limits.maxMemory, () => ({ held: this.pipeline.heldBytes, retained: this.pipeline.retainedBytes }));
    this.spool = options.spoolDir !== undefined ? new Spool(options.spoolDir, limits.spoolMax, this.log) : undefined;
    const spool = this.spool;
    this.countsAfterExport = options.countsExportedLater === true && options.meterProvider !== undefined;
    const ledger = (this.ledger = spool ? new SpoolLedger(spool, this.countsAfterExport) : undefined);
    this.forwarder = new Forwarder({
      url: this.forwardUrl,
      encoding: options.forwardProtocol ?? 'protobuf',
      budget: this.budget,
      ...(options.forwardHeaders ? { headers: options.forwardHeaders } : {}),
      timeoutMs: limits.forwardTimeout,
      maxElapsedMs: limits.forwardRetryFor,
      log: this.log,
      ...(ledger
        ? {
            onSettled: (spans: readonly HeldSpan[]) =>
              ledger.settled(spans.flatMap((s) => (s.spooled ? [{ traceId: s.span.traceId, spanId: s.span.spanId, segment: s.spooled }] : []))),
          }
        : {}),
    });
    this.pipeline = new ServePipeline({
      engine,
      adapters: options.conventions ?? defaultAdapters,
      forwarder: this.forwarder,
      budget: this.budget,
      traceWaitMs: limits.traceWait,
      quietAfterRootMs: limits.quietAfterRoot,
      retainTraces: limits.retainTraces,
      normalizeToolSpans: options.normalizeToolSpans ?? true,
      prices: PriceTable.of(options.config?.prices, (model) => this.log('warn', `no price for model ${model} in the configuration's prices; loops on it are reported in tokens only`)),
      metrics: options.meterProvider ? new LoopMetrics(options.meterProvider, version, onProblem) : undefined,
      logs: options.loggerProvider ? new LoopLogs(options.loggerProvider, version, onProblem) : undefined,
      spool,
      ledger,
      onDetection: options.onDetection,
      onTrace: options.onTrace,
      onProblem,
    });
    if (options.meterProvider) observeServe(options.meterProvider, version, () => this.stats);
    this.authorizer = new Authorizer(options.credentials ?? {});
    const intake: Intake = {
      maxBodyBytes: limits.maxBody,
      budget: this.budget,
      authorized: (header) => this.authorizer.check(header),
      refusal: () => this.refusal(),
      accept: (body, encoding) => this.accept(body, encoding),
      health: () => ({ ok: this.accepting && this.refusal() === undefined, body: this.stats }),
    };
    this.grpc = new GrpcFront(intake, { requestTimeoutMs: limits.requestTimeout, idleTimeoutMs: limits.idleTimeout });
    this.listener = new OnePortListener(
      {
        headersTimeoutMs: limits.headersTimeout,
        requestTimeoutMs: limits.requestTimeout,
        idleTimeoutMs: limits.idleTimeout,
        maxConnections: limits.maxConnections,
        tls: options.tls,
      },
      (socket) => this.grpc.accept(socket),
    );
    this.listener.http.on('request', (req, res) => handleHttp(intake, req, res));
    // completion is checked a few times per quiet period, at least every 250 ms
    const every = Math.max(10, Math.min(250, Math.floor(Math.min(limits.traceWait, limits.quietAfterRoot) / 4)));
    this.timer = setInterval(() => {
      this.pipeline.tick();
      this.ledger?.tick();
      this.spool?.tick();
    }, every);
    this.timer.unref();
  }

  /** Listens, then replays what the spool kept from an earlier run (in the background, within the memory limit). */
  async listen(): Promise<{ host: string; port: number }> {
    const replay = this.spool?.open();
    this.address = await this.listener.listen(this.options.port ?? DEFAULT_SERVE_PORT, this.options.host ?? DEFAULT_SERVE_HOST);
    if (replay) this.replaying = this.replay(replay);
    return this.address;
  }

  /** Whether the downstream answers an empty export request, and how fast. */
  probeForward(timeoutMs = 3_000): ReturnType<Forwarder['probe']> {
    return this.forwarder.probe(timeoutMs);
  }

  /** The metrics collected at `collectedAt` (epoch ms) were exported: their counts are written down as counted. */
  countsExported(collectedAt: number): void {
    this.ledger?.exported(collectedAt);
  }

  /** After the last metrics export of a shutdown: everything settled is written down and the spool closed. */
  closeSpool(): void {
    this.ledger?.flush();
    this.spool?.close();
  }

  /** Resolves once the spool's replay (if any) has handed every kept span to the pipeline. */
  replayed(): Promise<void> {
    return this.replaying ?? Promise.resolve();
  }

  get stats(): ServeStats {
    return {
      accepting: this.accepting,
      ...this.pipeline.stats,
      ...this.forwarder.stats,
      ...this.spool?.stats,
      memory: { ...this.budget.usage(), limit: this.budget.limit },
      connections: this.listener.connections,
    };
  }

  /**
   * Clean shutdown: refuses new data (503, the port stays open), evaluates every trace it holds
   * and forwards what it can until `graceMs` has passed, whatever the downstream does. Resolves
   * to the spans it could not forward (kept in the spool when there is one).
   */
  close(graceMs = this.limits.shutdownGrace): Promise<number> {
    this.closing ??= this.doClose(graceMs);
    return this.closing;
  }

  private async doClose(graceMs: number): Promise<number> {
    const deadline = Date.now() + graceMs;
    this.accepting = false;
    clearInterval(this.timer);
    this.listener.closeIdle();
    this.grpc.close(Math.min(2_000, graceMs));
    await this.replaying;
    this.pipeline.finish();
    const left = await this.forwarder.drain(deadline);
    if (left > 0) this.log('error', `shut down with ${left} spans the downstream did not take${this.spool ? ` (kept in the spool ${this.spool.dir} for the next start)` : ''}`);
    this.forwarder.close();
    if (!this.countsAfterExport) this.closeSpool();
    this.grpc.destroyAll();
    await this.listener.close();
    return left;
  }

  private async accept(body: Uint8Array, encoding: OtlpEncoding): Promise<IngestResult> {
    const request = await decode(body, encoding);
    let segment: SpoolSegment | undefined;
    if (this.spool) {
      try {
        segment = this.spool.received(body, encoding);
      } catch (e) {
        this.log('error', `spool ${this.spool.dir}: could not write a request (refused with 503): ${e instanceof Error ? e.message : String(e)}`);
        throw new SpoolWriteError('the spool could not write the request: retry later');
      }
    }
    return this.pipeline.ingest(request, segment);
  }

  private async replay(replay: SpoolReplay): Promise<void> {
    this.pipeline.countedBeforeRestart(replay.counted);
    let spans = 0;
    for await (const r of replay.requests) {
      while (this.budget.full && this.accepting) await new Promise((resolve) => setTimeout(resolve, 50));
      if (!this.accepting) break;
      try {
        spans += (await this.pipeline.ingest(await decode(r.body, r.encoding), { segment: r.segment, settled: replay.settled })).accepted;
      } catch (e) {
        this.log('error', `spool: a kept request could not be decoded (skipped): ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    if (this.spool) this.spool.stats.spoolReplayedSpans = spans;
    if (spans > 0 || replay.settled.size > 0) this.log('info', `spool: replayed ${spans} spans not forwarded before the restart (${replay.settled.size} already forwarded were skipped)`);
    // once every replayed trace has completed, nothing of the earlier run can be counted again
    setTimeout(() => this.pipeline.countedBeforeRestart(new Set()), this.limits.traceWait + this.limits.quietAfterRoot + 1_000).unref();
  }

  private refusal(): Refusal | undefined {
    if (!this.accepting) return { status: 503, retryAfterSeconds: 5, why: 'loopwatch serve is shutting down' };
    if (this.spool?.full) return { status: 429, retryAfterSeconds: 5, why: `the spool ${this.spool.dir} is full (${this.limits.spoolMax} bytes): spans wait for the downstream` };
    if (!this.budget.full) return undefined;
    const failing = this.forwarder.failing;
    return {
      status: 429,
      retryAfterSeconds: this.forwarder.retryAfterSeconds(),
      why: failing
        ? `memory is full (${this.budget.limit} bytes): the downstream ${this.forwardUrl} is not taking data`
        : `memory is full (${this.budget.limit} bytes): spans arrive faster than they are forwarded`,
    };
  }
}

/** A request decoded without holding the event loop for seconds: protobuf span by span, with turns between. */
function decode(body: Uint8Array, encoding: OtlpEncoding): Promise<ExportTraceServiceRequest> {
  return encoding === 'protobuf' ? decodeTraceRequestInSteps(body, turnTaker()) : Promise.resolve(decodeTraceRequest(body, encoding));
}

/** `URL/v1/traces` for a base URL, with or without a trailing slash. */
export function tracesUrl(base: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${TRACES_PATH}`;
  return url.href;
}
