/**
 * The loop-spend counters through the Metrics API reach Prometheus under the names the collector
 * path gives its own (gateway.yaml's transform/loop_spend): the processor, with a real
 * MeterProvider exporting OTLP/HTTP to the real collector (serve-gateway.yaml, which exposes
 * serve's Metrics API counters), read off the collector's Prometheus endpoint.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { LoopDetectionSpanProcessor, type TraceLoopSummary } from '../../src/index.js';
import { E2E_PRICES, emitRun, repeatedCall } from './support/agent-traffic.js';
import { expectEventuallyEqual } from './support/expect-eventually.js';
import { RUN_ROOT } from './support/paths.js';
import { httpGet } from './support/process.js';
import { startServeGateway, type ServeGateway } from './support/serve-tier.js';
import { expectedLoopCost, expectedLoopTokens, roundedValues, type Counts } from './support/truth.js';

const runDir = join(RUN_ROOT, `loop-spend-${process.pid}-${Date.now()}`);
let gateway: ServeGateway | undefined;
let failed = false;

afterAll(async () => {
  await gateway?.stop();
  if (!failed && !process.env.LOOPWATCH_KEEP_RUN) rmSync(runDir, { recursive: true, force: true });
});

/** `name{labels} value` lines of a Prometheus exposition, the given labels only, summed. */
function series(text: string, name: string, labels: readonly string[]): Counts {
  const out: Counts = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const m = /^[^{]+\{(.*)\} (\S+)/.exec(line);
    if (!m) continue;
    const all = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const key = labels.map((l) => all[l] ?? '').join(' | ');
    out[key] = (out[key] ?? 0) + Number(m[2]);
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

describe('the Metrics API loop-spend counters through a real collector', { timeout: 120_000 }, () => {
  it('are gen_ai_tool_loop_tokens_total{gen_ai_prompt_name, gen_ai_token_type} and gen_ai_tool_loop_cost_usd_total{gen_ai_prompt_name}, equal to the bills', async () => {
    onTestFailed(() => void (failed = true));
    gateway = await startServeGateway({ name: 'serve-gateway', runDir, samplePercent: 0 });
    const reader = new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${gateway.otlpHttpBase}/v1/metrics` }), exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const summaries: TraceLoopSummary[] = [];
    const loops = new LoopDetectionSpanProcessor({ meterProvider, prices: E2E_PRICES, onTraceEnd: (s) => void summaries.push(s) });
    const provider = new BasicTracerProvider({ spanProcessors: [loops] });
    const tracer = provider.getTracer('loop-spend');
    for (let i = 0; i < 3; i++) {
      emitRun(tracer, repeatedCall('support-agent', 'support-triage', 'search_kb', 6 + i, `refund-${i}`));
      emitRun(tracer, repeatedCall('research-agent', 'research-brief', 'web_search', 4, `loops-${i}`));
      emitRun(tracer, repeatedCall('legacy-agent', undefined, 'lookup_order', 5, `order-${i}`));
    }
    await reader.forceFlush();
    const tokens = expectedLoopTokens(summaries);
    const cost = expectedLoopCost(summaries);
    expect(Object.keys(tokens)).toEqual(['research-brief | input', 'research-brief | output', 'support-triage | input', 'support-triage | output', 'unknown | input', 'unknown | output']);
    expect(Object.keys(cost)).toEqual(['research-brief', 'support-triage']);
    const metrics = async (): Promise<string> => (await httpGet(`http://${gateway?.metricsTarget ?? ''}/metrics`))?.body ?? '';
    await expectEventuallyEqual(async () => series(await metrics(), 'gen_ai_tool_loop_tokens_total', ['gen_ai_prompt_name', 'gen_ai_token_type']), tokens, { timeoutMs: 20_000, what: 'loop tokens on /metrics' });
    expect(roundedValues(series(await metrics(), 'gen_ai_tool_loop_cost_usd_total', ['gen_ai_prompt_name']))).toEqual(cost);
    await Promise.all([meterProvider.shutdown(), provider.shutdown()]);
  });
});
