import type { Command } from 'commander';
import { Option } from 'commander';
import { randomUUID } from 'node:crypto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '../conventions/attributes.js';
import { ConfigError, type LoopwatchConfig } from '../detector/config/index.js';
import { LoopEngine } from '../detector/engine.js';
import type { OtlpEncoding } from '../formats/protobuf/codec.js';
import { DEFAULT_FORWARD_URL, DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT, DEFAULT_TRACE_WAIT_MS, LoopwatchServer } from '../serve/server.js';
import { ConfigFileError, loadConfigFile } from '../formats/config-file.js';
import type { CliIo } from './io.js';

interface ServeFlags {
  host: string;
  port: number;
  forward: string;
  forwardProtocol: 'http/protobuf' | 'http/json';
  traceWait: number;
  config?: string;
}

const EXIT_CLEAN = 0;
const EXIT_USAGE = 2;
/** Shut down with spans the downstream did not take. */
const EXIT_UNFORWARDED = 1;

function positiveInt(what: string, max: number): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1 || n > max) throw new Error(`${what} must be a whole number from 1 to ${max}, got ${JSON.stringify(v)}`);
    return n;
  };
}

/** `loopwatch serve`: the flags docs/serve.md documents, nothing else (limits come from the environment). */
export function addServeCommand(program: Command, io: CliIo, setExit: (code: number) => void, version: string): void {
  program
    .command('serve')
    .description('OTLP endpoint for agents in any language: holds each trace until it is complete, adds loop.detected events, forwards every span.')
    .option('--host <host>', 'address to listen on', DEFAULT_SERVE_HOST)
    .option('--port <port>', 'port for OTLP/HTTP (POST /v1/traces, GET /healthz) and OTLP/gRPC', positiveInt('--port', 65535), DEFAULT_SERVE_PORT)
    .option('--forward <url>', 'base URL of the downstream OTLP/HTTP endpoint; spans go to URL/v1/traces', DEFAULT_FORWARD_URL)
    .addOption(new Option('--forward-protocol <protocol>', 'encoding towards the downstream').choices(['http/protobuf', 'http/json']).default('http/protobuf'))
    .option('--trace-wait <ms>', 'a trace whose local root never arrives is complete after this long without a new span', positiveInt('--trace-wait', 86_400_000), DEFAULT_TRACE_WAIT_MS)
    .option('--config <file>', 'loopwatch configuration (YAML or JSON), the same as for the processor and scan')
    .action(async (flags: ServeFlags) => setExit(await runServe(flags, io, version)));
}

async function runServe(flags: ServeFlags, io: CliIo, version: string): Promise<number> {
  const say = (text: string): void => void io.stderr.write(`loopwatch serve: ${text}\n`);
  let config: LoopwatchConfig = {};
  if (flags.config) {
    try {
      config = await loadConfigFile(flags.config);
      new LoopEngine(config);
    } catch (e) {
      if (e instanceof ConfigFileError || e instanceof ConfigError) {
        say(`bad configuration\n${e.message}`);
        return EXIT_USAGE;
      }
      throw e;
    }
  }
  try {
    new URL(flags.forward);
  } catch {
    say(`--forward must be a URL such as http://127.0.0.1:4318, got ${JSON.stringify(flags.forward)}`);
    return EXIT_USAGE;
  }
  const encoding: OtlpEncoding = flags.forwardProtocol === 'http/json' ? 'json' : 'protobuf';
  const env = io.env;
  const telemetry = telemetryProviders(env, flags.forward, encoding, version);
  const server = new LoopwatchServer({
    host: flags.host,
    port: flags.port,
    forward: flags.forward,
    forwardProtocol: encoding,
    traceWaitMs: flags.traceWait,
    ...optionalInt(env, 'LOOPWATCH_SERVE_QUIET_AFTER_ROOT_MS', 'quietAfterRootMs'),
    ...optionalInt(env, 'LOOPWATCH_SERVE_MAX_HELD_SPANS', 'maxHeldSpans'),
    ...optionalInt(env, 'LOOPWATCH_SERVE_MAX_QUEUED_SPANS', 'maxQueuedSpans'),
    ...optionalInt(env, 'LOOPWATCH_SERVE_FORWARD_MAX_ELAPSED_MS', 'forwardMaxElapsedMs'),
    config,
    version,
    ...(telemetry.meterProvider ? { meterProvider: telemetry.meterProvider } : {}),
    ...(telemetry.loggerProvider ? { loggerProvider: telemetry.loggerProvider } : {}),
    log: (level, message) => say(`${level}: ${message}`),
  });
  let address;
  try {
    address = await server.listen();
  } catch (e) {
    say(`cannot listen on ${flags.host}:${flags.port}: ${e instanceof Error ? e.message : String(e)}`);
    await server.close(0);
    await telemetry.shutdown();
    return EXIT_USAGE;
  }
  say(
    `listening on ${address.host}:${address.port} (OTLP/HTTP POST /v1/traces, OTLP/gRPC, GET /healthz); forwarding to ${server.forwardUrl} as ${flags.forwardProtocol}; ` +
      `trace wait ${flags.traceWait} ms; metrics ${telemetry.describe.metrics}; log records ${telemetry.describe.logs}`,
  );
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  say(`${signal}: forwarding what is held, then stopping`);
  const left = await server.close(Number(env.LOOPWATCH_SERVE_SHUTDOWN_GRACE_MS ?? 30_000));
  await telemetry.shutdown();
  const s = server.stats;
  say(`stopped: ${s.receivedSpans} spans received, ${s.forwardedSpans} forwarded, ${s.droppedSpans + left} not forwarded; ${s.completedTraces} traces, ${s.toolCalls} tool calls, ${s.detections} detections`);
  return left > 0 ? EXIT_UNFORWARDED : EXIT_CLEAN;
}

