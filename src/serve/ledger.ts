import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { Spool, SpoolSegment } from './spool.js';

/** `ExportResultCode.SUCCESS` of @opentelemetry/core (the SDK's export results). */
const EXPORT_SUCCESS = 0;
type ExportResult = Parameters<Parameters<PushMetricExporter['export']>[1]>[0];

type SpanIds = { readonly traceId: Uint8Array; readonly spanId: Uint8Array };
type SettledSpan = SpanIds & { readonly segment: SpoolSegment };

/** Longest a forwarded span waits for a metrics export before it is written down as settled anyway. */
const SETTLE_WAIT_MS = 30_000;

/**
 * What serve writes down in its spool after the fact: which spans were settled (forwarded, or
 * given up) and which tool calls were counted in its metrics, so that a replay after a restart
 * sends again only what was not forwarded and counts again only what was not counted.
 *
 * When the metrics go out through an exporter, both wait for its next successful export: a
 * count made and never exported dies with the process, so after a restart it must be made
 * again, from spans replayed for that reason even if they were forwarded (a duplicate
 * downstream, which at-least-once allows; a count short is not). A settled span waits at most
 * `SETTLE_WAIT_MS`, so that failing metric exports do not fill the spool.
 */
export class SpoolLedger {
  private pendingCounts: { readonly at: number; readonly spans: readonly SpanIds[] }[] = [];
  private pendingSettled: { readonly at: number; readonly spans: readonly SettledSpan[] }[] = [];

  constructor(
    private readonly spool: Spool,
    /** Counts reach the world through an exporter: wait for `exported`. */
    private readonly afterExport: boolean,
  ) {}

  counted(spans: readonly SpanIds[]): void {
    if (spans.length === 0) return;
    if (this.afterExport) this.pendingCounts.push({ at: Date.now(), spans });
    else this.spool.counted(spans);
  }

  settled(spans: readonly SettledSpan[]): void {
    if (spans.length === 0) return;
    if (this.afterExport) this.pendingSettled.push({ at: Date.now(), spans });
    else this.spool.settled(spans);
  }

  /** Metrics collected at `collectedAt` (epoch ms) reached the downstream: what was counted and settled until then is written down. */
  exported(collectedAt: number): void {
    const counts = this.pendingCounts.filter((p) => p.at <= collectedAt);
    this.pendingCounts = this.pendingCounts.filter((p) => p.at > collectedAt);
    if (counts.length > 0) this.spool.counted(counts.flatMap((p) => p.spans));
    this.flushSettled(collectedAt);
  }

  /** Settled spans that waited too long for an export are written down anyway. */
  tick(now = Date.now()): void {
    this.flushSettled(now - SETTLE_WAIT_MS);
  }

  /** Everything settled so far (a clean shutdown, after the last export). */
  flush(): void {
    this.flushSettled(Number.POSITIVE_INFINITY);
  }

  private flushSettled(until: number): void {
    const done = this.pendingSettled.filter((p) => p.at <= until);
    if (done.length === 0) return;
    this.pendingSettled = this.pendingSettled.filter((p) => p.at > until);
    this.spool.settled(done.flatMap((p) => p.spans));
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
