import type { LoopDetectionSpanProcessor } from '../processor.js';
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
export function startNodeSdk(loops: LoopDetectionSpanProcessor, env: Readonly<Record<string, string | undefined>>): { sdk: Startable; describe: string } {
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
  return { sdk, describe: `NodeSDK, traces to ${processors.names.join(', ') || 'nowhere'}${instrumentations ? ', auto-instrumentations on' : ''}` };
}

interface TraceSdk {
  BatchSpanProcessor: Ctor<unknown>;
  SimpleSpanProcessor: Ctor<unknown>;
  ConsoleSpanExporter: Ctor<unknown>;
}

function exportProcessors(env: Readonly<Record<string, string | undefined>>, fromSdk: (id: string) => unknown): { list: unknown[]; names: string[] } {
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
  const kinds = (env['OTEL_TRACES_EXPORTER'] ?? 'otlp').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const kind of new Set(kinds)) {
    if (kind === 'none') continue;
    if (kind === 'otlp') {
      const protocol = (env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? 'http/protobuf').trim();
      const pkg = protocol === 'grpc' ? 'exporter-trace-otlp-grpc' : protocol === 'http/json' ? 'exporter-trace-otlp-http' : 'exporter-trace-otlp-proto';
      const { OTLPTraceExporter } = fromSdk(`@opentelemetry/${pkg}`) as { OTLPTraceExporter: Ctor<unknown> };
      list.push(wrap(trace.BatchSpanProcessor, new OTLPTraceExporter()));
      names.push(`otlp (${protocol})`);
    } else if (kind === 'console') {
      list.push(wrap(trace.SimpleSpanProcessor, new trace.ConsoleSpanExporter()));
      names.push('console');
    } else if (kind === 'zipkin') {
      const { ZipkinExporter } = fromSdk('@opentelemetry/exporter-zipkin') as { ZipkinExporter: Ctor<unknown> };
      list.push(wrap(trace.BatchSpanProcessor, new ZipkinExporter()));
      names.push('zipkin');
    } else {
      throw new Error(`OTEL_TRACES_EXPORTER: '${kind}' is not supported (otlp, console, zipkin, none)`);
    }
  }
  return { list, names };
}

function autoInstrumentations(): unknown {
  if (appResolve('@opentelemetry/auto-instrumentations-node') === undefined) return undefined;
  const { getNodeAutoInstrumentations } = appRequire('@opentelemetry/auto-instrumentations-node') as { getNodeAutoInstrumentations: () => unknown };
  return getNodeAutoInstrumentations();
}
