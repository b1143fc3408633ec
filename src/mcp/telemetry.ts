import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { ATTR_ERROR_TYPE, ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_TOOL_NAME, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION, GEN_AI_OPERATION_EXECUTE_TOOL } from '../conventions/attributes.js';
import { ATTR_MCP_METHOD_NAME, ATTR_MCP_SESSION_ID } from '../conventions/mcp.js';
import type { LoopDetection } from '../detector/types.js';
import { ATTR_LOOP_ACTION, type GuardSpanAction } from '../guard/span-mark.js';
import { TOOL_ERROR_TYPE } from '../guard/tool-result.js';
import { LOOP_EVENT_NAME, loopEventAttributes } from '../otel/event-attributes.js';
import { LoopMetrics } from '../otel/loop-metrics.js';
import { METHOD_TOOLS_CALL, type JsonObject, type JsonRpcId } from './messages.js';

/** OpenTelemetry MCP semantic conventions (development status; no constants in the semantic-conventions package for all of them). */
export const ATTR_JSONRPC_REQUEST_ID = 'jsonrpc.request.id';
export const ATTR_MCP_PROTOCOL_VERSION = 'mcp.protocol.version';
export const ATTR_NETWORK_TRANSPORT = 'network.transport';
export const ATTR_NETWORK_PROTOCOL_NAME = 'network.protocol.name';
export const ATTR_RPC_RESPONSE_STATUS_CODE = 'rpc.response.status_code';

const SPANS_OFF = 'spans off (set OTEL_EXPORTER_OTLP_ENDPOINT)';

export type Env = Readonly<Record<string, string | undefined>>;

/** Where a call came in: stdio (`pipe`) or Streamable HTTP (`tcp`, `http`). */
export type McpTransport = 'pipe' | 'http';

export interface ToolCallStart {
  readonly toolName: string;
  readonly requestId: JsonRpcId;
  readonly sessionId: string | undefined;
  readonly transport: McpTransport;
  readonly protocolVersion: string | undefined;
  /** The request's `params._meta`: W3C trace context when the client propagates it. */
  readonly meta: JsonObject | undefined;
}

/** How a call ended, as its span records it. */
export type ToolCallEnd =
  | { readonly kind: 'result'; readonly isError: boolean }
  | { readonly kind: 'error'; readonly code: number | undefined }
  | { readonly kind: 'answered'; readonly action: GuardSpanAction }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'unanswered' };

/**
 * One `tools/call`'s span, or nothing when telemetry is off. `at`: when it happened, as
 * `performance.now()` read then (the SDK's own clock), for a result read after it was relayed;
 * now when absent.
 */
export interface ToolCallSpan {
  loopDetected(detection: LoopDetection, action: GuardSpanAction | undefined, at?: number): void;
  end(how: ToolCallEnd, at?: number): void;
}

const NO_SPAN: ToolCallSpan = { loopDetected: () => undefined, end: () => undefined };

const metaGetter: TextMapGetter<JsonObject> = {
  get: (carrier, key) => {
    const v = carrier[key];
    return typeof v === 'string' ? v : undefined;
  },
  keys: (carrier) => Object.keys(carrier),
};

const propagator = new W3CTraceContextPropagator();

/** The client's trace context from a request's `params._meta` (unprefixed `traceparent` / `tracestate`, as SEP-414 says). */
export function clientContext(meta: JsonObject | undefined): Context | undefined {
  if (!meta || typeof meta.traceparent !== 'string') return undefined;
  const ctx = propagator.extract(ROOT_CONTEXT, meta, metaGetter);
  return trace.getSpanContext(ctx) ? ctx : undefined;
}

/** The trace id of the client's trace context, when it propagates one. */
export function clientTraceId(meta: JsonObject | undefined): string | undefined {
  const ctx = clientContext(meta);
  return ctx ? trace.getSpanContext(ctx)?.traceId : undefined;
}

