import { ROOT_CONTEXT, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { LoopDetectionSpanProcessorOptions } from '../dist/index.js';
import { jsonOfSize } from './support/payloads.js';
import { agentMix } from './support/traces.js';
import { allocated } from './support/allocation.js';
import { pipeline } from './support/pipeline.js';
import { median } from './support/report.js';
import { bytes, type Figure } from './support/report.js';

/**
 * Memory loopwatch holds for traces in progress: agent runs whose root span is still open after
 * some tool calls (the state kept between calls), measured as the heap difference between a
 * pipeline with loopwatch and the same pipeline without, holding the same open spans. Needs
 * `node --expose-gc` (the bench script passes it).
 */

export const PER_TRACE_TARGET = 2048;

/** Heap allocated per tool call of the agent mix, loopwatch over bare (issue 30: half of the 8.6 KiB before it; bench/NOTES.md). */
export const ALLOCATED_PER_CALL_TARGET = 4400;

const gc = (globalThis as { gc?: () => void }).gc;

function heapAfterGc(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** An agent run in progress: its root open, `calls` tool calls done. Returns the open root. */
function activeRun(tracer: Tracer, i: number, calls: number): Span {
  const root = tracer.startSpan('invoke_agent support-bot', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support-bot', 'gen_ai.prompt.name': `support-v${i % 3}` } }, ROOT_CONTEXT);
  const ctx = trace.setSpan(ROOT_CONTEXT, root);
  for (let k = 0; k < calls; k++) {
    const t = tracer.startSpan(
      'execute_tool search_orders',
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': k % 2 ? 'search_orders' : 'get_order',
          'gen_ai.tool.call.arguments': `{"query":"order ${i}-${k}","limit":10}`,
        },
      },
      ctx,
    );
    t.setAttribute('gen_ai.tool.call.result', `{"orders":[{"id":"o-${i}-${k}","status":"shipped"}]}`);
    t.end();
  }
  return root;
}

/** Heap held by loopwatch for `traces` active traces of `calls` calls each (bytes, total). */
async function heldFor(traces: number, calls: number, options: LoopDetectionSpanProcessorOptions = {}, repeats = 2): Promise<{ total: number; tracked: number }> {
  const r = await held((tracer, i) => activeRun(tracer, i, calls), traces, options, repeats);
  return { total: r.heap, tracked: r.tracked };
}

/** An agent run of realistic payloads in progress: `tools(k)` names the k-th of 5 calls, 1 KB JSON arguments and results. */
function realisticRun(tools: (k: number) => string): (tracer: Tracer, i: number) => Span {
  return (tracer, i) => {
    const root = tracer.startSpan('invoke_agent support-bot', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support-bot', 'gen_ai.prompt.name': `support-v${i % 3}` } }, ROOT_CONTEXT);
    const ctx = trace.setSpan(ROOT_CONTEXT, root);
    for (let k = 0; k < 5; k++) {
      // text of its own for every call, as each span's attributes are
      const t = tracer.startSpan(`execute_tool ${tools(k)}`, { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tools(k), 'gen_ai.tool.call.arguments': jsonOfSize(1024, i * 5 + k, 'args') } }, ctx);
      t.setAttribute('gen_ai.tool.call.result', jsonOfSize(1024, i * 5 + k, 'result'));
      t.end();
    }
    return root;
  };
}

interface Held {
  /** Heap with loopwatch − without, after full collections (bytes). */
  readonly heap: number;
  /** Resident set with loopwatch − without (bytes): what the process asked the system for. */
  readonly rss: number;
  readonly tracked: number;
}

/**
 * Heap and RSS held by loopwatch while `traces` runs of `run` are open (their roots not ended,
 * their other spans exported), over the same pipeline without loopwatch: each measured in turn,
 * `repeats` times, the smaller difference kept.
 */
async function held(run: (tracer: Tracer, i: number) => Span, traces: number, options: LoopDetectionSpanProcessorOptions = {}, repeats = 2, spanLimits?: { attributeValueLengthLimit: number }): Promise<Held> {
  const measure = async (withLoops: boolean): Promise<{ heap: number; rss: number; tracked: number }> => {
    const p = pipeline(withLoops, options, 1 << 20, spanLimits);
    const heapBefore = heapAfterGc();
    const rssBefore = process.memoryUsage().rss;
    const roots: Span[] = [];
    for (let i = 0; i < traces; i++) {
      roots.push(run(p.tracer, i));
      if (i % 2_000 === 1_999) await p.flush(); // the batch processor's queue, emptied as it would be
    }
    await p.flush();
    const heap = heapAfterGc() - heapBefore;
    const rss = process.memoryUsage().rss - rssBefore;
    const tracked = p.loops?.trackedTraces ?? 0;
    for (const r of roots) r.end();
    await p.shutdown();
    return { heap, rss, tracked };
  };
  const heaps: number[] = [];
  const rsss: number[] = [];
  let tracked = 0;
  for (let k = 0; k < repeats; k++) {
    const bare = await measure(false);
    const loops = await measure(true);
    tracked = loops.tracked;
    heaps.push(loops.heap - bare.heap);
    rsss.push(loops.rss - bare.rss);
  }
  return { heap: Math.min(...heaps), rss: Math.min(...rsss), tracked };
}

/**
 * Issue 19's cases: results cut by the SDK's attribute limit (a cut string can keep its whole
 * original alive), and long tool names (caches that keep names).
 */
async function retentionFigures(quick: boolean): Promise<Figure[]> {
  const figures: Figure[] = [];
  const traces = quick ? 10 : 100;
  const mb = 1 << 20;
  const truncated = await held(
    (tracer, i) => {
      const root = tracer.startSpan('invoke_agent bot', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } }, ROOT_CONTEXT);
      const ctx = trace.setSpan(ROOT_CONTEXT, root);
      for (let k = 0; k < 15; k++) {
        const t = tracer.startSpan(`execute_tool tool_${k}`, { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': `tool_${k}`, 'gen_ai.tool.call.arguments': `{"q":"${i}-${k}"}` } }, ctx);
        t.setAttribute('gen_ai.tool.call.result', `{"rows":"${String(i * 100 + k).padStart(6, '0')}${'x'.repeat(mb)}"}`);
        t.end();
      }
      return root;
    },
    traces,
    {},
    1,
    { attributeValueLengthLimit: 1_000 },
  );
  figures.push({
    section: 'memory',
    name: `attributeValueLengthLimit 1 000: ${traces} open traces × 15 first calls with 1 MB results`,
    value: `heap +${bytes(truncated.heap)}, RSS +${bytes(truncated.rss)}`,
    note: 'heap after GC and resident set, with − without loopwatch, roots open, the tool spans exported',
  });
  const names = quick ? 256 : 4_096;
  const nameBytes = 256 * 1024;
  const longNames = await held(
    (tracer, i) => {
      const root = tracer.startSpan('invoke_agent bot', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } }, ROOT_CONTEXT);
      const ctx = trace.setSpan(ROOT_CONTEXT, root);
      const name = `${String(i).padStart(5, '0')}${'t'.repeat(nameBytes)}`;
      for (let k = 0; k < 2; k++) {
        const t = tracer.startSpan('execute_tool', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.call.arguments': `{"q":${k}}` } }, ctx);
        t.setAttribute('gen_ai.tool.call.result', `"r${k}"`);
        t.end();
      }
      root.end();
      return root;
    },
    names,
    {},
    1,
  );
  figures.push({
    section: 'memory',
    name: `${names.toLocaleString('en')} distinct 256 KB tool names, two calls each (traces ended)`,
    value: `heap +${bytes(longNames.heap)}, RSS +${bytes(longNames.rss)}`,
    note: 'heap after GC and resident set, with − without loopwatch',
  });
  return figures;
}

