/**
 * gateway.yaml against the metric contract (docs/alerts.md, docs/semantic-conventions.md): metric names and labels, where counting sits
 * relative to sampling, and the steps that make the count connector's deltas correct counters.
 * The e2e tests prove the behaviour; these fail fast and say which piece moved.
 */
import { describe, expect, it } from 'vitest';
import { GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY } from '../e2e/support/paths.js';
import { readConfig } from './support/configs.js';

interface CountMetric {
  conditions?: string[];
  attributes?: { key: string; default_value?: unknown }[];
}
interface CountConnector {
  spans?: Record<string, CountMetric>;
  spanevents?: Record<string, CountMetric>;
}

const config = readConfig(GATEWAY_CONFIG);
const pipelines = config.service?.pipelines ?? {};
const count = (config.connectors ?? {})['count/loopwatch'] as CountConnector;

/** OTel name -> Prometheus name, as the exporter's UnderscoreEscapingWithSuffixes does for a counter without unit. */
const promCounterName = (otel: string) => `${otel.replace(/\./g, '_')}_total`;
const promLabel = (key: string) => key.replace(/\./g, '_');
/** The count connector's loop-spend metrics, which transform/loop_spend turns into sums. */
const LOOP_SPEND_PREFIX = 'loopwatch.loop_spend.';

