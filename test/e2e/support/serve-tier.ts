import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCollector, type CollectorProcess } from './collector.js';
import { REPO_ROOT, SERVE_GATEWAY_CONFIG, SERVE_GATEWAY_FILE_EXPORT_OVERLAY } from './paths.js';
import { freePorts } from './ports.js';
import { httpGet, startProcess, waitFor, type ManagedProcess } from './process.js';

export const PYTHON_AGENT = join(REPO_ROOT, 'test', 'e2e', 'python', 'agent.py');

export interface ServeGateway extends CollectorProcess {
  /** Base URL for `loopwatch serve --forward`. */
  readonly otlpHttpBase: string;
  readonly metricsTarget: string;
  readonly sampledFile: string;
  readonly logsFile: string;
  /** Every span the gateway received, before sampling (a test-only pipeline). */
  readonly allTracesFile: string;
}

/** serve-gateway.yaml + its file-export overlay + a test overlay writing every received span to a file. */
export async function startServeGateway(options: { name: string; runDir: string; samplePercent: number }): Promise<ServeGateway> {
  const [grpc, http, prom, health, telemetry] = (await freePorts(5)) as [number, number, number, number, number];
  const sampledFile = join(options.runDir, `${options.name}.sampled-traces.jsonl`);
  const logsFile = join(options.runDir, `${options.name}.log-records.jsonl`);
  const allTracesFile = join(options.runDir, `${options.name}.all-traces.jsonl`);
  mkdirSync(options.runDir, { recursive: true });
  const overlay = join(options.runDir, `${options.name}.all-traces.yaml`);
  writeFileSync(
    overlay,
    [
      'exporters:',
      '  file/all:',
      `    path: ${allTracesFile}`,
      '    format: json',
      '    flush_interval: 200ms',
      'service:',
      '  pipelines:',
      '    traces/all:',
      '      receivers: [otlp]',
      '      exporters: [file/all]',
      '',
    ].join('\n'),
  );
  const collector = await startCollector({
    name: options.name,
    configs: [SERVE_GATEWAY_CONFIG, SERVE_GATEWAY_FILE_EXPORT_OVERLAY, overlay],
    env: {
      LOOPWATCH_OTLP_GRPC_ENDPOINT: `127.0.0.1:${grpc}`,
      LOOPWATCH_OTLP_HTTP_ENDPOINT: `127.0.0.1:${http}`,
      LOOPWATCH_PROMETHEUS_ENDPOINT: `127.0.0.1:${prom}`,
      LOOPWATCH_SAMPLED_TRACES_FILE: sampledFile,
      LOOPWATCH_LOG_RECORDS_FILE: logsFile,
      LOOPWATCH_SAMPLE_PERCENT: String(options.samplePercent),
      LOOPWATCH_DECISION_WAIT: '3s',
      LOOPWATCH_DECISION_WAIT_AFTER_ROOT: '1s',
    },
    healthPort: health,
    telemetryPort: telemetry,
    runDir: options.runDir,
  });
  return { ...collector, otlpHttpBase: `http://127.0.0.1:${http}`, metricsTarget: `127.0.0.1:${prom}`, sampledFile, logsFile, allTracesFile };
}

export interface ServeStatsView {
  readonly receivedSpans: number;
  readonly heldSpans: number;
  readonly openTraces: number;
  readonly completedTraces: number;
  readonly forwardedSpans: number;
  readonly droppedSpans: number;
  readonly queuedSpans: number;
  readonly detections: number;
  readonly toolCalls: number;
  readonly spoolReplayedSpans?: number;
}

export interface ServeInstance {
  readonly process: ManagedProcess;
  readonly port: number;
  /** host:port for the load balancer (OTLP/gRPC on the same port). */
  readonly endpoint: string;
  stats(): Promise<ServeStatsView | undefined>;
  stop(): Promise<void>;
}

/** `loopwatch serve` from the built CLI (packages/cli/dist/cli.js), waiting until /healthz answers 200. */
export async function startServe(options: { name: string; runDir: string; forward: string; port?: number; traceWaitMs?: number; spoolDir?: string; env?: Record<string, string> }): Promise<ServeInstance> {
  const port = options.port ?? (await freePorts(1))[0];
  if (port === undefined) throw new Error('no free port');
  const proc = startProcess({
    name: options.name,
    command: process.execPath,
    args: [
      join(REPO_ROOT, 'packages', 'cli', 'dist', 'cli.js'),
      'serve',
      '--port',
      String(port),
      '--forward',
      options.forward,
      '--trace-wait',
      String(options.traceWaitMs ?? 5_000),
      ...(options.spoolDir !== undefined ? ['--spool', options.spoolDir] : []),
    ],
    env: { ...process.env, OTEL_METRIC_EXPORT_INTERVAL: '1000', ...options.env },
    logFile: join(options.runDir, `${options.name}.log`),
  });
  const url = `http://127.0.0.1:${port}/healthz`;
  await waitFor(async () => ((await httpGet(url))?.status === 200 ? true : undefined), { timeoutMs: 20_000, what: `${options.name} ${url}`, processes: [proc] });
  return {
    process: proc,
    port,
    endpoint: `127.0.0.1:${port}`,
    async stats() {
      const res = await httpGet(url);
      return res ? (JSON.parse(res.body) as ServeStatsView) : undefined;
    },
    stop: () => proc.stop(),
  };
}

/** The Python of the venv made by scripts/setup/50-python.sh (npm test runs it). */
export function pythonForE2e(): string {
  try {
    return execFileSync('bash', [join(REPO_ROOT, 'scripts', 'setup', '50-python.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (e) {
    throw new Error(`the Python venv for the serve e2e is missing: run \`bash scripts/setup/50-python.sh\` (npm test does). ${e instanceof Error ? e.message : String(e)}`);
  }
}
