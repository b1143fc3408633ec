import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';

/** `ExportResultCode.SUCCESS` of @opentelemetry/core (the SDK's export results). */
const EXPORT_SUCCESS = 0;
type ExportResult = Parameters<Parameters<PushMetricExporter['export']>[1]>[0];

/** The latest collection time of an export's data points (epoch ms), or undefined without any. */
export function collectedAt(metrics: ResourceMetrics): number | undefined {
  let at: number | undefined;
  for (const sm of metrics.scopeMetrics) {
    for (const m of sm.metrics) {
      for (const p of m.dataPoints) {
        const ms = p.endTime[0] * 1000 + p.endTime[1] / 1e6;
        if (at === undefined || ms > at) at = ms;
      }
    }
  }
  return at;
}

/** A metric exporter that says when an export succeeded, and what it was collected at. */
export class ReportingExporter implements PushMetricExporter {
  constructor(
    private readonly inner: PushMetricExporter,
    private readonly onExported: (collectedAt: number) => void,
  ) {
    if (inner.selectAggregationTemporality) this.selectAggregationTemporality = inner.selectAggregationTemporality.bind(inner);
    if (inner.selectAggregation) this.selectAggregation = inner.selectAggregation.bind(inner);
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    this.inner.export(metrics, (result) => {
      if (result.code === EXPORT_SUCCESS) {
        const at = collectedAt(metrics);
        if (at !== undefined) {
          try {
            this.onExported(at);
          } catch {
            // the spool reports its own write errors; the export itself succeeded
          }
        }
      }
      resultCallback(result);
    });
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  selectAggregationTemporality?: NonNullable<PushMetricExporter['selectAggregationTemporality']>;
  selectAggregation?: NonNullable<PushMetricExporter['selectAggregation']>;
}