/**
 * What loopwatch puts through the allocator per tool call of the agent mix (all of it: the
 * collector's work follows from it), over the same pipeline without loopwatch: bare and loopwatch
 * alternate, each run warmed up first, the median of the differences kept.
 */
async function allocationFigure(quick: boolean): Promise<Figure> {
  const mix = agentMix();
  const traces = quick ? 100 : 1_000;
  const run = async (withLoops: boolean): Promise<number> => {
    const p = pipeline(withLoops);
    const pass = async (from: number): Promise<void> => {
      for (let i = from; i < from + traces; i++) {
        mix.shape(p.tracer, i);
        if (i % 10 === 9) await p.flush();
      }
      await p.flush();
    };
    await pass(0);
    const bytesAllocated = await allocated(() => pass(traces));
    await p.shutdown();
    return bytesAllocated;
  };
  const perCall: number[] = [];
  const bare: number[] = [];
  for (let k = 0; k < (quick ? 1 : 5); k++) {
    const without = await run(false);
    const withLoops = await run(true);
    bare.push(without / traces);
    perCall.push((withLoops - without) / (traces * mix.toolCalls));
  }
  const m = median(perCall);
  return {
    section: 'memory',
    name: 'heap allocated per tool call, the agent mix (what loopwatch adds over bare, per trace ÷ its 5 tool calls)',
    value: bytes(m),
    target: `≤ ${bytes(ALLOCATED_PER_CALL_TARGET)}`,
    met: m <= ALLOCATED_PER_CALL_TARGET,
    note: `V8's sampling heap profiler, freed objects counted; median of ${perCall.length} alternations of ${traces.toLocaleString('en')} traces (${bytes(Math.min(...perCall))}–${bytes(Math.max(...perCall))}); bare allocates ${bytes(median(bare))} a trace`,
  };
}

