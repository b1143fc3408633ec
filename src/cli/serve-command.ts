import type { Command } from 'commander';
import { Option } from 'commander';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '../conventions/attributes.js';
import { ConfigError, type LoopwatchConfig } from '../detector/config/index.js';
import { LoopEngine } from '../detector/engine.js';
import type { OtlpEncoding } from '../formats/protobuf/codec.js';
import { parseHeader, type Credentials } from '../serve/auth.js';
import { ReportingExporter } from '../serve/reporting-exporter.js';
import { formatLimit, LIMITS, parseLimit, resolveLimits, type LimitName, type LimitSpec } from '../serve/limits.js';
import { LOG_FORMATS, ServeLog, type LogFormat } from '../serve/log.js';
import { DEFAULT_FORWARD_URL, DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT, LoopwatchServer } from '../serve/server.js';
import { ConfigFileError, loadConfigFile } from '../formats/config-file.js';
import type { CliIo } from './io.js';

type ServeFlags = Partial<Record<LimitName, number>> & {
  host: string;
  port: number;
  forward?: string;
  forwardProtocol: 'http/protobuf' | 'http/json';
  config?: string;
  spool?: string;
  logFormat?: string;
  tlsCert?: string;
  tlsKey?: string;
  bearerTokenFile?: string;
  requireHeader?: string;
};

const EXIT_CLEAN = 0;
const EXIT_USAGE = 2;
/** Shut down with spans the downstream did not take. */
const EXIT_UNFORWARDED = 1;

/** Span-count limits of earlier versions, replaced by the one byte limit. */
const REPLACED_ENV = ['LOOPWATCH_SERVE_MAX_HELD_SPANS', 'LOOPWATCH_SERVE_MAX_QUEUED_SPANS'];

function positiveInt(what: string, max: number): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1 || n > max) throw new Error(`${what} must be a whole number from 1 to ${max}, got ${JSON.stringify(v)}`);
    return n;
  };
}

function limitOption(spec: LimitSpec): Option {
  const value = spec.unit === 'bytes' ? '<size>' : spec.unit === 'ms' ? '<ms>' : '<n>';
  return new Option(`${spec.flag} ${value}`, `${spec.help} (default ${formatLimit(spec.unit, spec.default)}; ${spec.env})`).argParser((v) => parseLimit(spec, v, spec.flag));
}

/**
 * `loopwatch serve`: the DESIGN.md contract's flags first, then every limit (each also an
 * environment variable), the spool, the log format and what secures a receiver reached over a
 * network (TLS, a bearer token or a header).
 */
export function addServeCommand(program: Command, io: CliIo, setExit: (code: number) => void, version: string): void {
  const command = program
    .command('serve')
    .description('OTLP endpoint for agents in any language: holds each trace until it is complete, adds loop.detected events, forwards every span (at least once).')
    .option('--host <host>', 'address to listen on', DEFAULT_SERVE_HOST)
    .option('--port <port>', 'port for OTLP/HTTP (POST /v1/traces, GET /healthz, GET /livez) and OTLP/gRPC', positiveInt('--port', 65535), DEFAULT_SERVE_PORT)
    .option('--forward <url>', `base URL of the downstream OTLP/HTTP endpoint; spans go to URL/v1/traces (default ${DEFAULT_FORWARD_URL})`)
    .addOption(new Option('--forward-protocol <protocol>', 'encoding towards the downstream').choices(['http/protobuf', 'http/json']).default('http/protobuf'))
    .addOption(limitOption(LIMITS.traceWait))
    .option('--config <file>', 'loopwatch configuration (YAML or JSON), the same as for the processor and scan')
    .option('--spool <dir>', 'keep accepted spans on disk until forwarded: they survive a kill and a restart (LOOPWATCH_SERVE_SPOOL_DIR)')
    .addOption(new Option('--log-format <format>', 'stderr lines: human, or one JSON object per line (LOOPWATCH_SERVE_LOG_FORMAT)').choices([...LOG_FORMATS]))
    .option('--tls-cert <file>', 'PEM certificate chain: the port speaks TLS (LOOPWATCH_SERVE_TLS_CERT)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert (LOOPWATCH_SERVE_TLS_KEY)')
    .option('--bearer-token-file <file>', 'requests must carry "Authorization: Bearer <the file\'s content>" (LOOPWATCH_SERVE_BEARER_TOKEN holds the token itself)')
    .option('--require-header <header>', 'requests must carry this header, as "name: value" (LOOPWATCH_SERVE_REQUIRE_HEADER)');
  for (const [name, spec] of Object.entries(LIMITS) as [LimitName, LimitSpec][]) if (name !== 'traceWait') command.addOption(limitOption(spec));
  command.action(async (flags: ServeFlags) => setExit(await runServe(flags, io, version)));
}

