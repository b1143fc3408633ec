/**
 * dashboards/src/config.ts names what the collector config produces and the alert rules use; these
 * tests hold it to them, so a rename on either side fails here instead of emptying a panel.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ALERTS, COLLECTOR_SERIES, DATASOURCE, LABELS, METRIC_LABELS, METRICS, RECORDED, SOURCE_LABELS, UNKNOWN_LABEL_VALUE } from '../../dashboards/src/config.js';
import { PROVISIONING_FILES } from '../../dashboards/src/provisioning.js';
import { GATEWAY_CONFIG, requireTool, RULES_FILE } from '../e2e/support/paths.js';
import { REPO_ROOT } from './support/dashboard-json.js';

interface CountMetric {
  readonly attributes?: readonly { readonly key: string; readonly default_value?: string }[];
}
interface GatewayConfig {
  readonly connectors: Record<string, { readonly spanevents?: Record<string, CountMetric>; readonly spans?: Record<string, CountMetric> }>;
  readonly processors: Record<string, { readonly metric_statements?: { readonly statements: readonly string[] }[] }>;
}

/** The count connector's loop-spend counts, which transform/loop_spend turns into the loop tokens and cost sums. */
const LOOP_SPEND = /^loopwatch\.loop_spend\./;
interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly labels?: Record<string, string>;
}

/** The Prometheus exporter's names (UnderscoreEscapingWithSuffixes): dots become underscores, counters get _total. */
const promName = (otel: string): string => otel.replace(/\./g, '_');

