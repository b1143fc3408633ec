/**
 * E2E 1: an instrumented Node agent app (SDK 2.x + loopwatch's processor + OTLP/HTTP) sends real
 * looping and honest agent traces through the real collector (gateway.yaml); a real Prometheus
 * scrapes it with loopwatch's rules loaded. Expected numbers come from the processor's onLoop
 * callbacks and from the tool spans the app created, never from constants.
 */
import { randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { LoopDetection } from '../../src/index.js';
import { createAgentApp, type AgentApp } from './support/agent-app.js';
import { emitRun, trafficRound, type RunRecord } from './support/agent-traffic.js';
import { startGateway, type Gateway } from './support/collector.js';
import { expectEventuallyEqual } from './support/expect-eventually.js';
import { readExportedSpans, spansByTrace } from './support/otlp-file.js';
import { RULES_FILE, RUN_ROOT } from './support/paths.js';
import { httpGet } from './support/process.js';
import { rulesWithInterval, startPrometheus, type PrometheusServer } from './support/prometheus.js';
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
  UNKNOWN,
} from './support/truth.js';

const ROUNDS = 3;

const DETECTIONS_BY_LABELS = `sum by (${DETECTION_LABELS.join(', ')}) (gen_ai_tool_loop_detections_total)`;
const TOOL_CALLS_BY_LABELS = `sum by (${TOOL_CALL_LABELS.join(', ')}) (gen_ai_tool_calls_total)`;

const runDir = join(RUN_ROOT, `gateway-${process.pid}-${Date.now()}`);
let failed = false;
let gateway: Gateway;
let prom: PrometheusServer;
let apps: AgentApp[] = [];
const runs: RunRecord[] = [];

const allDetections = () => apps.flatMap((a) => a.detections);
/** service.name of apps[i] (see beforeAll). */
const SERVICE_OF_APP = ['agent-worker', 'agent-worker', 'agent-batch'] as const;

