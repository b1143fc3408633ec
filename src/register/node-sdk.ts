import type { LoopDetectionSpanProcessor } from '../processor/index.js';
import type { ExporterEndpoint } from './exit.js';
import { appRequire, appResolve } from './resolve.js';

interface Startable {
  start(): void;
  shutdown(): Promise<void>;
}
type Ctor<T> = new (...args: unknown[]) => T;

/**
 * Starts `@opentelemetry/sdk-node` with loopwatch in front of the trace exporters the standard
 * `OTEL_*` variables describe. NodeSDK ignores its environment's exporters once `spanProcessors`
 * is given, so they are rebuilt here the way NodeSDK builds them: `OTEL_TRACES_EXPORTER` (comma
 * list of `otlp` (default), `console`, `zipkin`, `none`) and, for OTLP,
 * `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf` (default),
 * `http/json`, `grpc`). Each exporter reads its own endpoint, headers and timeout variables.
 * Everything else (resource, propagators, metrics, logs, `OTEL_SDK_DISABLED`) is NodeSDK's own
 * handling. `@opentelemetry/auto-instrumentations-node` is enabled when the app has it installed
 * (it reads `OTEL_NODE_ENABLED_INSTRUMENTATIONS` / `OTEL_NODE_DISABLED_INSTRUMENTATIONS`).
 */
export function startNodeSdk(
  loops: LoopDetectionSpanProcessor,
  env: Readonly<Record<string, string | undefined>>,
): { sdk: Startable; describe: string; endpoints: ExporterEndpoint[] } {
  const sdkPath = appResolve('@opentelemetry/sdk-node');
  if (sdkPath === undefined) {
    throw new Error("@opentelemetry/sdk-node is not installed: add it to the app (npm i @opentelemetry/sdk-node), or use LOOPWATCH_REGISTER=attach with your own provider");
  }
  const { NodeSDK } = appRequire('@opentelemetry/sdk-node') as { NodeSDK: Ctor<Startable> };
  // The SDK's own dependencies: resolved next to it, so that versions match.
  const fromSdk = (id: string): unknown => appRequire(id, sdkPath);
  const processors = exportProcessors(env, fromSdk);
  const instrumentations = autoInstrumentations();
  const sdk = new NodeSDK({
    spanProcessors: [loops, ...processors.list],
    ...(instrumentations ? { instrumentations: [instrumentations] } : {}),
  });
  sdk.start();
  return {
    sdk,
    describe: `NodeSDK, traces to ${processors.names.join(', ') || 'nowhere'}${instrumentations ? ', auto-instrumentations on' : ''}`,
    endpoints: processors.endpoints,
  };
}

interface TraceSdk {
  BatchSpanProcessor: Ctor<unknown>;
  SimpleSpanProcessor: Ctor<unknown>;
  ConsoleSpanExporter: Ctor<unknown>;
}

/**
 * Where an exporter sends, as the exporters themselves resolve it from the same variables (the
 * OTLP exporter specification's defaults), for the exit-time check in exit.ts. Undefined when
 * the variable holds something that is not a URL: the exporter reports that itself.
 */
function endpointOf(kind: 'http' | 'grpc' | 'zipkin', exporter: string, env: Readonly<Record<string, string | undefined>>): ExporterEndpoint | undefined {
  const pick = (...names: string[]): [string, string] | undefined => {
    for (const n of names) {
      const v = env[n]?.trim();
      if (v) return [n, v];
    }
    return undefined;
  };
  let found: [string, string];
  if (kind === 'zipkin') found = pick('OTEL_EXPORTER_ZIPKIN_ENDPOINT') ?? ['OTEL_EXPORTER_ZIPKIN_ENDPOINT', 'http://localhost:9411/api/v2/spans'];
  else {
    const signal = pick('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
    const base = pick('OTEL_EXPORTER_OTLP_ENDPOINT');
    found = signal ?? (base ? [base[0], kind === 'http' ? `${base[1].replace(/\/$/, '')}/v1/traces` : base[1]] : ['OTEL_EXPORTER_OTLP_ENDPOINT', kind === 'http' ? 'http://localhost:4318/v1/traces' : 'http://localhost:4317']);
  }
  try {
    const url = new URL(found[1].includes('://') ? found[1] : `http://${found[1]}`);
    return { exporter, url, variable: found[0] };
  } catch {
    return undefined;
  }
}

function exportProcessors(env: Readonly<Record<string, string | undefined>>, fromSdk: (id: string) => unknown): { list: unknown[]; names: string[]; endpoints: ExporterEndpoint[] } {
  // sdk-trace (2.9+ and 3.x) takes an options object; the sdk-trace-base shim of older NodeSDKs takes the exporter.
  let trace: TraceSdk;
  let optionsObject = true;
  try {
    trace = fromSdk('@opentelemetry/sdk-trace') as TraceSdk;
  } catch {
    trace = fromSdk('@opentelemetry/sdk-trace-base') as TraceSdk;
    optionsObject = false;
  }
  const wrap = (Processor: Ctor<unknown>, exporter: unknown): unknown => (optionsObject ? new Processor({ exporter }) : new Processor(exporter));
  const list: unknown[] = [];
  const names: string[] = [];
  const endpoints: ExporterEndpoint[] = [];
  const add = (endpoint: ExporterEndpoint | undefined): void => {
    if (endpoint) endpoints.push(endpoint);
  };
  const kinds = (env['OTEL_TRACES_EXPORTER'] ?? 'otlp').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const kind of new Set(kinds)) {
    if (kind === 'none') continue;
    if (kind === 'otlp') {
      const protocol = (env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? 'http/protobuf').trim();
      const pkg = protocol === 'grpc' ? 'exporter-trace-otlp-grpc' : protocol === 'http/json' ? 'exporter-trace-otlp-http' : 'exporter-trace-otlp-proto';
      const { OTLPTraceExporter } = fromSdk(`@opentelemetry/${pkg}`) as { OTLPTraceExporter: Ctor<unknown> };
      list.push(wrap(trace.BatchSpanProcessor, new OTLPTraceExporter()));
      names.push(`otlp (${protocol})`);
      add(endpointOf(protocol === 'grpc' ? 'grpc' : 'http', `otlp (${protocol})`, env));
    } else if (kind === 'console') {
      list.push(wrap(trace.SimpleSpanProcessor, new trace.ConsoleSpanExporter()));
      names.push('console');
    } else if (kind === 'zipkin') {
      const { ZipkinExporter } = fromSdk('@opentelemetry/exporter-zipkin') as { ZipkinExporter: Ctor<unknown> };
      list.push(wrap(trace.BatchSpanProcessor, new ZipkinExporter()));
      names.push('zipkin');
      add(endpointOf('zipkin', 'zipkin', env));
    } else {
      throw new Error(`OTEL_TRACES_EXPORTER: '${kind}' is not supported (otlp, console, zipkin, none)`);
    }
  }
  return { list, names, endpoints };
}

function autoInstrumentations(): unknown {
  if (appResolve('@opentelemetry/auto-instrumentations-node') === undefined) return undefined;
  const { getNodeAutoInstrumentations } = appRequire('@opentelemetry/auto-instrumentations-node') as { getNodeAutoInstrumentations: () => unknown };
  return getNodeAutoInstrumentations();
}