async function runServe(flags: ServeFlags, io: CliIo, version: string): Promise<number> {
  const env = io.env;
  const logFormat = (flags.logFormat ?? env.LOOPWATCH_SERVE_LOG_FORMAT ?? 'human') as LogFormat;
  if (!LOG_FORMATS.includes(logFormat)) return usage(io, `LOOPWATCH_SERVE_LOG_FORMAT must be human or json, got ${JSON.stringify(logFormat)}`);
  const log = new ServeLog(logFormat, (line) => void io.stderr.write(`${line}\n`));
  const say = (text: string): void => log.log('info', text);
  let config: LoopwatchConfig = {};
  if (flags.config) {
    try {
      config = await loadConfigFile(flags.config);
      new LoopEngine(config);
    } catch (e) {
      if (e instanceof ConfigFileError || e instanceof ConfigError) return usage(io, `bad configuration\n${e.message}`);
      throw e;
    }
  }
  const forward = flags.forward ?? DEFAULT_FORWARD_URL;
  try {
    new URL(forward);
  } catch {
    return usage(io, `--forward must be a URL such as http://127.0.0.1:4318, got ${JSON.stringify(forward)}`);
  }
  let limits;
  let security: { tls?: { cert: Buffer; key: Buffer }; credentials: Credentials; forwardHeaders: Record<string, string> };
  try {
    limits = resolveLimits(flags, env);
    security = securityOf(flags, env);
  } catch (e) {
    return usage(io, e instanceof Error ? e.message : String(e));
  }
  for (const name of REPLACED_ENV) {
    if (env[name]) log.log('warn', `${name} is no longer read: memory is bounded in bytes by ${LIMITS.maxMemory.flag} (${LIMITS.maxMemory.env}), now ${formatLimit('bytes', limits.maxMemory)}`);
  }
  const encoding: OtlpEncoding = flags.forwardProtocol === 'http/json' ? 'json' : 'protobuf';
  // a spool writes counts down once their export succeeded (see SpoolLedger)
  let countsExported = (_collectedAt: number): void => undefined;
  const telemetry = await telemetryProviders(env, forward, encoding, version, (at) => countsExported(at));
  const spoolDir = flags.spool ?? (env.LOOPWATCH_SERVE_SPOOL_DIR || undefined);
  const server = new LoopwatchServer({
    host: flags.host,
    port: flags.port,
    forward,
    forwardProtocol: encoding,
    forwardHeaders: security.forwardHeaders,
    limits,
    config,
    version,
    ...(spoolDir !== undefined ? { spoolDir } : {}),
    ...(security.tls ? { tls: security.tls } : {}),
    credentials: security.credentials,
    ...(telemetry.meterProvider ? { meterProvider: telemetry.meterProvider, countsExportedLater: true } : {}),
    ...(telemetry.loggerProvider ? { loggerProvider: telemetry.loggerProvider } : {}),
    log: (level, message) => log.log(level, message),
    onDetection: (d) => log.detection(d),
  });
  countsExported = (at) => server.countsExported(at);
  let address;
  try {
    address = await server.listen();
  } catch (e) {
    log.log('error', `cannot listen on ${flags.host}:${flags.port}${spoolDir ? ` or open the spool ${spoolDir}` : ''}: ${e instanceof Error ? e.message : String(e)}`);
    await server.close(0);
    await telemetry.shutdown();
    return EXIT_USAGE;
  }
  say(
    `listening on ${address.host}:${address.port}${security.tls ? ' (TLS)' : ''} (OTLP/HTTP POST /v1/traces, OTLP/gRPC, GET /healthz, GET /livez)` +
      `${security.credentials.bearerToken !== undefined || security.credentials.header ? '; credentials required' : ''}; memory ${formatLimit('bytes', limits.maxMemory)}; ` +
      `trace wait ${limits.traceWait} ms; spool ${spoolDir ?? 'off (spans held or queued are lost if the process is killed)'}; metrics ${telemetry.describe.metrics}; log records ${telemetry.describe.logs}`,
  );
  const probe = await server.probeForward();
  const target = `forwarding to ${server.forwardUrl} as ${flags.forwardProtocol}${flags.forward === undefined ? ' (the default: set --forward)' : ''}`;
  if (probe.ok) say(`${target}: it answered in ${probe.ms} ms`);
  else log.log('warn', `${target}: it did not answer (${probe.why}); spans are held and retried until it does`);
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  say(`${signal}: no new data (503); forwarding what is held for up to ${limits.shutdownGrace} ms`);
  const left = await server.close(limits.shutdownGrace);
  // the last export writes its counts down in the spool: closed after it
  await telemetry.shutdown();
  server.closeSpool();
  const s = server.stats;
  const kept = server.spool && left > 0 ? ` (kept in the spool ${server.spool.dir} for the next start)` : '';
  log.log(
    left > 0 || s.droppedSpans > 0 ? 'error' : 'info',
    `stopped: ${s.receivedSpans} spans received, ${s.forwardedSpans} forwarded, ${s.droppedSpans + left} not forwarded${kept}; ${s.completedTraces} traces, ${s.toolCalls} tool calls, ${s.detections} detections`,
    { receivedSpans: s.receivedSpans, forwardedSpans: s.forwardedSpans, notForwarded: s.droppedSpans + left },
  );
  return left > 0 ? EXIT_UNFORWARDED : EXIT_CLEAN;
}