describe('gateway.yaml', () => {
  it('counts loop.detected events into gen_ai_tool_loop_detections_total{loop_kind, loop_level, gen_ai_tool_name, gen_ai_prompt_name}', () => {
    const metrics = Object.entries(count.spanevents ?? {}).filter(([name]) => !name.startsWith(LOOP_SPEND_PREFIX));
    expect(metrics.map(([name]) => promCounterName(name))).toEqual(['gen_ai_tool_loop_detections_total']);
    const [, metric] = metrics[0] ?? ['', {}];
    expect(metric.conditions).toEqual(['spanevent.name == "loop.detected"']);
    expect(metric.attributes?.map((a) => promLabel(a.key))).toEqual(['loop_kind', 'loop_level', 'gen_ai_tool_name', 'gen_ai_prompt_name']);
    // Without a default, an event missing the key would not be counted at all.
    for (const a of metric.attributes ?? []) expect(a.default_value, a.key).toBe('unknown');
  });

  it('turns loop.summary events into gen_ai_tool_loop_tokens_total{gen_ai_prompt_name, gen_ai_token_type} and gen_ai_tool_loop_cost_usd_total{gen_ai_prompt_name}', () => {
    const spend = Object.entries(count.spanevents ?? {}).filter(([name]) => name.startsWith(LOOP_SPEND_PREFIX));
    // one count per value of each of the summary's bill attributes, by prompt template
    expect(spend.map(([name, m]) => [name, m.attributes?.map((a) => a.key)])).toEqual([
      ['loopwatch.loop_spend.input', ['gen_ai.prompt.name', 'loop.tokens.input']],
      ['loopwatch.loop_spend.output', ['gen_ai.prompt.name', 'loop.tokens.output']],
      ['loopwatch.loop_spend.usd', ['gen_ai.prompt.name', 'loop.cost.usd']],
    ]);
    for (const [, m] of spend) expect(m.conditions?.[0]).toMatch(/^spanevent\.name == "loop\.summary" and spanevent\.attributes\["loop\.(tokens\.(input|output)|cost\.usd)"\] != nil$/);
    const transform = (config.processors ?? {})['transform/loop_spend'] as { metric_statements: { context: string; statements: string[] }[] };
    const renames = transform.metric_statements.flatMap((g) => g.statements).filter((st) => st.startsWith('set(metric.name'));
    expect(renames.map((st) => /"([^"]+)"\)/.exec(st)?.[1]).map((n) => promCounterName(n ?? ''))).toEqual(['gen_ai_tool_loop_tokens_total', 'gen_ai_tool_loop_cost_usd_total']);
    // the labels left: exactly the Metrics API counters' (src/otel/loop-metrics.ts)
    const kept = transform.metric_statements.flatMap((g) => g.statements).filter((st) => st.startsWith('aggregate_on_attributes'));
    expect(kept.map((st) => /\[(.*)\]/.exec(st)?.[1])).toEqual(['"gen_ai.prompt.name", "gen_ai.token.type"', '"gen_ai.prompt.name"']);
  });

  it('counts execute_tool spans into gen_ai_tool_calls_total{gen_ai_tool_name, gen_ai_prompt_name}', () => {
    const metrics = Object.entries(count.spans ?? {});
    expect(metrics.map(([name]) => promCounterName(name))).toEqual(['gen_ai_tool_calls_total']);
    const [, metric] = metrics[0] ?? ['', {}];
    expect(metric.conditions).toEqual(['span.attributes["gen_ai.operation.name"] == "execute_tool"']);
    expect(metric.attributes?.map((a) => promLabel(a.key))).toEqual(['gen_ai_tool_name', 'gen_ai_prompt_name']);
    for (const a of metric.attributes ?? []) expect(a.default_value, a.key).toBe('unknown');
  });

  it('counts every span (no sampling before the count) and samples in a parallel pipeline', () => {
    const counting = Object.entries(pipelines).filter(([, p]) => p.exporters?.includes('count/loopwatch'));
    expect(counting).toHaveLength(1);
    const [, countPipeline] = counting[0] ?? ['', {}];
    expect(countPipeline.receivers).toEqual(['otlp']);
    expect(countPipeline.processors ?? []).not.toContain('tail_sampling');
    const sampled = pipelines['traces/sampled'];
    expect(sampled?.receivers).toEqual(['otlp']);
    expect(sampled?.processors?.[0]).toBe('memory_limiter');
    expect(sampled?.processors).toContain('tail_sampling');
  });

  it('turns the connector deltas into cumulative counters: serialize, re-stamp, accumulate, expose', () => {
    const metricPipelines = Object.values(pipelines).filter((p) => p.receivers?.includes('count/loopwatch'));
    expect(metricPipelines).toHaveLength(1);
    expect(metricPipelines[0]?.processors).toEqual(['batch/count_serialize', 'transform/loop_spend', 'transform/restamp_deltas', 'delta_to_cumulative']);
    expect(metricPipelines[0]?.exporters).toEqual(['prometheus']);
    const prometheus = (config.exporters ?? {}).prometheus as Record<string, unknown>;
    expect(prometheus.without_scope_info).toBe(true);
    expect(prometheus.translation_strategy).toBe('UnderscoreEscapingWithSuffixes');
  });

  it('keeps looping traces, error traces and a configurable share of the rest', () => {
    const tail = (config.processors ?? {}).tail_sampling as { policies: { type: string; [k: string]: unknown }[] };
    expect(tail.policies.map((p) => p.type)).toEqual(['ottl_condition', 'status_code', 'probabilistic']);
    expect(tail.policies[0]).toMatchObject({ ottl_condition: { spanevent: ['spanevent.name == "loop.detected"'] } });
    expect(tail.policies[1]).toMatchObject({ status_code: { status_codes: ['ERROR'] } });
    expect(tail.policies[2]).toMatchObject({ probabilistic: { sampling_percentage: '${env:LOOPWATCH_SAMPLE_PERCENT:-10}' } });
  });

  it('the file-export overlay only swaps the sampled traces exporter', () => {
    const overlay = readConfig(GATEWAY_FILE_EXPORT_OVERLAY);
    expect(Object.keys(overlay.exporters ?? {})).toEqual(['file/sampled']);
    expect(Object.keys(overlay.service?.pipelines ?? {})).toEqual(['traces/sampled']);
    expect(overlay.service?.pipelines?.['traces/sampled']).toEqual({ exporters: ['file/sampled'] });
  });
});
