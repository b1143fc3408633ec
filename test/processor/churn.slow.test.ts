/**
 * Churn: many traces through one processor on a real SDK pipeline, some never finishing. The
 * state kept stays within `maxTraces` and the heap stops growing. `npm run bench` runs the same
 * with a million traces; here a smaller count with a small `maxTraces` keeps it to seconds while
 * the cap is reached and exceeded many times over.
 */
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor } from '../../src/index.js';
import { DroppingExporter, heapAfterGc } from '../support/heap.js';

describe('churn', () => {
  it('150 000 traces, 1 in 10 never ending: tracked state stays under maxTraces and the heap stops growing', async () => {
    const maxTraces = 2_000;
    const loops = new LoopDetectionSpanProcessor({ maxTraces });
    const exporter = new DroppingExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [loops as unknown as SpanProcessor, new BatchSpanProcessor(exporter, { maxQueueSize: 1 << 15, maxExportBatchSize: 512, scheduledDelayMillis: 60_000 })],
    });
    const tracer = provider.getTracer('churn');
    const total = 150_000;
    const samples: number[] = [];
    let maxTracked = 0;
    let started = 0;
    const base = heapAfterGc();
    for (let i = 0; i < total; i++) {
      const root = tracer.startSpan('invoke_agent bot', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': `p${i % 7}` } }, ROOT_CONTEXT);
      started++;
      const ctx = trace.setSpan(ROOT_CONTEXT, root);
      for (let k = 0; k < 2; k++) {
        const t = tracer.startSpan('execute_tool search', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': `{"q":"${i}-${k}"}` } }, ctx);
        started++;
        t.setAttribute('gen_ai.tool.call.result', `{"hits":${k}}`);
        t.end();
      }
      if (i % 10 !== 0) root.end();
      else started--; // never ends, never exported
      maxTracked = Math.max(maxTracked, loops.trackedTraces);
      if (i % 5_000 === 4_999) await provider.forceFlush();
      if (i % 15_000 === 14_999) samples.push(heapAfterGc() - base);
    }
    await provider.forceFlush();
    expect(exporter.exported).toBe(started);
    expect(maxTracked).toBeLessThanOrEqual(maxTraces);
    // the abandoned traces fill the store to the cap and the oldest are dropped from then on (a
    // finishing trace drops one to make room, then leaves itself: just under the cap)
    expect(loops.trackedTraces).toBeGreaterThan(maxTraces - 10);
    // after the cap is reached (a few thousand traces in), the heap does not keep growing
    const late = samples.slice(3);
    expect(Math.max(...late) - Math.min(...late)).toBeLessThan(8 * 1024 * 1024);
    await provider.shutdown();
  }, 120_000);
});
