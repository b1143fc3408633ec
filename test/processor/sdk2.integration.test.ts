import { context, diag, DiagLogLevel, SpanKind, SpanStatusCode, trace, type DiagLogger, type Span, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LoopDetectionSpanProcessor} from '../../src/index.js';
import { ToolLoopError, type LoopDetection, type LoopDetectionSpanProcessorOptions } from '../../src/index.js';
import { collectingProcessor } from '../support/collecting-processor.js';

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

interface Harness {
  tracer: Tracer;
  exporter: InMemorySpanExporter;
  loops: LoopDetectionSpanProcessor;
  detections: LoopDetection[];
  provider: BasicTracerProvider;
}

const providers: BasicTracerProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.shutdown()));
  vi.useRealTimers();
});

function harness(options: LoopDetectionSpanProcessorOptions = {}, wrap?: (p: LoopDetectionSpanProcessor) => SpanProcessor): Harness {
  const exporter = new InMemorySpanExporter();
  const { loops, detections } = collectingProcessor(options);
  // The exporting processor is registered first on purpose: all onEnding hooks run before any onEnd.
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter), wrap ? wrap(loops) : (loops as unknown as SpanProcessor)],
  });
  providers.push(provider);
  return { tracer: provider.getTracer('agent-under-test'), exporter, loops, detections, provider };
}

interface ToolStep {
  tool: string;
  args: unknown;
  result?: unknown;
  error?: string;
}

/** Runs one tool call as an instrumented agent would: an execute_tool span around the call. */
function callTool(tracer: Tracer, step: ToolStep, parent?: Span): void {
  const ctx = parent ? trace.setSpan(context.active(), parent) : context.active();
  const span = tracer.startSpan(
    `execute_tool ${step.tool}`,
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': step.tool,
        'gen_ai.tool.call.arguments': JSON.stringify(step.args),
      },
    },
    ctx,
  );
  if (step.error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: step.error });
    span.setAttribute('error.type', 'ToolError');
  } else {
    span.setAttribute('gen_ai.tool.call.result', JSON.stringify(step.result));
  }
  span.end();
}

