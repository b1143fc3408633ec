import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { freePorts } from './ports.js';
import { requireTool } from './paths.js';
import { httpGet, startProcess, waitFor, type ManagedProcess } from './process.js';

export interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: number;
}

export interface PrometheusServer {
  readonly process: ManagedProcess;
  readonly url: string;
  /** Instant query; throws on a PromQL or HTTP error. */
  query(expr: string): Promise<PromSample[]>;
  /** Resolves when every scrape target is up. */
  waitForTargetsUp(count: number): Promise<void>;
  stop(): Promise<void>;
}

interface PromApiResponse<T> {
  readonly status: 'success' | 'error';
  readonly data?: T;
  readonly error?: string;
}

interface VectorData {
  readonly resultType: string;
  readonly result: { metric: Record<string, string>; value: [number, string] }[];
}

interface TargetsData {
  readonly activeTargets: { health: string; lastError: string; scrapeUrl: string }[];
}

export interface PrometheusOptions {
  readonly name: string;
  readonly runDir: string;
  /** host:port targets serving /metrics (the gateways' prometheus exporters). */
  readonly targets: readonly string[];
  readonly ruleFiles?: readonly string[];
  readonly port?: number;
  readonly scrapeInterval?: string;
  readonly detached?: boolean;
}

/**
 * Debian's Prometheus with its own config and data dir on a loopback port (never the package's
 * service). Scrapes every second so tests see a new batch quickly.
 */
export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const binary = requireTool('prometheus');
  const port = options.port ?? (await freePorts(1))[0];
  if (port === undefined) throw new Error('no free port for Prometheus');
  const dir = join(options.runDir, options.name);
  mkdirSync(join(dir, 'data'), { recursive: true });
  const interval = options.scrapeInterval ?? '1s';
  const config = {
    global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
    rule_files: [...(options.ruleFiles ?? [])],
    scrape_configs: [{ job_name: 'loopwatch-gateway', static_configs: [{ targets: [...options.targets] }] }],
  };
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, stringify(config));
  const url = `http://127.0.0.1:${port}`;
  const proc = startProcess({
    name: options.name,
    command: binary,
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1d',
      '--log.level=warn',
    ],
    logFile: join(options.runDir, `${options.name}.log`),
    ...(options.detached !== undefined ? { detached: options.detached } : {}),
  });
  await waitFor(async () => ((await httpGet(`${url}/-/ready`))?.status === 200 ? true : undefined), {
    timeoutMs: 30_000,
    what: `${options.name} at ${url}/-/ready`,
    processes: [proc],
  });

  async function api<T>(path: string): Promise<T> {
    const res = await httpGet(`${url}${path}`);
    if (!res) throw new Error(`${options.name}: no answer from ${path}`);
    const body = JSON.parse(res.body) as PromApiResponse<T>;
    if (body.status !== 'success' || body.data === undefined) throw new Error(`${options.name}: ${path}: ${body.error ?? res.body}`);
    return body.data;
  }

  return {
    process: proc,
    url,
    async query(expr) {
      const data = await api<VectorData>(`/api/v1/query?query=${encodeURIComponent(expr)}`);
      if (data.resultType !== 'vector') throw new Error(`expected an instant vector from ${expr}, got ${data.resultType}`);
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async waitForTargetsUp(count) {
      await waitFor(
        async () => {
          const targets = (await api<TargetsData>('/api/v1/targets')).activeTargets;
          return targets.length === count && targets.every((t) => t.health === 'up') ? true : undefined;
        },
        { timeoutMs: 30_000, what: `${count} healthy scrape target(s) in ${options.name}`, processes: [proc] },
      );
    },
    stop: () => proc.stop(),
  };
}

/**
 * A copy of a rules file whose groups evaluate every `interval` instead of their shipped 30 s, so
 * a test sees alerts within seconds. Expressions, `for` and annotations are untouched.
 */
export function rulesWithInterval(rulesFile: string, runDir: string, interval: string): string {
  const doc = parse(readFileSync(rulesFile, 'utf8')) as { groups?: { interval?: string }[] };
  if (!doc.groups?.length) throw new Error(`${rulesFile}: no rule groups`);
  for (const group of doc.groups) group.interval = interval;
  mkdirSync(runDir, { recursive: true });
  const copy = join(runDir, `fast-${interval}.rules.yml`);
  writeFileSync(copy, stringify(doc));
  return copy;
}