function optionalInt<K extends string>(env: CliIo['env'], name: string, key: K): Partial<Record<K, number>> {
  const v = env[name];
  if (v === undefined || v === '') return {};
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive whole number, got ${JSON.stringify(v)}`);
  return { [key]: n } as Partial<Record<K, number>>;
}

/**
 * serve's own metrics and log records, through the OpenTelemetry SDK: OTLP to the same
 * downstream as the spans (`URL/v1/metrics`, `URL/v1/logs`) unless the standard variables say
 * otherwise (OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER = none; OTEL_EXPORTER_OTLP_*_ENDPOINT;
 * OTEL_METRIC_EXPORT_INTERVAL, 10 s here). Counters are cumulative, so they are exact whatever
 * the collector does with batches.
 */
function telemetryProviders(env: CliIo['env'], forward: string, encoding: OtlpEncoding, version: string) {
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME ?? 'loopwatch-serve',
    [ATTR_SERVICE_VERSION]: version,
    [ATTR_SERVICE_INSTANCE_ID]: randomUUID(),
  });
  const base = forward.replace(/\/+$/, '');
  const metricsOn = (env.OTEL_METRICS_EXPORTER ?? 'otlp') !== 'none';
  const logsOn = (env.OTEL_LOGS_EXPORTER ?? 'otlp') !== 'none';
  const metricsUrl = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? `${base}/v1/metrics`;
  const logsUrl = env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT ?? `${base}/v1/logs`;
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL ?? 10_000);
  const meterProvider = metricsOn
    ? new MeterProvider({
        resource,
        readers: [
          new PeriodicExportingMetricReader({
            exporter: encoding === 'json' ? new JsonMetricExporter({ url: metricsUrl }) : new ProtoMetricExporter({ url: metricsUrl }),
            exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : 10_000,
          }),
        ],
      })
    : undefined;
  const loggerProvider = logsOn
    ? new LoggerProvider({
        resource,
        processors: [new BatchLogRecordProcessor({ exporter: encoding === 'json' ? new JsonLogExporter({ url: logsUrl }) : new ProtoLogExporter({ url: logsUrl }) })],
      })
    : undefined;
  return {
    meterProvider,
    loggerProvider,
    describe: { metrics: meterProvider ? `to ${metricsUrl}` : 'off', logs: loggerProvider ? `to ${logsUrl}` : 'off' },
    async shutdown(): Promise<void> {
      await Promise.allSettled([meterProvider?.shutdown(), loggerProvider?.shutdown()]);
    },
  };
}
