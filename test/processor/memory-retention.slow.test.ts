/**
 * What loopwatch keeps alive, on a real SDK pipeline (issue 19): argument and result text is never
 * held past the span's export (not even through a short string the SDK cut from a long one), the
 * state of an active trace stays small with realistic payloads, and long tool names do not pile
 * up in the engine's caches. Heap figures are differences after full collections, with the same
 * work done without loopwatch as the baseline.
 */
import { ROOT_CONTEXT, trace, type Span, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor, type LoopDetectionSpanProcessorOptions } from '../../src/index.js';
import { DroppingExporter, heapAfterGc } from '../support/heap.js';

interface Pipeline {
  readonly tracer: Tracer;
  readonly loops: LoopDetectionSpanProcessor | undefined;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

function pipeline(withLoops: boolean, options: LoopDetectionSpanProcessorOptions = {}, attributeValueLengthLimit?: number): Pipeline {
  const loops = withLoops ? new LoopDetectionSpanProcessor(options) : undefined;
  const batch = new BatchSpanProcessor(new DroppingExporter(), { maxQueueSize: 1 << 16, maxExportBatchSize: 512, scheduledDelayMillis: 60_000 });
  const provider = new BasicTracerProvider({
    spanProcessors: loops ? [loops as unknown as SpanProcessor, batch] : [batch],
    ...(attributeValueLengthLimit !== undefined ? { spanLimits: { attributeValueLengthLimit } } : {}),
  });
  return { tracer: provider.getTracer('memory'), loops, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

/** A tool span under `parent`: arguments at start, the result set after. */
function toolCall(tracer: Tracer, parent: Span, name: string, args: string, result: string): void {
  const span = tracer.startSpan(
    `execute_tool ${name}`,
    { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.call.arguments': args } },
    trace.setSpan(ROOT_CONTEXT, parent),
  );
  span.setAttribute('gen_ai.tool.call.result', result);
  span.end();
}

function agentRoot(tracer: Tracer, i: number): Span {
  return tracer.startSpan('invoke_agent bot', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': `p${i % 5}` } }, ROOT_CONTEXT);
}

/**
 * The heap held after `work` ran with loopwatch, above the same work without it, both with the
 * traces' roots still open (loopwatch's per-trace state is alive) and their spans exported.
 */
async function heldBy(work: (p: Pipeline) => Span[] | Promise<Span[]>, options: LoopDetectionSpanProcessorOptions = {}, limit?: number): Promise<{ bytes: number; tracked: number }> {
  const measure = async (withLoops: boolean): Promise<{ heap: number; tracked: number }> => {
    const p = pipeline(withLoops, options, limit);
    const before = heapAfterGc();
    const roots = await work(p);
    await p.flush();
    const heap = heapAfterGc() - before;
    const tracked = p.loops?.trackedTraces ?? 0;
    for (const r of roots) r.end();
    await p.shutdown();
    return { heap, tracked };
  };
  // twice each, alternating, the smaller difference: a collection of the test's own garbage can
  // fall into either measurement
  const differences: number[] = [];
  let tracked = 0;
  for (let k = 0; k < 2; k++) {
    const bare = await measure(false);
    const withLoops = await measure(true);
    differences.push(withLoops.heap - bare.heap);
    tracked = withLoops.tracked;
  }
  return { bytes: Math.min(...differences), tracked };
}

const MiB = 1024 * 1024;

describe('memory loopwatch keeps alive', () => {
  it('truncated attributes: 20 open traces × 15 first calls with 1 MB results keep no result text alive', async () => {
    // The SDK cuts each 1 MB result to 1 000 characters; a cut string can keep the whole original
    // alive, so holding it (as deferred first calls once did) held 1 MB per call.
    const { bytes, tracked } = await heldBy(
      (p) => {
        const roots: Span[] = [];
        for (let i = 0; i < 20; i++) {
          const root = agentRoot(p.tracer, i);
          roots.push(root);
          for (let k = 0; k < 15; k++) {
            // distinct tools: each is a first call
            const result = `{"rows":"${String(i * 100 + k).padStart(6, '0')}${'x'.repeat(MiB)}"}`;
            toolCall(p.tracer, root, `tool_${k}`, `{"q":"${i}-${k}"}`, result);
          }
        }
        return roots;
      },
      {},
      1_000,
    );
    expect(tracked).toBe(20);
    expect(bytes).toBeLessThan(8 * MiB);
  }, 60_000);

  const item = (k: number, i: number) => ({ id: i * 100 + k, title: `item ${k} of ${i}`, score: (k % 97) / 97 });
  const args = (i: number, k: number) => JSON.stringify({ query: `order ${i}-${k} status`, page: k, filters: { region: 'eu-west', open: true }, items: Array.from({ length: 14 }, (_, j) => item(j, i + k)) });
  const result = (i: number, k: number) => JSON.stringify({ total: k, note: `found ${k} matching orders`, items: Array.from({ length: 16 }, (_, j) => item(j, i * 7 + k)) });

  for (const [shape, toolOf] of [
    ['the agent mix (a tool called 4 times, another once)', (k: number) => (k < 4 ? 'search_orders' : 'get_order')],
    ['5 distinct tools (every call a first call)', (k: number) => `tool_${k}`],
  ] as const) {
    // Issue 17's target is 2 KiB; measured at this commit 2.40 KiB (mix) and 2.32 KiB (5 tools), with
    // the trace's cost and drought state: the bound holds what is reached, the target stays open.
    it(`an active trace of ${shape}, 1 KB JSON arguments and results, holds at most 2.5 KiB`, async () => {
      const traces = 2_000;
      const { bytes, tracked } = await heldBy((p) => {
        const roots: Span[] = [];
        for (let i = 0; i < traces; i++) {
          const root = agentRoot(p.tracer, i);
          roots.push(root);
          for (let k = 0; k < 5; k++) toolCall(p.tracer, root, toolOf(k), args(i, k), result(i, k));
        }
        return roots;
      });
      expect(tracked).toBe(traces);
      expect(bytes / traces).toBeLessThanOrEqual(2560);
    }, 60_000);
  }

  it('1 024 distinct 128 KB tool names are not kept', async () => {
    const { bytes } = await heldBy((p) => {
      const roots: Span[] = [];
      for (let i = 0; i < 1_024; i++) {
        const root = agentRoot(p.tracer, i);
        // two calls of the same (long) tool in a trace: the engine records them
        const name = `${String(i).padStart(5, '0')}${'t'.repeat(128 * 1024)}`;
        toolCall(p.tracer, root, name, '{"q":1}', '"a"');
        toolCall(p.tracer, root, name, '{"q":2}', '"b"');
        root.end();
      }
      return roots;
    });
    expect(bytes).toBeLessThan(16 * MiB);
  }, 60_000);
});