/** An agent run: `invoke_agent` root with a prompt template, tool calls inside, stopping on abort. */
function runAgent(h: Harness, steps: ToolStep[], promptName = 'support-v2'): { signal: AbortSignal; executed: number; traceId: string } {
  let executed = 0;
  let signal!: AbortSignal;
  let traceId = '';
  h.tracer.startActiveSpan(
    'invoke_agent support-bot',
    { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support-bot', 'gen_ai.prompt.name': promptName } },
    (root) => {
      traceId = root.spanContext().traceId;
      signal = h.loops.abortSignal();
      for (const step of steps) {
        if (signal.aborted) break;
        callTool(h.tracer, step);
        executed++;
      }
      root.end();
    },
  );
  return { signal, executed, traceId };
}

const exportedToolSpans = (exporter: InMemorySpanExporter): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');

const searchLoop: ToolStep[] = Array.from({ length: 10 }, () => ({ tool: 'search', args: { q: 'order 1234 status' }, result: { status: 'unknown order' } }));

describe('LoopDetectionSpanProcessor on SDK 2.x (BasicTracerProvider)', () => {
  it('writes loop.detected with every contract attribute on the exported tool span', () => {
    const h = harness();
    const run = runAgent(h, searchLoop);
    const tools = exportedToolSpans(h.exporter);
    expect(tools).toHaveLength(5); // stopped after the 5th call
    const withEvents = tools.map((s) => s.events.filter((e) => e.name === 'loop.detected'));
    expect(withEvents.map((e) => e.length)).toEqual([0, 0, 1, 0, 1]);
    const warning = withEvents[2]?.[0]?.attributes;
    expect(warning).toMatchObject({
      'loop.kind': 'repeat',
      'loop.level': 'warning',
      'loop.count': 3,
      'loop.call_index': 3,
      'gen_ai.tool.name': 'search',
      'gen_ai.prompt.name': 'support-v2',
      'gen_ai.agent.name': 'support-bot',
    });
    expect(warning?.['loop.fingerprint']).toMatch(/^[0-9a-f]{14}$/);
    const critical = withEvents[4]?.[0]?.attributes;
    expect(critical).toMatchObject({ 'loop.level': 'critical', 'loop.count': 5, 'loop.call_index': 5 });
    expect(critical?.['loop.fingerprint']).toBe(warning?.['loop.fingerprint']);
    // every tool span carries the prompt template name for the collector's count connector
    for (const s of tools) expect(s.attributes['gen_ai.prompt.name']).toBe('support-v2');
    expect(run.executed).toBe(5);
  });

  it('aborts the trace signal with a ToolLoopError on the critical detection', () => {
    const h = harness();
    const run = runAgent(h, searchLoop);
    expect(run.signal.aborted).toBe(true);
    const reason = run.signal.reason as ToolLoopError;
    expect(reason).toBeInstanceOf(ToolLoopError);
    expect(reason.name).toBe('ToolLoopError');
    expect(reason).toMatchObject({ toolName: 'search', count: 5, kind: 'repeat' });
    expect(h.detections.map((d) => [d.level, d.callIndex, d.traceId === run.traceId])).toEqual([
      ['warning', 3, true],
      ['critical', 5, true],
    ]);
  });

  it('abortSignal() asked for after the stop starts out aborted; other traces are untouched', () => {
    const h = harness();
    const looping = runAgent(h, searchLoop);
    expect(h.loops.abortSignal(looping.traceId).aborted).toBe(false); // root ended: state was evicted
    const honest = runAgent(h, [{ tool: 'search', args: { q: 'a' }, result: 'A' }]);
    expect(honest.signal.aborted).toBe(false);
    let inside = false;
    h.tracer.startActiveSpan('invoke_agent other', (root) => {
      for (let i = 0; i < 5; i++) callTool(h.tracer, { tool: 'lookup', args: { id: 1 }, result: 'same' });
      inside = h.loops.abortSignal(root).aborted;
      root.end();
    });
    expect(inside).toBe(true);
  });

  it("reads the app's spans, not a library-call instrumentation's: the scope is where SDK spans carry it", () => {
    const h = harness();
    // what an undici span would be if it carried a tool call's keys (no real one does): not read
    const undici = h.provider.getTracer('@opentelemetry/instrumentation-undici', '0.19.0');
    const toolKeys = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.call.arguments': '{"id":1}', 'gen_ai.tool.call.result': '"same"' };
    const run = (tracer: Tracer): boolean => {
      let aborted = false;
      h.tracer.startActiveSpan('invoke_agent support', { attributes: { 'gen_ai.agent.name': 'support-bot' } }, (root) => {
        for (let i = 0; i < 5; i++) tracer.startSpan('GET', { attributes: toolKeys, kind: SpanKind.CLIENT }).end();
        aborted = h.loops.abortSignal(root).aborted;
        root.end();
      });
      return aborted;
    };
    expect(run(undici)).toBe(false);
    expect(h.detections).toEqual([]);
    expect(run(h.tracer)).toBe(true);
    expect(h.detections.length).toBeGreaterThan(0);
  });

  it('observe mode reports what would fire and never aborts', () => {
    const h = harness({ mode: 'observe' });
    const run = runAgent(h, searchLoop);
    expect(run.executed).toBe(10);
    expect(run.signal.aborted).toBe(false);
    expect(h.detections.map((d) => [d.level, d.mode])).toEqual([
      ['warning', 'observe'],
      ['critical', 'observe'],
    ]);
    const events = exportedToolSpans(h.exporter).flatMap((s) => s.events.filter((e) => e.name === 'loop.detected'));
    expect(events.map((e) => e.attributes?.['loop.mode'])).toEqual(['observe', 'observe']);
  });

  it('an honest run stays quiet', () => {
    const h = harness();
    const steps: ToolStep[] = [
      { tool: 'search', args: { q: 'order 1234' }, result: { order: 1234, status: 'shipped' } },
      { tool: 'get_tracking', args: { order: 1234 }, result: { carrier: 'DHL', eta: '2026-11-24' } },
      { tool: 'send_reply', args: { text: 'Your order ships with DHL.' }, result: 'ok' },
    ];
    const run = runAgent(h, steps);
    expect(h.detections).toEqual([]);
    expect(run.signal.aborted).toBe(false);
    expect(exportedToolSpans(h.exporter).flatMap((s) => s.events)).toEqual([]);
  });

  it('a throwing onLoop never reaches the app: spans exported, loop still stopped, diag told', () => {
    const errors: string[] = [];
    const logger: DiagLogger = {
      error: (...m: unknown[]) => errors.push(m.join(' ')),
      warn: () => undefined,
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    };
    diag.setLogger(logger, DiagLogLevel.ERROR);
    try {
      const h = harness({
        onLoop: () => {
          throw new Error('user callback exploded');
        },
      });
      const run = runAgent(h, searchLoop);
      expect(run.executed).toBe(5);
      expect(run.signal.aborted).toBe(true);
      expect(exportedToolSpans(h.exporter)).toHaveLength(5);
      expect(h.exporter.getFinishedSpans().some((s) => s.name === 'invoke_agent support-bot')).toBe(true);
      expect(errors.filter((m) => m.includes('onLoop') && m.includes('user callback exploded'))).toHaveLength(2);
    } finally {
      diag.disable();
    }
  });

  it('a rejecting async onLoop is contained too', async () => {
    const errors: string[] = [];
    diag.setLogger({ error: (...m: unknown[]) => errors.push(m.join(' ')), warn: () => undefined, info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.ERROR);
    try {
      const h = harness({ onLoop: async () => Promise.reject(new Error('async boom')) });
      runAgent(h, searchLoop);
      await new Promise((r) => setImmediate(r));
      expect(errors.some((m) => m.includes('async boom'))).toBe(true);
    } finally {
      diag.disable();
    }
  });

  it('a throwing prompt resolver is contained and falls back to ancestors', () => {
    const h = harness({
      promptName: () => {
        throw new Error('resolver exploded');
      },
    });
    runAgent(h, searchLoop.slice(0, 3));
    expect(h.detections[0]?.promptName).toBe('support-v2');
  });

  it('resolves the prompt name from a resolver, and through nested ancestors', () => {
    const h = harness({ promptName: (span) => (span.attributes['gen_ai.tool.name'] === 'billing' ? 'billing-v1' : undefined) });
    h.tracer.startActiveSpan('invoke_agent root', { attributes: { 'gen_ai.prompt.name': 'triage-v3' } }, (root) => {
      h.tracer.startActiveSpan('step 1', (step) => {
        h.tracer.startActiveSpan('chat model', (chat) => chat.end());
        for (let i = 0; i < 3; i++) callTool(h.tracer, { tool: 'search', args: { q: 'x' }, result: 'y' });
        for (let i = 0; i < 3; i++) callTool(h.tracer, { tool: 'billing', args: { q: 'x' }, result: 'y' });
        step.end();
      });
      root.end();
    });
    expect(h.detections.map((d) => [d.toolName, d.promptName])).toEqual([
      ['search', 'triage-v3'],
      ['billing', 'billing-v1'],
    ]);
  });

  it('reads a prompt name the still-open parent got after its children started (Langfuse, Mastra)', () => {
    const h = harness();
    h.tracer.startActiveSpan('agent', (root) => {
      const tool = h.tracer.startSpan('execute_tool search', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' } });
      root.setAttribute('gen_ai.prompt.name', 'late-named');
      root.setAttribute('gen_ai.agent.name', 'late-agent');
      tool.end();
      for (let i = 0; i < 2; i++) callTool(h.tracer, { tool: 'search', args: undefined, result: undefined }, root);
      root.end();
    });
    const first = exportedToolSpans(h.exporter)[0];
    expect(first?.attributes['gen_ai.prompt.name']).toBe('late-named');
  });

  it('parallel tool spans under one parent are one batch: duplicates inside it are not a loop', () => {
    const h = harness();
    h.tracer.startActiveSpan('invoke_agent fanout', { attributes: { 'gen_ai.prompt.name': 'fanout' } }, (root) => {
      for (let step = 0; step < 2; step++) {
        const spans = Array.from({ length: 4 }, () =>
          h.tracer.startSpan('execute_tool read_file', {
            attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'read_file', 'gen_ai.tool.call.arguments': '{"path":"a.ts"}' },
          }),
        );
        for (const s of spans.reverse()) {
          s.setAttribute('gen_ai.tool.call.result', '"contents"');
          s.end();
        }
      }
      root.end();
    });
    expect(h.detections).toEqual([]);
    // the same 8 calls made one at a time are a loop
    const h2 = harness();
    runAgent(h2, Array.from({ length: 8 }, () => ({ tool: 'read_file', args: { path: 'a.ts' }, result: 'contents' })));
    expect(h2.detections.map((d) => d.level)).toEqual(['warning', 'critical']);
  });

  it('evicts trace state when the root span ends', () => {
    const h = harness();
    runAgent(h, searchLoop.slice(0, 2));
    expect(h.loops.trackedTraces).toBe(0);
    let during = 0;
    h.tracer.startActiveSpan('invoke_agent open', { attributes: { 'gen_ai.prompt.name': 'p' } }, (root) => {
      callTool(h.tracer, searchLoop[0] as ToolStep);
      during = h.loops.trackedTraces;
      root.end();
    });
    expect(during).toBe(1);
    expect(h.loops.trackedTraces).toBe(0);
  });

  it('evicts by maximum trace count and by idle time when roots never end', () => {
    // the store measures idle time on the monotonic clock
    vi.useFakeTimers({ toFake: ['performance'] });
    const h = harness({ maxTraces: 10, traceIdleMs: 60_000 });
    const roots: Span[] = [];
    for (let t = 0; t < 50; t++) {
      const root = h.tracer.startSpan('invoke_agent leaky', { attributes: { 'gen_ai.prompt.name': 'p' } });
      callTool(h.tracer, searchLoop[0] as ToolStep, root);
      roots.push(root);
    }
    expect(h.loops.trackedTraces).toBe(10);
    vi.advanceTimersByTime(5 * 60_000);
    const fresh = h.tracer.startSpan('invoke_agent fresh', { attributes: { 'gen_ai.prompt.name': 'p' } });
    callTool(h.tracer, searchLoop[0] as ToolStep, fresh);
    expect(h.loops.trackedTraces).toBe(1);
    for (const r of roots) r.end();
    fresh.end();
  });

  it('without onEnding (SDK < 2.3) it still detects, calls back, aborts, and annotates the open parent', () => {
    const h = harness({}, (loops) => ({
      onStart: (span, ctx) => loops.onStart(span, ctx),
      onEnd: (span) => loops.onEnd(span),
      forceFlush: () => loops.forceFlush(),
      shutdown: () => loops.shutdown(),
    }));
    const run = runAgent(h, searchLoop);
    expect(run.executed).toBe(5);
    expect(run.signal.aborted).toBe(true);
    expect(h.detections.map((d) => d.level)).toEqual(['warning', 'critical']);
    for (const s of exportedToolSpans(h.exporter)) {
      expect(s.events).toEqual([]); // read-only by then
      expect(s.attributes['gen_ai.prompt.name']).toBe('support-v2'); // set at start
    }
    const root = h.exporter.getFinishedSpans().find((s) => s.name === 'invoke_agent support-bot');
    const onRoot = root?.events.filter((e) => e.name === 'loop.detected') ?? [];
    expect(onRoot.map((e) => [e.attributes?.['loop.level'], typeof e.attributes?.['loop.span_id']])).toEqual([
      ['warning', 'string'],
      ['critical', 'string'],
    ]);
  });

  it('never leaks raw arguments or results into events', () => {
    const h = harness();
    const secret = 'sk-live-SECRET-7f3a9b';
    runAgent(h, Array.from({ length: 5 }, () => ({ tool: 'call_api', args: { token: secret, q: 'x' }, result: { echo: secret } })));
    const events = exportedToolSpans(h.exporter).flatMap((s) => s.events);
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(JSON.stringify(h.detections)).not.toContain(secret);
  });
});
