import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts } from './ports.js';
import { collectorBinary, GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY, LOAD_BALANCER_CONFIG } from './paths.js';
import { httpGet, startProcess, waitFor, type ManagedProcess } from './process.js';

export interface CollectorProcess {
  readonly process: ManagedProcess;
  readonly healthUrl: string;
  /** The collector's own metrics (otelcol_*). */
  readonly telemetryUrl: string;
  stop(): Promise<void>;
}

interface StartCollectorOptions {
  readonly name: string;
  readonly configs: readonly string[];
  readonly env: Record<string, string>;
  readonly healthPort: number;
  readonly telemetryPort: number;
  readonly runDir: string;
  readonly detached?: boolean;
}

/** Starts the built collector and waits until its health check says it is ready. */
export async function startCollector(options: StartCollectorOptions): Promise<CollectorProcess> {
  mkdirSync(options.runDir, { recursive: true });
  const healthUrl = `http://127.0.0.1:${options.healthPort}/`;
  const proc = startProcess({
    name: options.name,
    command: collectorBinary(),
    args: options.configs.flatMap((c) => ['--config', c]),
    env: {
      ...process.env,
      ...options.env,
      LOOPWATCH_HEALTH_ENDPOINT: `127.0.0.1:${options.healthPort}`,
      LOOPWATCH_TELEMETRY_HOST: '127.0.0.1',
      LOOPWATCH_TELEMETRY_PORT: String(options.telemetryPort),
    },
    logFile: join(options.runDir, `${options.name}.log`),
    ...(options.detached !== undefined ? { detached: options.detached } : {}),
  });
  await waitFor(async () => ((await httpGet(healthUrl))?.status === 200 ? true : undefined), {
    timeoutMs: 30_000,
    what: `${options.name} health check ${healthUrl}`,
    processes: [proc],
  });
  return {
    process: proc,
    healthUrl,
    telemetryUrl: `http://127.0.0.1:${options.telemetryPort}/metrics`,
    stop: () => proc.stop(),
  };
}

export interface Gateway extends CollectorProcess {
  readonly otlpHttpUrl: string;
  readonly otlpGrpcEndpoint: string;
  /** host:port of the prometheus exporter, a scrape target. */
  readonly metricsTarget: string;
  /** JSON Lines file of the sampled traces (the file-export overlay). */
  readonly sampledFile: string;
}

export interface GatewayOptions {
  readonly name: string;
  readonly runDir: string;
  /** Share (percent) of traces without loop or error that tail sampling keeps. */
  readonly samplePercent: number;
  readonly detached?: boolean;
}

/** gateway.yaml + the file-export overlay on free loopback ports, with short sampling timers. */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const [grpc, http, prom, health, telemetry] = (await freePorts(5)) as [number, number, number, number, number];
  const sampledFile = join(options.runDir, `${options.name}.sampled-traces.jsonl`);
  const collector = await startCollector({
    name: options.name,
    configs: [GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY],
    env: {
      LOOPWATCH_OTLP_GRPC_ENDPOINT: `127.0.0.1:${grpc}`,
      LOOPWATCH_OTLP_HTTP_ENDPOINT: `127.0.0.1:${http}`,
      LOOPWATCH_PROMETHEUS_ENDPOINT: `127.0.0.1:${prom}`,
      LOOPWATCH_SAMPLED_TRACES_FILE: sampledFile,
      LOOPWATCH_SAMPLE_PERCENT: String(options.samplePercent),
      // Test runs end within seconds: decide 1 s after the root span, at most 5 s after the first span.
      LOOPWATCH_DECISION_WAIT: '5s',
      LOOPWATCH_DECISION_WAIT_AFTER_ROOT: '1s',
    },
    healthPort: health,
    telemetryPort: telemetry,
    runDir: options.runDir,
    ...(options.detached !== undefined ? { detached: options.detached } : {}),
  });
  return {
    ...collector,
    otlpHttpUrl: `http://127.0.0.1:${http}/v1/traces`,
    otlpGrpcEndpoint: `127.0.0.1:${grpc}`,
    metricsTarget: `127.0.0.1:${prom}`,
    sampledFile,
  };
}

export interface LoadBalancer extends CollectorProcess {
  readonly otlpHttpUrl: string;
}

/** load-balancer.yaml on free loopback ports, routing to the given gateways' OTLP/gRPC endpoints. */
export async function startLoadBalancer(options: { name: string; runDir: string; gateways: readonly string[] }): Promise<LoadBalancer> {
  const [grpc, http, health, telemetry] = (await freePorts(4)) as [number, number, number, number];
  const collector = await startCollector({
    name: options.name,
    configs: [LOAD_BALANCER_CONFIG],
    env: {
      LOOPWATCH_OTLP_GRPC_ENDPOINT: `127.0.0.1:${grpc}`,
      LOOPWATCH_OTLP_HTTP_ENDPOINT: `127.0.0.1:${http}`,
      // A YAML list in one variable, as an operator would pass it.
      LOOPWATCH_GATEWAYS: `[${options.gateways.join(', ')}]`,
    },
    healthPort: health,
    telemetryPort: telemetry,
    runDir: options.runDir,
  });
  return { ...collector, otlpHttpUrl: `http://127.0.0.1:${http}/v1/traces` };
}