const rules = (): Rule[] => (parse(readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

describe('dashboards config against the collector config', () => {
  const gateway = parse(readFileSync(GATEWAY_CONFIG, 'utf8')) as GatewayConfig;
  const all = Object.values(gateway.connectors).flatMap((c) => [...Object.entries(c.spanevents ?? {}), ...Object.entries(c.spans ?? {})]);
  const counters = all.filter(([name]) => !LOOP_SPEND.test(name));

  it('has a metric with exactly the contract labels for each count connector metric, and for each loop-spend sum', () => {
    const counted = Object.fromEntries(counters.map(([name, m]) => [`${promName(name)}_total`, (m.attributes ?? []).map((a) => promName(a.key)).sort()]));
    // transform/loop_spend renames the loop-spend counts and keeps only the labels it aggregates on
    const statements = (gateway.processors['transform/loop_spend']?.metric_statements ?? []).flatMap((g) => g.statements);
    const summed: Record<string, string[]> = {};
    for (const st of statements) {
      const m = /^aggregate_on_attributes\("sum", \[(.*)\]\) where (.*)$/.exec(st);
      if (!m) continue;
      const from = [...(m[2] ?? '').matchAll(/metric\.name == "([^"]+)"/g)].map((x) => x[1] ?? '');
      const rename = statements.find((r) => r.startsWith('set(metric.name') && from.some((f) => r.includes(`"${f}"`)));
      const to = /set\(metric\.name, "([^"]+)"\)/.exec(rename ?? '')?.[1] ?? '';
      summed[`${promName(to)}_total`] = [...(m[1] ?? '').matchAll(/"([^"]+)"/g)].map((x) => promName(x[1] ?? '')).sort();
    }
    const expected = Object.fromEntries(Object.entries(METRIC_LABELS).map(([name, labels]) => [name, [...labels].sort()]));
    expect({ ...counted, ...summed }).toEqual(expected);
    expect(Object.keys({ ...counted, ...summed }).sort()).toEqual(Object.values(METRICS).sort());
  });

  it('knows how long the gateway keeps a quiet series and its running total (the increments lookback)', () => {
    const doc = parse(readFileSync(GATEWAY_CONFIG, 'utf8')) as { exporters: { prometheus: { metric_expiration: string } }; processors: { delta_to_cumulative: { max_stale: string } } };
    expect(doc.exporters.prometheus.metric_expiration).toBe(`${COLLECTOR_SERIES.metricExpirationMinutes}m`);
    expect(doc.processors.delta_to_cumulative.max_stale).toBe(`${COLLECTOR_SERIES.deltaMaxStaleMinutes}m`);
  });

  it('knows the value the collector gives a missing label (runs without a prompt template)', () => {
    const defaults = new Set(counters.flatMap(([, m]) => (m.attributes ?? []).map((a) => a.default_value)));
    expect([...defaults]).toEqual([UNKNOWN_LABEL_VALUE]);
  });
});

describe('dashboards config against the Prometheus rules', () => {
  it('names every alert of the rules file, all with the shared prefix', () => {
    const alerts = rules().flatMap((r) => (r.alert ? [r.alert] : []));
    expect(alerts.sort()).toEqual(Object.values(ALERTS.names).sort());
    for (const a of alerts) expect(a.startsWith(ALERTS.namePrefix)).toBe(true);
    expect(join(REPO_ROOT, ALERTS.rulesFile)).toBe(RULES_FILE);
  });

  it('uses the thresholds the alerts use (the dashboards draw them as lines and colours)', () => {
    const byName = new Map(rules().flatMap((r) => (r.alert ? [[r.alert, r.expr.replace(/\s+/g, ' ')] as const] : [])));
    const spike = byName.get(ALERTS.names.spike) ?? '';
    expect(spike).toContain(`> ${ALERTS.spikeFloorPerSecond}`);
    expect(spike).toContain(`> ${ALERTS.spikeFactor} *`);
    expect(byName.get(ALERTS.names.ratio) ?? '').toContain(`> ${ALERTS.loopsPerToolCall}`);
  });

  it('uses only the contract metrics and labels (besides its own recording rules)', () => {
    const recorded = new Set(rules().flatMap((r) => (r.record ? [r.record] : [])));
    const used = new Set(rules().flatMap((r) => [...r.expr.matchAll(/\b(gen_ai_\w+_total)\b/g)].map((m) => m[1])));
    expect([...used].filter((m) => m !== undefined && !recorded.has(m)).sort()).toEqual(Object.values(METRICS).sort());
    const labels = new Set(rules().flatMap((r) => [...r.expr.matchAll(/\b(?:by|on)\s*\(([^)]*)\)/g)].flatMap((m) => (m[1] ?? '').split(',').map((l) => l.trim()))));
    expect([...labels].filter((l) => l !== '' && !Object.values(LABELS).includes(l as never) && !Object.values(SOURCE_LABELS).includes(l as never))).toEqual([]);
  });

  it('has the recording rules the panels read', () => {
    const recorded = new Set(rules().flatMap((r) => (r.record ? [r.record] : [])));
    for (const name of Object.values(RECORDED)) expect(recorded, name).toContain(name);
  });
});

describe('the shipped Prometheus configuration', () => {
  const file = join(REPO_ROOT, PROVISIONING_FILES.prometheus);
  const config = parse(readFileSync(file, 'utf8')) as { global: { scrape_interval: string }; rule_files: string[] };

  it('loads the collector config rules file and scrapes as often as the datasource assumes', () => {
    expect(config.rule_files.map((r) => resolve(dirname(file), r))).toEqual([RULES_FILE]);
    expect(config.global.scrape_interval).toBe(DATASOURCE.scrapeInterval);
    const ds = parse(readFileSync(join(REPO_ROOT, PROVISIONING_FILES.datasource), 'utf8')) as { datasources: { jsonData: { timeInterval: string } }[] };
    expect(ds.datasources[0]?.jsonData.timeInterval).toBe(DATASOURCE.scrapeInterval);
  });

  it('passes promtool check config, which also loads and checks the rules', () => {
    const out = execFileSync(requireTool('promtool'), ['check', 'config', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(out).toMatch(/SUCCESS: 1 rule files found/);
    expect(out).toMatch(/SUCCESS: \d+ rules found/);
  });
});
