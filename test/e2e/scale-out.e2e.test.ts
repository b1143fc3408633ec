/**
 * E2E 2: one load-balancing collector (load-balancer.yaml) in front of two gateways
 * (gateway.yaml), all on loopback. Every trace's spans must land on exactly one gateway, and the
 * counters summed over both gateways must equal the app's own truth; per gateway, they must
 * equal the truth of the traces that gateway received.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { createAgentApp, type AgentApp } from './support/agent-app.js';
import { emitRun, trafficRound, type RunRecord } from './support/agent-traffic.js';
import { startGateway, startLoadBalancer, type Gateway, type LoadBalancer } from './support/collector.js';
import { expectEventuallyEqual } from './support/expect-eventually.js';
import { readExportedSpans } from './support/otlp-file.js';
import { RUN_ROOT } from './support/paths.js';
import { startPrometheus, type PrometheusServer } from './support/prometheus.js';
import { countsFromVector, DETECTION_LABELS, expectedDetections, expectedToolCalls, TOOL_CALL_LABELS } from './support/truth.js';

const runDir = join(RUN_ROOT, `scale-out-${process.pid}-${Date.now()}`);
let failed = false;
let gateways: Gateway[] = [];
let balancer: LoadBalancer;
let prom: PrometheusServer;
let apps: AgentApp[] = [];
const runs: RunRecord[] = [];

describe('load-balancer.yaml routing by trace id to two gateways', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    // Gateways keep 100% of the traces here, so their sampled files show where every span went.
    gateways = await Promise.all([0, 1].map((i) => startGateway({ name: `gateway-${i}`, runDir, samplePercent: 100 })));
    balancer = await startLoadBalancer({ name: 'load-balancer', runDir, gateways: gateways.map((g) => g.otlpGrpcEndpoint) });
    prom = await startPrometheus({ name: 'prometheus', runDir, targets: gateways.map((g) => g.metricsTarget) });
    await prom.waitForTargetsUp(2);
    apps = [0, 1].map(() => createAgentApp({ serviceName: 'agent-worker', otlpTracesUrl: balancer.otlpHttpUrl }));
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(apps.map((a) => a.shutdown()));
    await Promise.allSettled([balancer?.stop(), ...gateways.map((g) => g.stop()), prom?.stop()]);
    if (!failed && !process.env.LOOPWATCH_KEEP_RUN) rmSync(runDir, { recursive: true, force: true });
    else console.log(`e2e logs and data kept in ${runDir}`);
  });

  it("puts each trace's spans on exactly one gateway, and the summed counters equal the truth", async () => {
    onTestFailed(() => void (failed = true));
    for (let round = 0; round < 3; round++) {
      trafficRound(round).forEach((spec, i) => {
        const app = apps[i % apps.length];
        if (app) runs.push(emitRun(app.tracer, spec));
      });
      await Promise.all(apps.map((a) => a.flush()));
    }
    for (const app of apps) expect(app.exporter.failures).toEqual([]);

    // Where did each span go? Wait until every span of every run is in some gateway's output.
    const allSpans = new Set(runs.flatMap((r) => r.spanIds));
    const landing = () => gateways.map((g) => readExportedSpans(g.sampledFile));
    await expectEventuallyEqual(async () => new Set(landing().flat().map((s) => s.spanId)).size, allSpans.size, {
      timeoutMs: 30_000,
      what: 'spans written by the two gateways',
    });
    const perGateway = landing();
    // Exactly once: no span twice, on one gateway or across both.
    expect(perGateway.flat().length).toBe(allSpans.size);

    const gatewayOfTrace = new Map<string, number>();
    for (const run of runs) {
      const holders = perGateway.map((spans, g) => (spans.some((s) => s.traceId === run.traceId) ? g : -1)).filter((g) => g >= 0);
      expect(holders, `gateways holding trace ${run.traceId}`).toHaveLength(1);
      const g = holders[0] as number;
      gatewayOfTrace.set(run.traceId, g);
      const received = perGateway[g]?.filter((s) => s.traceId === run.traceId).map((s) => s.spanId).sort();
      expect(received, `spans of trace ${run.traceId} on gateway-${g}`).toEqual([...run.spanIds].sort());
    }
    // The load was actually spread (30 traces on one of two gateways by chance: p < 1e-8).
    expect(new Set(gatewayOfTrace.values()).size).toBe(2);

    // Summed over both gateways: the truth.
    const detections = apps.flatMap((a) => a.detections);
    await expectEventuallyEqual(
      async () => countsFromVector(await prom.query(`sum by (${DETECTION_LABELS.join(', ')}) (gen_ai_tool_loop_detections_total)`), DETECTION_LABELS),
      expectedDetections(detections),
      { timeoutMs: 30_000, what: 'loop detections summed over the gateways' },
    );
    await expectEventuallyEqual(
      async () => countsFromVector(await prom.query(`sum by (${TOOL_CALL_LABELS.join(', ')}) (gen_ai_tool_calls_total)`), TOOL_CALL_LABELS),
      expectedToolCalls(runs),
      { timeoutMs: 30_000, what: 'tool calls summed over the gateways' },
    );

    // Per gateway (the scrape's instance label): the truth of the traces it received.
    for (const [g, gateway] of gateways.entries()) {
      const mine = (traceId: string) => gatewayOfTrace.get(traceId) === g;
      const instance = `instance="${gateway.metricsTarget}"`;
      expect(
        countsFromVector(await prom.query(`sum by (${DETECTION_LABELS.join(', ')}) (gen_ai_tool_loop_detections_total{${instance}})`), DETECTION_LABELS),
        `loop detections on gateway-${g}`,
      ).toEqual(expectedDetections(detections.filter((d) => mine(d.traceId))));
      expect(
        countsFromVector(await prom.query(`sum by (${TOOL_CALL_LABELS.join(', ')}) (gen_ai_tool_calls_total{${instance}})`), TOOL_CALL_LABELS),
        `tool calls on gateway-${g}`,
      ).toEqual(expectedToolCalls(runs.filter((r) => mine(r.traceId))));
    }
  });
});
