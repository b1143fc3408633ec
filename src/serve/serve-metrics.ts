import type { BatchObservableResult, MeterProvider } from '@opentelemetry/api';
import { SCOPE_NAME } from '../otel/loop-metrics.js';
import type { MemoryUsage } from './budget.js';

/** What the metrics read of serve's counters (its `ServeStats`). */
export interface ServeCounters {
  readonly memory: MemoryUsage & { readonly limit: number };
  readonly spoolBytes?: number | undefined;
  readonly receivedSpans: number;
  readonly rejectedSpans: number;
  readonly forwardedSpans: number;
  readonly droppedSpans: number;
  readonly tracesCutByBound: number;
  readonly tracesCut: number;
  readonly connections: number;
}

/** serve's own metrics (OTel names; Prometheus adds units and `_total` as usual). */
export const METRIC_SERVE_MEMORY = 'loopwatch.serve.memory.usage';
export const METRIC_SERVE_MEMORY_LIMIT = 'loopwatch.serve.memory.limit';
export const METRIC_SERVE_SPOOL = 'loopwatch.serve.spool.usage';
export const METRIC_SERVE_SPANS = 'loopwatch.serve.spans';
export const METRIC_SERVE_TRACES_CUT = 'loopwatch.serve.traces.cut';
export const METRIC_SERVE_CONNECTIONS = 'loopwatch.serve.connections';

/**
 * How full serve is and what became of the spans, read from its counters when the metric
 * reader collects (nothing on the hot path): memory by state (reading, held, queued, retained)
 * against its limit, the spool's bytes, spans by outcome, traces cut by reason, open connections.
 */
export function observeServe(meterProvider: MeterProvider, version: string, stats: () => ServeCounters): void {
  const meter = meterProvider.getMeter(SCOPE_NAME, version);
  const memory = meter.createObservableGauge(METRIC_SERVE_MEMORY, { description: 'Bytes of data loopwatch serve keeps in memory (estimated from content), by state.', unit: 'By' });
  const limit = meter.createObservableGauge(METRIC_SERVE_MEMORY_LIMIT, { description: 'The memory limit (--max-memory): at it, new data gets 429.', unit: 'By' });
  const spool = meter.createObservableGauge(METRIC_SERVE_SPOOL, { description: 'Bytes of the on-disk spool (--spool).', unit: 'By' });
  const spans = meter.createObservableCounter(METRIC_SERVE_SPANS, { description: 'Spans by outcome: received, rejected (invalid ids), forwarded, dropped (given up after the retry period).', unit: '{span}' });
  const cut = meter.createObservableCounter(METRIC_SERVE_TRACES_CUT, { description: 'Traces forwarded before they were complete: to make room (bound), or because one trace outgrew its share of memory (cut).', unit: '{trace}' });
  const connections = meter.createObservableGauge(METRIC_SERVE_CONNECTIONS, { description: 'Connections open.', unit: '{connection}' });
  meter.addBatchObservableCallback(
    (r: BatchObservableResult) => {
      const s = stats();
      for (const state of ['reading', 'held', 'queued', 'retained'] as const) r.observe(memory, s.memory[state], { 'loopwatch.serve.memory.state': state });
      r.observe(limit, s.memory.limit);
      if (s.spoolBytes !== undefined) r.observe(spool, s.spoolBytes);
      r.observe(spans, s.receivedSpans, { 'loopwatch.serve.span.outcome': 'received' });
      r.observe(spans, s.rejectedSpans, { 'loopwatch.serve.span.outcome': 'rejected' });
      r.observe(spans, s.forwardedSpans, { 'loopwatch.serve.span.outcome': 'forwarded' });
      r.observe(spans, s.droppedSpans, { 'loopwatch.serve.span.outcome': 'dropped' });
      r.observe(cut, s.tracesCutByBound, { 'loopwatch.serve.cut.reason': 'bound' });
      r.observe(cut, s.tracesCut, { 'loopwatch.serve.cut.reason': 'cut' });
      r.observe(connections, s.connections);
    },
    [memory, limit, spool, spans, cut, connections],
  );
}
