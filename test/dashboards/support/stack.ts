/**
 * The end-to-end stack for the dashboard tests, built from the collector issue's harness
 * (test/e2e/support): the real collector gateway, a real Prometheus configured like
 * dashboards/provisioning/prometheus/prometheus.yml (its rule_files, evaluated every second), and
 * instrumented agent apps whose traffic runs in phases so that windows can cover some phases and
 * not others.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { PROVISIONING_FILES } from '../../../dashboards/src/provisioning.js';
import { createAgentApp, type AgentApp } from '../../e2e/support/agent-app.js';
import { emitRun, type RunSpec } from '../../e2e/support/agent-traffic.js';
import { startGateway, type Gateway } from '../../e2e/support/collector.js';
import { expectEventuallyEqual } from '../../e2e/support/expect-eventually.js';
import { rulesWithInterval, startPrometheus, type PrometheusServer } from '../../e2e/support/prometheus.js';
import {
  countsFromVector,
  DETECTION_LABELS,
  expectedDetections,
  expectedLoopCost,
  expectedLoopTokens,
  expectedToolCalls,
  LOOP_COST_LABELS,
  LOOP_TOKEN_LABELS,
  roundedValues,
  TOOL_CALL_LABELS,
} from '../../e2e/support/truth.js';
import { REPO_ROOT } from './dashboard-json.js';
import { PromApi } from './prom-api.js';
import { Truth, type Phase } from './truth.js';
import type { RunRecord } from '../../e2e/support/agent-traffic.js';

/** Rule files of the shipped Prometheus config, as absolute paths (Prometheus resolves them from the config's folder). */
export function shippedRuleFiles(): string[] {
  const file = join(REPO_ROOT, PROVISIONING_FILES.prometheus);
  const config = parse(readFileSync(file, 'utf8')) as { rule_files?: string[] };
  return (config.rule_files ?? []).map((r) => resolve(dirname(file), r));
}

/** The agent apps' service.name values (exported_job in Prometheus); runs alternate between them. */
export const SERVICES = ['agent-worker', 'agent-batch'] as const;

export class DashboardStack {
  readonly truth = new Truth();
  readonly phases: Phase[] = [];
  private readonly runs: RunRecord[] = [];

  private constructor(
    readonly gateway: Gateway,
    readonly prometheus: PrometheusServer,
    readonly api: PromApi,
    readonly apps: readonly AgentApp[],
  ) {}

  static async start(runDir: string): Promise<DashboardStack> {
    const gateway = await startGateway({ name: 'gateway', runDir, samplePercent: 0 });
    let prometheus: PrometheusServer | undefined;
    try {
      // The shipped rules, evaluated every second instead of 30 s so alerts show within the test.
      const rules = shippedRuleFiles().map((f) => rulesWithInterval(f, runDir, '1s'));
      prometheus = await startPrometheus({ name: 'prometheus', runDir, targets: [gateway.metricsTarget], ruleFiles: rules });
      await prometheus.waitForTargetsUp(1);
    } catch (e) {
      await Promise.allSettled([gateway.stop(), prometheus?.stop()]);
      throw e;
    }
    // Two services: every contract series exists once per service, so the panels must sum them
    // (or pick one by $service), and the alerts fire per service.
    const apps = SERVICES.map((serviceName) => createAgentApp({ serviceName, otlpTracesUrl: gateway.otlpHttpUrl }));
    return new DashboardStack(gateway, prometheus, new PromApi(prometheus.url), apps);
  }

  /** Emits the runs, then waits until Prometheus holds exactly everything sent so far. */
  async phase(name: Phase, specs: readonly RunSpec[]): Promise<void> {
    const before = this.apps.map((a) => a.detections.length);
    const summariesBefore = this.apps.map((a) => a.summaries.length);
    const emitted = Date.now();
    const runs = specs.map((spec, i) => {
      const index = i % this.apps.length;
      const app = this.apps[index];
      if (!app) throw new Error('no agent app');
      return { run: emitRun(app.tracer, spec), service: SERVICES[index] ?? '' };
    });
    await Promise.all(this.apps.map((a) => a.flush()));
    this.runs.push(...runs.map((r) => r.run));
    SERVICES.forEach((service, i) => {
      this.truth.addRuns(name, service, runs.filter((r) => r.service === service).map((r) => r.run));
      this.truth.addDetections(name, service, this.apps[i]?.detections.slice(before[i]) ?? []);
      this.truth.addSummaries(name, service, this.apps[i]?.summaries.slice(summariesBefore[i]) ?? []);
    });
    this.phases.push(name);
    const allDetections = this.apps.flatMap((a) => a.detections);
    const allSummaries = this.apps.flatMap((a) => a.summaries);
    await expectEventuallyEqual(
      async () => countsFromVector(await this.prometheus.query(`sum by (${DETECTION_LABELS.join(', ')}) (gen_ai_tool_loop_detections_total)`), DETECTION_LABELS),
      expectedDetections(allDetections),
      { timeoutMs: 30_000, what: `loop detections in Prometheus after phase ${name}` },
    );
    await expectEventuallyEqual(
      async () => countsFromVector(await this.prometheus.query(`sum by (${TOOL_CALL_LABELS.join(', ')}) (gen_ai_tool_calls_total)`), TOOL_CALL_LABELS),
      expectedToolCalls(this.runs),
      { timeoutMs: 30_000, what: `tool calls in Prometheus after phase ${name}` },
    );
    await expectEventuallyEqual(
      async () => countsFromVector(await this.prometheus.query(`sum by (${LOOP_TOKEN_LABELS.join(', ')}) (gen_ai_tool_loop_tokens_total)`), LOOP_TOKEN_LABELS),
      expectedLoopTokens(allSummaries),
      { timeoutMs: 30_000, what: `loop tokens in Prometheus after phase ${name}` },
    );
    await expectEventuallyEqual(
      async () => roundedValues(countsFromVector(await this.prometheus.query(`sum by (${LOOP_COST_LABELS.join(', ')}) (gen_ai_tool_loop_cost_usd_total)`), LOOP_COST_LABELS)),
      expectedLoopCost(allSummaries),
      { timeoutMs: 30_000, what: `loop cost in Prometheus after phase ${name}` },
    );
    this.truth.phaseTimes.set(name, { emitted, visible: Date.now() });
    for (const app of this.apps) if (app.exporter.failures.length > 0) throw new Error(`export failed: ${app.exporter.failures.join('; ')}`);
  }

  /** Timestamp (epoch ms) of the gateway's latest scrape (all series of a scrape share it). */
  async lastScrape(): Promise<number> {
    const now = Date.now() / 1000;
    const series = await this.api.samples('up{job="loopwatch-gateway"}[10s]', now);
    const last = series[0]?.values.at(-1)?.[0];
    if (last === undefined) throw new Error('no scrape of the gateway in the last 10 s');
    return Math.round(last * 1000);
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.apps.map((a) => a.shutdown()));
    await Promise.allSettled([this.gateway.stop(), this.prometheus.stop()]);
  }
}