export async function memoryFigures(options: { quick: boolean }): Promise<Figure[]> {
  if (!gc) return [{ section: 'memory', name: 'memory', value: 'skipped: run node with --expose-gc', met: false }];
  const n = options.quick ? 500 : 10_000;
  const figures: Figure[] = [await allocationFigure(options.quick)];
  for (const calls of [1, 5, 32]) {
    const { total } = await heldFor(n, calls);
    figures.push({
      section: 'memory',
      name: `per active trace at defaults (root open, ${calls} tool call${calls === 1 ? '' : 's'} done, ~40 B arguments and results)`,
      value: bytes(total / n),
      note: `heap with − without loopwatch over ${n.toLocaleString('en')} traces`,
    });
  }
  for (const [shape, tools] of [
    ['the agent mix (search_orders × 4, get_order)', (k: number) => (k < 4 ? 'search_orders' : 'get_order')],
    ['5 distinct tools', (k: number) => `tool_${k}`],
  ] as const) {
    const r = await held(realisticRun(tools), n);
    const per = r.heap / n;
    figures.push({
      section: 'memory',
      name: `per active trace, ${shape}: root open, 5 calls with 1 KB JSON arguments and results`,
      value: bytes(per),
      target: `≤ ${bytes(PER_TRACE_TARGET)}`,
      met: per <= PER_TRACE_TARGET,
      note: `heap with − without loopwatch over ${n.toLocaleString('en')} traces (RSS +${bytes(r.rss / n)} each)`,
    });
  }
  {
    // the agent mix as agents run it: 44 model calls with usage between the 5 tool calls
    const mix = agentMix();
    const r = await held(mix.openTrace, n);
    const per = r.heap / n;
    figures.push({
      section: 'memory',
      name: 'per active trace, the agent mix as run (50 spans: 44 model calls with usage, 5 tool calls with 1 KB JSON), root open',
      value: bytes(per),
      target: `≤ ${bytes(PER_TRACE_TARGET)}`,
      met: per <= PER_TRACE_TARGET,
      note: `heap with − without loopwatch over ${n.toLocaleString('en')} traces (RSS +${bytes(r.rss / n)} each); the model calls' usage is what loops cost`,
    });
  }
  figures.push(...(await retentionFigures(options.quick)));
  const many = options.quick ? 5_000 : 100_000;
  const capped = await heldFor(many, 5, {}, 1);
  figures.push({
    section: 'memory',
    name: `${many.toLocaleString('en')} concurrent traces, defaults (maxTraces 10 000)`,
    value: bytes(capped.total),
    note: `${capped.tracked.toLocaleString('en')} tracked; beyond maxTraces the least recently active are dropped`,
  });
  const all = await heldFor(many, 5, { maxTraces: many }, 1);
  figures.push({
    section: 'memory',
    name: `${many.toLocaleString('en')} concurrent traces, maxTraces ${many.toLocaleString('en')}`,
    value: bytes(all.total),
    note: `${all.tracked.toLocaleString('en')} tracked: ${bytes(all.total / Math.max(1, all.tracked))} each`,
  });
  return figures;
}

/**
 * Traces passing through one processor, a million by default: finished runs (root ends) and
 * abandoned ones (root never ends), heap sampled as they go. Bounded means the heap stops
 * growing once `maxTraces` are tracked.
 */
export async function churnFigures(options: { quick: boolean; traces?: number }): Promise<Figure[]> {
  if (!gc) return [{ section: 'churn', name: 'churn', value: 'skipped: run node with --expose-gc', met: false }];
  const total = options.traces ?? (options.quick ? 20_000 : 1_000_000);
  const withLoops = pipeline(true, {}, 1 << 16);
  const samples: number[] = [];
  const start = heapAfterGc();
  const step = Math.max(1, Math.floor(total / 10));
  for (let i = 0; i < total; i++) {
    const root = activeRun(withLoops.tracer, i, 2);
    // one run in ten is abandoned: its root never ends, so only eviction can drop its state
    if (i % 10 !== 0) root.end();
    if (i % 2_000 === 1_999) await withLoops.flush();
    if (i % step === step - 1) samples.push(heapAfterGc() - start);
  }
  await withLoops.flush();
  const tracked = withLoops.loops?.trackedTraces ?? 0;
  const firstHalf = Math.max(...samples.slice(0, Math.ceil(samples.length / 2)));
  const secondHalf = Math.max(...samples.slice(Math.ceil(samples.length / 2)));
  await withLoops.shutdown();
  const bounded = tracked <= 10_000 && secondHalf <= firstHalf + 16 * 1024 * 1024;
  return [
    {
      section: 'churn',
      name: `${total.toLocaleString('en')} traces through one processor (1 in 10 never ends)`,
      value: `heap +${bytes(Math.max(...samples))} at most`,
      target: 'bounded',
      met: bounded,
      note: `tracked at the end: ${tracked.toLocaleString('en')} (maxTraces 10 000); heap growth, first half ${bytes(firstHalf)}, second half ${bytes(secondHalf)}`,
    },
  ];
}
