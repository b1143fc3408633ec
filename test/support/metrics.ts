import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { expect } from 'vitest';

/**
 * A real Metrics SDK pipeline whose `read` gives the latest cumulative value of each series as
 * `name{label=value,...}` (labels sorted), for the metric names `include` accepts. Every series
 * read must come from the `loopwatch` meter with cumulative temporality (the contract's).
 */
export function metricsHarness(include: (name: string) => boolean) {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const read = async (): Promise<Record<string, number>> => {
    await reader.forceFlush();
    const last = exporter.getMetrics().at(-1);
    const out: Record<string, number> = {};
    for (const sm of last?.scopeMetrics ?? []) {
      for (const m of sm.metrics) {
        if (!include(m.descriptor.name)) continue;
        expect(sm.scope.name).toBe('loopwatch');
        expect((m as { aggregationTemporality?: number }).aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
        for (const p of m.dataPoints) {
          const labels = Object.entries(p.attributes)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(',');
          out[`${m.descriptor.name}{${labels}}`] = p.value as number;
        }
      }
    }
    return out;
  };
  return { meterProvider, read };
}