function usage(io: CliIo, message: string): number {
  io.stderr.write(`loopwatch serve: ${message}\n`);
  return EXIT_USAGE;
}

/** TLS files, the credentials asked of clients, and the headers sent to the downstream. */
function securityOf(flags: ServeFlags, env: CliIo['env']) {
  const certFile = flags.tlsCert ?? (env.LOOPWATCH_SERVE_TLS_CERT || undefined);
  const keyFile = flags.tlsKey ?? (env.LOOPWATCH_SERVE_TLS_KEY || undefined);
  if ((certFile === undefined) !== (keyFile === undefined)) throw new Error('--tls-cert and --tls-key go together');
  const read = (file: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new Error(`cannot read the ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
  };
  const tls = certFile !== undefined && keyFile !== undefined ? { cert: read(certFile, '--tls-cert'), key: read(keyFile, '--tls-key') } : undefined;
  const token = flags.bearerTokenFile !== undefined ? read(flags.bearerTokenFile, '--bearer-token-file').toString('utf8').trim() : env.LOOPWATCH_SERVE_BEARER_TOKEN || undefined;
  if (token !== undefined && !/^\S+$/.test(token)) throw new Error('the bearer token must be one word without spaces');
  const headerText = flags.requireHeader ?? (env.LOOPWATCH_SERVE_REQUIRE_HEADER || undefined);
  const header = headerText !== undefined ? parseHeader(headerText, '--require-header') : undefined;
  return {
    ...(tls ? { tls } : {}),
    credentials: { ...(token !== undefined ? { bearerToken: token } : {}), ...(header ? { header } : {}) },
    forwardHeaders: otlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS),
  };
}

/** OTEL_EXPORTER_OTLP_HEADERS: `key=value,key2=value2`, values percent-decoded (the OTLP exporter specification). */
function otlpHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? '').split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    out[part.slice(0, i).trim().toLowerCase()] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}

/**
 * serve's own metrics and log records, through the OpenTelemetry SDK: OTLP to the same
 * downstream as the spans (`URL/v1/metrics`, `URL/v1/logs`) unless the standard variables say
 * otherwise (OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER = none; OTEL_EXPORTER_OTLP_*_ENDPOINT;
 * OTEL_METRIC_EXPORT_INTERVAL, 10 s here). Counters are cumulative, so they are exact whatever
 * the collector does with batches.
 */
async function telemetryProviders(env: CliIo['env'], forward: string, encoding: OtlpEncoding, version: string, onExported: (collectedAt: number) => void) {
  // imported when serve starts, and only the encoding in use: the other commands and usage errors start without them
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
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
  const metrics = metricsOn ? await import('@opentelemetry/sdk-metrics') : undefined;
  const metricExporter = !metricsOn
    ? undefined
    : encoding === 'json'
      ? new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter({ url: metricsUrl })
      : new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter({ url: metricsUrl });
  const logs = logsOn ? await import('@opentelemetry/sdk-logs') : undefined;
  const logExporter = !logsOn
    ? undefined
    : encoding === 'json'
      ? new (await import('@opentelemetry/exporter-logs-otlp-http')).OTLPLogExporter({ url: logsUrl })
      : new (await import('@opentelemetry/exporter-logs-otlp-proto')).OTLPLogExporter({ url: logsUrl });
  const meterProvider = metrics && metricExporter
    ? new metrics.MeterProvider({
        resource,
        readers: [
          new metrics.PeriodicExportingMetricReader({
            exporter: new ReportingExporter(metricExporter, onExported),
            exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : 10_000,
          }),
        ],
      })
    : undefined;
  const loggerProvider = logs && logExporter
    ? new logs.LoggerProvider({
        resource,
        processors: [new logs.BatchLogRecordProcessor({ exporter: logExporter })],
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