describe('gateway.yaml on a real collector, scraped by a real Prometheus', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    // 0% of the honest traces are kept, so the sampled file must be exactly the looping and error traces.
    gateway = await startGateway({ name: 'gateway', runDir, samplePercent: 0 });
    // The shipped rules, evaluated every 2 s instead of 30 s so the alert test takes seconds.
    const rules = rulesWithInterval(RULES_FILE, runDir, '2s');
    prom = await startPrometheus({ name: 'prometheus', runDir, targets: [gateway.metricsTarget], ruleFiles: [rules] });
    await prom.waitForTargetsUp(1);
    apps = [
      // Two processes of one service with identical resources: their concurrent exports land in
      // the same counter stream (the re-stamping race the gateway's serializing batch prevents).
      createAgentApp({ serviceName: 'agent-worker', otlpTracesUrl: gateway.otlpHttpUrl }),
      createAgentApp({ serviceName: 'agent-worker', otlpTracesUrl: gateway.otlpHttpUrl }),
      // A per-process instance id, which the gateway drops from the counters' resource.
      createAgentApp({
        serviceName: 'agent-batch',
        otlpTracesUrl: gateway.otlpHttpUrl,
        resourceAttributes: { 'service.instance.id': randomUUID(), 'host.name': 'e2e-host' },
      }),
    ];
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(apps.map((a) => a.shutdown()));
    await Promise.allSettled([gateway?.stop(), prom?.stop()]);
    if (!failed && !process.env.LOOPWATCH_KEEP_RUN) rmSync(runDir, { recursive: true, force: true });
    else console.log(`e2e logs and data kept in ${runDir}`);
  });

  it('counts every loop.detected event and every tool call exactly, per prompt template, tool, kind and level, after each of several rounds', async () => {
    onTestFailed(() => void (failed = true));
    for (let round = 0; round < ROUNDS; round++) {
      trafficRound(round).forEach((spec, i) => {
        const app = apps[i % apps.length];
        if (app) runs.push(emitRun(app.tracer, spec));
      });
      // All apps flush at once: many small OTLP requests reach the collector concurrently.
      await Promise.all(apps.map((a) => a.flush()));

      const detections = expectedDetections(allDetections());
      const toolCalls = expectedToolCalls(runs);
      await expectEventuallyEqual(async () => countsFromVector(await prom.query(DETECTIONS_BY_LABELS), DETECTION_LABELS), detections, {
        timeoutMs: 30_000,
        what: `loop detections in Prometheus after round ${round + 1}`,
      });
      await expectEventuallyEqual(async () => countsFromVector(await prom.query(TOOL_CALLS_BY_LABELS), TOOL_CALL_LABELS), toolCalls, {
        timeoutMs: 30_000,
        // After the last round, watch a few more scrapes: a late duplicate or a lost batch shows here.
        ...(round === ROUNDS - 1 ? { settleMs: 4_000 } : {}),
        what: `tool calls in Prometheus after round ${round + 1}`,
      });
    }
    // Detections still exact after the settle period too.
    expect(countsFromVector(await prom.query(DETECTIONS_BY_LABELS), DETECTION_LABELS)).toEqual(expectedDetections(allDetections()));

    // The traffic did exercise what the metrics are for (else 0 == 0 would pass).
    const levels = new Set(allDetections().map((d) => d.level));
    expect([...levels].sort()).toEqual(['critical', 'warning']);
    expect(allDetections().some((d) => d.promptName === undefined)).toBe(true);
    expect(new Set(allDetections().map((d) => d.traceId)).size).toBeGreaterThan(ROUNDS * 3);
    // Every span reached the collector: a failed export would make the numbers above lie.
    for (const app of apps) expect(app.exporter.failures).toEqual([]);
    expect(apps.reduce((n, a) => n + a.exporter.exportedSpans, 0)).toBe(runs.reduce((n, r) => n + r.spanIds.length, 0));
  });

  it('sums what the loops cost from their loop.summary events: tokens by prompt template and type, USD where priced, exactly the bills onTraceEnd reported', async () => {
    onTestFailed(() => void (failed = true));
    const summaries = apps.flatMap((a) => a.summaries);
    const tokens = expectedLoopTokens(summaries);
    const cost = expectedLoopCost(summaries);
    // the traffic exercised it: several templates, a template whose model has no price (legacy-agent's)
    expect(Object.keys(tokens).length).toBeGreaterThanOrEqual(8);
    expect(Object.keys(cost).length).toBeLessThan(Object.keys(tokens).length / 2);
    await expectEventuallyEqual(async () => countsFromVector(await prom.query(`sum by (${LOOP_TOKEN_LABELS.join(', ')}) (gen_ai_tool_loop_tokens_total)`), LOOP_TOKEN_LABELS), tokens, {
      timeoutMs: 30_000,
      what: 'loop tokens in Prometheus',
    });
    await expectEventuallyEqual(async () => roundedValues(countsFromVector(await prom.query(`sum by (${LOOP_COST_LABELS.join(', ')}) (gen_ai_tool_loop_cost_usd_total)`), LOOP_COST_LABELS)), cost, {
      timeoutMs: 30_000,
      settleMs: 4_000,
      what: 'loop cost in Prometheus',
    });
  });

  it('exposes both metrics as Prometheus counters with exactly the contract labels', async () => {
    onTestFailed(() => void (failed = true));
    const scrapeLabels = new Set(['__name__', 'job', 'instance', 'exported_job']);
    const detectionSeries = await prom.query('gen_ai_tool_loop_detections_total');
    const callSeries = await prom.query('gen_ai_tool_calls_total');
    expect(detectionSeries.length).toBeGreaterThan(0);
    expect(callSeries.length).toBeGreaterThan(0);
    const ownLabels = (s: { metric: Record<string, string> }) => Object.keys(s.metric).filter((l) => !scrapeLabels.has(l)).sort();
    for (const s of detectionSeries) expect(ownLabels(s)).toEqual(['gen_ai_prompt_name', 'gen_ai_tool_name', 'loop_kind', 'loop_level']);
    for (const s of callSeries) expect(ownLabels(s)).toEqual(['gen_ai_prompt_name', 'gen_ai_tool_name']);
    // One series per service (exported_job), not per agent process: the instance id was dropped.
    expect(new Set(callSeries.map((s) => s.metric.exported_job))).toEqual(new Set(['agent-worker', 'agent-batch']));
    expect(callSeries.every((s) => s.metric.exported_instance === undefined)).toBe(true);

    const meta = await httpGet(`${prom.url}/api/v1/metadata`);
    const types = (JSON.parse(meta?.body ?? '{}') as { data?: Record<string, { type: string }[]> }).data ?? {};
    expect(types.gen_ai_tool_loop_detections_total?.[0]?.type).toBe('counter');
    expect(types.gen_ai_tool_calls_total?.[0]?.type).toBe('counter');
  });

  it('keeps every looping trace and every error trace, whole, and samples away the honest rest', async () => {
    onTestFailed(() => void (failed = true));
    const looping = new Set(allDetections().map((d) => d.traceId));
    const erroring = new Set(runs.filter((r) => r.hasError).map((r) => r.traceId));
    const honest = runs.filter((r) => !looping.has(r.traceId) && !erroring.has(r.traceId));
    // The run set must hold all three kinds, or this test would prove nothing.
    expect(looping.size).toBeGreaterThan(0);
    expect([...erroring].some((t) => !looping.has(t))).toBe(true);
    expect(honest.length).toBeGreaterThan(0);

    const expected = Object.fromEntries(
      runs.filter((r) => looping.has(r.traceId) || erroring.has(r.traceId)).map((r) => [r.traceId, [...r.spanIds].sort()]).sort(([a], [b]) => String(a).localeCompare(String(b))),
    );
    const sampled = () =>
      Promise.resolve(
        Object.fromEntries([...spansByTrace(readExportedSpans(gateway.sampledFile))].map(([t, ids]) => [t, ids.sort()]).sort(([a], [b]) => String(a).localeCompare(String(b)))),
      );
    // Decisions come 1 s after each root span; settle covers the 5 s decision_wait of any straggler.
    await expectEventuallyEqual(sampled, expected, { timeoutMs: 30_000, settleMs: 6_000, what: 'traces in the sampled output' });

    // The loop evidence itself travelled with the kept traces.
    const events = readExportedSpans(gateway.sampledFile).flatMap((s) => s.eventNames.filter((n) => n === 'loop.detected'));
    expect(events.length).toBe(allDetections().length);

    // `loopwatch scan` over the collector's own file output finds exactly what the live processors found.
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    const code = await main(['scan', '--json', gateway.sampledFile], { stdout: out, stderr: new PassThrough(), stdin: Readable.from([]), env: {}, interactive: false });
    // This traffic makes identical calls within one millisecond and the collector regroups spans,
    // so which of two identical spans was "call 3" cannot be told from the export: span ids are
    // compared exactly in test/cli/scan-matches-processor.cli.test.ts, everything else here.
    const key = (d: LoopDetection): string => [d.traceId, d.kind, d.level, d.callIndex, d.count, d.fingerprint, d.promptName ?? ''].join(' ');
    const scanned = chunks.join('').split('\n').filter(Boolean).map((l) => key(JSON.parse(l) as LoopDetection));
    expect(scanned.sort()).toEqual(allDetections().map(key).sort());
    expect(code).toBe(1);
  });

  it("fires the shipped alert rules on this traffic: first loops per template, critical stops", async () => {
    onTestFailed(() => void (failed = true));
    // The alerts are per service (exported_job: the apps' service.name) and template.
    const byService = apps.flatMap((a, i) => a.detections.map((d) => ({ d, service: SERVICE_OF_APP[i] ?? '' })));
    const templates = [...new Set(byService.map(({ d, service }) => `${service} | ${d.promptName ?? UNKNOWN}`))].sort();
    const criticals = [...new Set(byService.filter(({ d }) => d.level === 'critical').map(({ d, service }) => `${service} | ${d.promptName ?? UNKNOWN} | ${d.toolName} | ${d.kind}`))].sort();
    expect(new Set(byService.map(({ service }) => service)).size).toBe(2);
    expect(criticals.length).toBeGreaterThan(0);
    const firing = async (alert: string, labels: readonly string[]) =>
      (await prom.query(`ALERTS{alertname="${alert}", alertstate="firing"}`)).map((s) => labels.map((l) => s.metric[l] ?? '').join(' | ')).sort();
    await expectEventuallyEqual(() => firing('LoopwatchFirstLoopsForTemplate', ['exported_job', 'gen_ai_prompt_name']), templates, {
      timeoutMs: 30_000,
      what: 'LoopwatchFirstLoopsForTemplate alerts',
    });
    await expectEventuallyEqual(() => firing('LoopwatchCriticalLoopStops', ['exported_job', 'gen_ai_prompt_name', 'gen_ai_tool_name', 'loop_kind']), criticals, {
      timeoutMs: 30_000,
      what: 'LoopwatchCriticalLoopStops alerts',
    });
  });

  it('loses no increment when many processes of one service export at once', async () => {
    onTestFailed(() => void (failed = true));
    // Eight processes, identical resources, tiny export batches: hundreds of concurrent OTLP
    // requests feeding one counter stream. Without the gateway's serializing batch in front of
    // the re-stamping, some increments reach delta_to_cumulative out of order and are dropped.
    const swarm = Array.from({ length: 8 }, () => createAgentApp({ serviceName: 'agent-swarm', otlpTracesUrl: gateway.otlpHttpUrl, maxExportBatchSize: 4 }));
    const swarmRuns: RunRecord[] = [];
    try {
      for (let round = 0; round < 12; round++) {
        for (const app of swarm) for (const spec of trafficRound(round)) swarmRuns.push(emitRun(app.tracer, spec));
        await Promise.all(swarm.map((a) => a.flush()));
      }
      const swarmDetections = swarm.flatMap((a) => a.detections);
      await expectEventuallyEqual(
        async () => countsFromVector(await prom.query(`sum by (${DETECTION_LABELS.join(', ')}) (gen_ai_tool_loop_detections_total{exported_job="agent-swarm"})`), DETECTION_LABELS),
        expectedDetections(swarmDetections),
        { timeoutMs: 30_000, what: 'loop detections of the swarm' },
      );
      await expectEventuallyEqual(
        async () => countsFromVector(await prom.query(`sum by (${TOOL_CALL_LABELS.join(', ')}) (gen_ai_tool_calls_total{exported_job="agent-swarm"})`), TOOL_CALL_LABELS),
        expectedToolCalls(swarmRuns),
        { timeoutMs: 30_000, what: 'tool calls of the swarm' },
      );
      for (const app of swarm) expect(app.exporter.failures).toEqual([]);
    } finally {
      await Promise.allSettled(swarm.map((a) => a.shutdown()));
    }
  });

  it('dropped no count increment on the way to cumulative (collector self-metrics)', async () => {
    onTestFailed(() => void (failed = true));
    const res = await httpGet(gateway.telemetryUrl);
    expect(res?.status).toBe(200);
    const lines = (res?.body ?? '').split('\n').filter((l) => l.startsWith('otelcol_deltatocumulative_datapoints'));
    expect(lines.length, 'delta_to_cumulative reports its datapoints').toBeGreaterThan(0);
    const dropped = lines.filter((l) => l.includes('error=') && !/ 0$/.test(l));
    expect(dropped).toEqual([]);
  });
});
