import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { Spool } from './spool.js';

/** `ExportResultCode.SUCCESS` of @opentelemetry/core (the SDK's export results). */
const EXPORT_SUCCESS = 0;
type ExportResult = Parameters<Parameters<PushMetricExporter['export']>[1]>[0];

type SpanIds = { readonly traceId: Uint8Array; readonly spanId: Uint8Array };

/**
 * Which tool calls serve has counted in its metrics, written to the spool so that a replay after
 * a restart does not count them again. A count is written down only once the metrics holding it
 * were exported (when they are exported at all): a count the process made and never sent dies
 * with it, and the replay must then count it again, or the totals come out short.
 */
export class CountedLedger {
  private pending: { readonly at: number; readonly spans: readonly SpanIds[] }[] = [];

  constructor(
    private readonly spool: Spool,
    /** Counts reach the world through an exporter: wait for `exported`. */
    private readonly afterExport: boolean,
  ) {}

  add(spans: readonly SpanIds[]): void {
    if (spans.length === 0) return;
    if (this.afterExport) this.pending.push({ at: Date.now(), spans });
    else this.spool.counted(spans);
  }

  /** Metrics collected at `collectedAt` (epoch ms) reached the downstream: what was counted until then is written down. */
  exported(collectedAt: number): void {
    const done = this.pending.filter((p) => p.at <= collectedAt);
    if (done.length === 0) return;
    this.pending = this.pending.filter((p) => p.at > collectedAt);
    this.spool.counted(done.flatMap((p) => p.spans));
  }
}

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