/**
 * The proxy's spans and metrics, configured by the standard OpenTelemetry variables: spans when
 * `OTEL_TRACES_EXPORTER` says `otlp` or an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), in `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL` (http/protobuf
 * by default, or http/json); the contract's counters through the Metrics API only when
 * `OTEL_METRICS_EXPORTER=otlp` (the gateway counts the spans' events otherwise);
 * `OTEL_SDK_DISABLED=true` turns both off. `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` name
 * the resource (default service name `loopwatch-mcp`).
 */
export class McpTelemetry {
  /** What is on, for the start-up line. */
  readonly describe: string;
  private readonly tracer: Tracer | undefined;
  private readonly metrics: LoopMetrics | undefined;

  private constructor(
    private readonly tracerProvider: BasicTracerProvider | undefined,
    private readonly meterProvider: MeterProvider | undefined,
    version: string,
    describe: string,
    onProblem: (message: string) => void,
  ) {
    this.tracer = tracerProvider?.getTracer('loopwatch', version);
    this.metrics = meterProvider ? new LoopMetrics(meterProvider, version, onProblem) : undefined;
    this.describe = describe;
  }

  /** The SDK and exporters are imported here, when telemetry is on, not at start: the proxy and every other command start without them. */
  static async fromEnv(env: Env, version: string, onProblem: (message: string) => void): Promise<McpTelemetry> {
    if (truthy(env.OTEL_SDK_DISABLED)) return new McpTelemetry(undefined, undefined, version, 'spans off (OTEL_SDK_DISABLED)', onProblem);
    const tracesExporter = listed(env.OTEL_TRACES_EXPORTER);
    const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
    const spansOn = tracesExporter ? tracesExporter.includes('otlp') : endpoint !== undefined && endpoint !== '';
    const metricsOn = listed(env.OTEL_METRICS_EXPORTER)?.includes('otlp') === true;
    if (!spansOn && !metricsOn) return new McpTelemetry(undefined, undefined, version, SPANS_OFF, onProblem);
    const { detectResources, envDetector, resourceFromAttributes } = await import('@opentelemetry/resources');
    const detected = detectResources({ detectors: [envDetector] });
    const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'loopwatch-mcp', [ATTR_SERVICE_VERSION]: version }).merge(detected);
    const parts: string[] = [];
    let tracerProvider: BasicTracerProvider | undefined;
    if (spansOn) {
      const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
      if (protocol === 'http/protobuf' || protocol === 'http/json') {
        const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
        const exporter =
          protocol === 'http/json' ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter() : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
        tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
        parts.push(`spans over OTLP ${protocol}${endpoint ? ` to ${endpoint}` : ''}`);
      } else {
        onProblem(`OTLP protocol ${JSON.stringify(protocol)} is not supported here (http/protobuf or http/json); spans are off`);
      }
    }
    if (!tracerProvider) parts.push(SPANS_OFF);
    let meterProvider: MeterProvider | undefined;
    if (metricsOn) {
      const protocol = env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
      const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL ?? 60_000);
      const { MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
      const exporter =
        protocol === 'http/json' ? new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter() : new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter();
      meterProvider = new MeterProvider({
        resource,
        readers: [
          new PeriodicExportingMetricReader({
            exporter,
            exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : 60_000,
          }),
        ],
      });
      parts.push(`metrics over OTLP ${protocol}`);
    }
    return new McpTelemetry(tracerProvider, meterProvider, version, parts.join('; '), onProblem);
  }

  /**
   * The span of a `tools/call` (SERVER: the proxy answers for the server), under the client's span
   * when it propagated one. Only its start time is taken here, on the request's path: the span is
   * made when it is first written to, which for a call that is relayed and raises nothing is its
   * end, read after the response is relayed (bench/NOTES.md, issue 31, session 6).
   */
  startToolCall(call: ToolCallStart): ToolCallSpan {
    this.metrics?.recordToolCall(call.toolName, undefined);
    const tracer = this.tracer;
    if (!tracer) return this.metrics ? this.metricsOnly() : NO_SPAN;
    const startTime = performance.now();
    const active = context.active();
    let span: Span | undefined;
    return this.spanOf(() => (span ??= this.openSpan(tracer, call, startTime, active)));
  }

  private openSpan(tracer: Tracer, call: ToolCallStart, startTime: number, active: Context): Span {
    const parent = clientContext(call.meta);
    const attributes: Record<string, string> = {
      [ATTR_MCP_METHOD_NAME]: METHOD_TOOLS_CALL,
      [ATTR_GEN_AI_TOOL_NAME]: call.toolName,
      [ATTR_JSONRPC_REQUEST_ID]: String(call.requestId),
      [ATTR_NETWORK_TRANSPORT]: call.transport === 'pipe' ? 'pipe' : 'tcp',
    };
    // A client that propagates its context has its own span for this call, counted as the tool
    // call (gen_ai.operation.name there): this one is the server side of it and is not counted again.
    if (!parent) attributes[ATTR_GEN_AI_OPERATION_NAME] = GEN_AI_OPERATION_EXECUTE_TOOL;
    if (call.transport === 'http') attributes[ATTR_NETWORK_PROTOCOL_NAME] = 'http';
    if (call.sessionId !== undefined) attributes[ATTR_MCP_SESSION_ID] = call.sessionId;
    if (call.protocolVersion !== undefined) attributes[ATTR_MCP_PROTOCOL_VERSION] = call.protocolVersion;
    return tracer.startSpan(`${METHOD_TOOLS_CALL} ${call.toolName}`, { kind: SpanKind.SERVER, attributes, startTime }, parent ?? active);
  }

  async shutdown(): Promise<void> {
    await Promise.allSettled([this.tracerProvider?.shutdown(), this.meterProvider?.shutdown()]);
  }

  /** `span`: the call's span, made on the first call. */
  private spanOf(open: () => Span): ToolCallSpan {
    let ended = false;
    return {
      loopDetected: (d, action, at) => {
        if (ended) return;
        this.metrics?.recordDetection(d);
        // the time now, not when the span is made: a decision is taken as it is reported
        open().addEvent(LOOP_EVENT_NAME, loopEventAttributes(d, action ? { [ATTR_LOOP_ACTION]: action } : undefined), at ?? performance.now());
      },
      end: (how, at) => {
        if (ended) return;
        ended = true;
        const endTime = at ?? performance.now();
        const span = open();
        const errorType = endErrorType(how);
        if (errorType !== undefined) {
          span.setAttribute(ATTR_ERROR_TYPE, errorType);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        if (how.kind === 'error' && how.code !== undefined) span.setAttribute(ATTR_RPC_RESPONSE_STATUS_CODE, String(how.code));
        if (how.kind === 'answered') span.setAttribute(ATTR_LOOP_ACTION, how.action);
        span.end(endTime);
      },
    };
  }

  private metricsOnly(): ToolCallSpan {
    return { loopDetected: (d) => this.metrics?.recordDetection(d), end: () => undefined };
  }
}

/** `error.type` as the MCP conventions define it: `tool_error` for an `isError` result, the JSON-RPC code for an error response. */
function endErrorType(how: ToolCallEnd): string | undefined {
  switch (how.kind) {
    case 'result':
      return how.isError ? TOOL_ERROR_TYPE : undefined;
    case 'answered':
      return TOOL_ERROR_TYPE;
    case 'error':
      return how.code !== undefined ? String(how.code) : '_OTHER';
    case 'cancelled':
      return 'cancelled';
    case 'unanswered':
      return '_OTHER';
  }
}

function truthy(v: string | undefined): boolean {
  return v !== undefined && v.trim().toLowerCase() === 'true';
}

/** A comma-separated exporter list, lowercased; undefined when unset or empty. */
function listed(v: string | undefined): string[] | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  return v.split(',').map((s) => s.trim().toLowerCase());
}
