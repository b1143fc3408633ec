/**
 * Faults on a real SDK 2.x pipeline: whatever the app, the callbacks or the attribute values do,
 * no exception reaches the app, every span is still exported, and `diag` says what happened.
 * Content loopwatch cannot read whole is still fingerprinted on what it can read, so a loop made
 * of such calls is still caught.
 */
import { diag, DiagLogLevel, ROOT_CONTEXT, trace, type Attributes, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoopDetectionSpanProcessor} from '../../src/index.js';
import { customAdapter, defaultAdapters, type LoopDetection, type LoopDetectionSpanProcessorOptions } from '../../src/index.js';
import { collectingProcessor } from '../support/collecting-processor.js';

interface Logged {
  readonly level: 'error' | 'warn' | 'info' | 'debug' | 'verbose';
  readonly message: string;
}

let logged: Logged[] = [];
beforeEach(() => {
  logged = [];
  const at = (level: Logged['level']) => (message: string, ...args: unknown[]) => void logged.push({ level, message: [message, ...args].join(' ') });
  diag.setLogger({ error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), verbose: at('verbose') }, DiagLogLevel.ALL);
});
afterEach(() => diag.disable());

const said = (level: Logged['level'], text: string): boolean => logged.some((l) => l.level === level && l.message.includes(text));

interface Pipeline {
  readonly tracer: Tracer;
  readonly exporter: InMemorySpanExporter;
  readonly loops: LoopDetectionSpanProcessor;
  readonly detections: LoopDetection[];
  /** Spans the app started. */
  started: number;
}

function pipeline(options: LoopDetectionSpanProcessorOptions = {}): Pipeline {
  const exporter = new InMemorySpanExporter();
  const { loops, detections } = collectingProcessor(options);
  const provider = new BasicTracerProvider({ spanProcessors: [loops as unknown as SpanProcessor, new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('faults'), exporter, loops, detections, started: 0 };
}

/**
 * An agent run: the root with a prompt name, then `calls` execute_tool spans with these
 * attributes. Every start and end is where an exception would reach the app.
 */
function run(p: Pipeline, calls: number, attributes: (i: number) => Attributes, result?: (i: number) => Attributes): void {
  const root = p.tracer.startSpan('invoke_agent bot', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': 'faults-v1' } }, ROOT_CONTEXT);
  p.started++;
  const ctx = trace.setSpan(ROOT_CONTEXT, root);
  for (let i = 0; i < calls; i++) {
    const span = p.tracer.startSpan('execute_tool probe', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'probe', ...attributes(i) } }, ctx);
    p.started++;
    if (result) span.setAttributes(result(i));
    span.end();
  }
  root.end();
}

/** Runs `body` and checks the invariants: nothing thrown, every span exported. */
function unharmed(p: Pipeline, body: () => void): void {
  expect(body).not.toThrow();
  expect(p.exporter.getFinishedSpans()).toHaveLength(p.started);
  expect(p.loops.trackedTraces).toBe(0);
}

describe('faults never reach the app', () => {
  it('a throwing onLoop: the loop is still reported on the span and stopped, diag says the callback failed', () => {
    const p = pipeline({
      onLoop: () => {
        throw new Error('callback exploded');
      },
    });
    unharmed(p, () => run(p, 6, () => ({ 'gen_ai.tool.call.arguments': '{"q":"same"}', 'gen_ai.tool.call.result': '"nothing"' })));
    expect(p.detections.map((d) => d.level)).toEqual(['warning', 'critical']);
    expect(p.exporter.getFinishedSpans().flatMap((s) => s.events).filter((e) => e.name === 'loop.detected')).toHaveLength(2);
    expect(said('error', 'onLoop failed and was contained: callback exploded')).toBe(true);
  });

  it('a throwing prompt resolver: the name comes from the ancestors, diag says the resolver failed', () => {
    const p = pipeline({
      promptName: () => {
        throw new Error('resolver exploded');
      },
    });
    unharmed(p, () => run(p, 3, () => ({ 'gen_ai.tool.call.arguments': '{"q":"same"}', 'gen_ai.tool.call.result': '"nothing"' })));
    expect(p.detections[0]?.promptName).toBe('faults-v1');
    expect(said('error', 'the promptName resolver failed and was contained: resolver exploded')).toBe(true);
  });

  it('a throwing diag logger: contained as well (problems are reported through it)', () => {
    const p = pipeline({
      onLoop: () => {
        throw new Error('callback exploded');
      },
    });
    diag.disable(); // else setLogger itself warns, through the new logger, that it replaces one
    diag.setLogger(
      {
        error: () => {
          throw new Error('logger exploded');
        },
        warn: () => {
          throw new Error('logger exploded');
        },
        info: () => undefined,
        debug: () => undefined,
        verbose: () => undefined,
      },
      DiagLogLevel.ALL,
    );
    unharmed(p, () => run(p, 5, () => ({ 'gen_ai.tool.call.arguments': '{"q":1,}', 'gen_ai.tool.call.result': '"r"' })));
    expect(p.detections.map((d) => d.level)).toEqual(['warning', 'critical']);
  });

  it('malformed JSON: fingerprinted as text (so the loop is still caught), diag says so', () => {
    const p = pipeline();
    // text shaped like JSON ({…}, […]) that JSON.parse rejects; other text is plain text anyway
    unharmed(p, () => run(p, 5, () => ({ 'gen_ai.tool.call.arguments': '{"query": "order 1234", "limit": 1,}', 'gen_ai.tool.call.result': "[{'id': 1}]" })));
    expect(p.detections.map((d) => d.level)).toEqual(['warning', 'critical']);
    expect(said('warn', "the arguments of 'probe' look like JSON but are not valid JSON")).toBe(true);
    expect(said('warn', "the result of 'probe' look like JSON but are not valid JSON")).toBe(true);
    // a warning the first time, then debug: a tool whose output is never JSON does not flood the log
    expect(logged.filter((l) => l.level === 'warn' && l.message.includes("arguments of 'probe'"))).toHaveLength(1);
    expect(said('debug', "the arguments of 'probe' look like JSON")).toBe(true);
  });

  it('huge (10 MB) arguments: hashed as text in one pass, diag says so, distinct calls stay distinct', () => {
    const p = pipeline();
    const huge = (i: number): string => JSON.stringify({ content: 'x'.repeat(10 * 1024 * 1024), version: i });
    unharmed(p, () => run(p, 3, (i) => ({ 'gen_ai.tool.call.arguments': huge(i), 'gen_ai.tool.call.result': '"saved"' })));
    expect(p.detections).toEqual([]);
    expect(said('warn', "the arguments of 'probe' are text over 8 MiB")).toBe(true);
  });

  it('10 000 levels of nesting, as JSON text and as a structured value: no stack overflow, cut at 96 levels', () => {
    const deepText = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
    let deepValue: unknown = 'leaf';
    for (let i = 0; i < 10_000; i++) deepValue = { d: deepValue };
    const p = pipeline({
      conventions: [customAdapter({ toolSpan: { attribute: 'test.kind', equals: 'deep' }, toolName: 'test.tool', arguments: () => deepValue }), ...defaultAdapters],
    });
    unharmed(p, () => {
      run(p, 5, () => ({ 'gen_ai.tool.call.arguments': deepText, 'gen_ai.tool.call.result': '"r"' }));
      run(p, 5, () => ({ 'test.kind': 'deep', 'test.tool': 'deep_probe' }));
    });
    // the adapter maps no result: arguments-only evidence warns at 5 calls and stops at 10
    expect(p.detections.map((d) => [d.toolName, d.level])).toEqual([
      ['probe', 'warning'],
      ['probe', 'critical'],
      ['deep_probe', 'warning'],
    ]);
    expect(said('warn', "the arguments of 'probe' are nested deeper than 96 levels")).toBe(true);
    expect(said('warn', "the arguments of 'deep_probe' are nested deeper than 96 levels")).toBe(true);
  });

  it('cyclic, throwing and hostile values from an adapter: cycles cut, unreadable values not captured, diag told', () => {
    const cyclic: Record<string, unknown> = { q: 'x' };
    cyclic.self = cyclic;
    const throwing = {
      get q(): string {
        throw new Error('getter exploded');
      },
    };
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('proxy exploded');
        },
      },
    );
    const values: Record<string, unknown> = { cyclic, throwing, hostile };
    const p = pipeline({
      conventions: [
        customAdapter({ toolSpan: 'test.value', toolName: 'test.value', arguments: (s) => values[String(s.attributes['test.value'])], result: 'test.result' }),
        ...defaultAdapters,
      ],
    });
    unharmed(p, () => {
      for (const name of Object.keys(values)) run(p, 5, () => ({ 'test.value': name, 'test.result': 'same answer' }));
    });
    expect(said('warn', "the arguments of 'cyclic' refer to themselves")).toBe(true);
    expect(said('warn', "could not fingerprint the arguments of 'throwing' (treated as not captured): getter exploded")).toBe(true);
    expect(said('warn', "could not fingerprint the arguments of 'hostile' (treated as not captured): proxy exploded")).toBe(true);
    // the cyclic calls are identical: caught on arguments and result; the unreadable arguments
    // count as not captured, so those loops rest on the result alone (and need more calls)
    expect(p.detections.filter((d) => d.toolName === 'cyclic').map((d) => [d.level, d.evidence])).toEqual([
      ['warning', 'arguments+result'],
      ['critical', 'arguments+result'],
    ]);
    expect(p.detections.filter((d) => d.toolName !== 'cyclic').every((d) => d.evidence === 'result')).toBe(true);
  });

  it('binary, non-JSON and non-string attribute values, NaN and Infinity: fingerprinted, never thrown on', () => {
    let binary = '';
    for (let i = 0; i < 4096; i++) binary += String.fromCharCode((i * 7919) % 65536);
    const values: Attributes[] = [
      { 'gen_ai.tool.call.arguments': binary, 'gen_ai.tool.call.result': '\u0000\u0001\ud800\udfff\ud800' },
      { 'gen_ai.tool.call.arguments': 'plain text, not JSON', 'gen_ai.tool.call.result': 'NaN' },
      { 'gen_ai.tool.call.arguments': Number.NaN, 'gen_ai.tool.call.result': Number.POSITIVE_INFINITY },
      { 'gen_ai.tool.call.arguments': Number.NEGATIVE_INFINITY, 'gen_ai.tool.call.result': -0 },
      { 'gen_ai.tool.call.arguments': ['a', 'b'], 'gen_ai.tool.call.result': true },
      { 'gen_ai.tool.call.arguments': '{"x": NaN, "y": Infinity}', 'gen_ai.tool.call.result': '[1, 2, ]' },
    ];
    const p = pipeline();
    unharmed(p, () => {
      for (const v of values) run(p, 5, () => v);
    });
    // each run repeats one call five times: every one is caught, whatever its content
    expect(p.detections.filter((d) => d.level === 'critical')).toHaveLength(values.length);
    expect(logged.filter((l) => l.level === 'error')).toEqual([]);
  });
});

describe('parallel tool spans in one trace', () => {
  /** One step of the agent: these calls in parallel under `parent`, ended in the given order. */
  function parallelStep(p: Pipeline, parent: ReturnType<typeof trace.setSpan>, args: readonly string[], endOrder: readonly number[]): void {
    const spans = args.map((a) => {
      p.started++;
      return p.tracer.startSpan('execute_tool read_file', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'read_file', 'gen_ai.tool.call.arguments': a } }, parent);
    });
    for (const i of endOrder) {
      // results set late, as instrumentations do
      spans[i]?.setAttribute('gen_ai.tool.call.result', `"contents of ${args[i] ?? ''}"`);
      spans[i]?.end();
    }
  }

  it('overlapping calls under one parent are one step, in any end order: duplicates inside it are no loop, repeated steps are', () => {
    const args = ['{"path":"a.ts"}', '{"path":"b.ts"}', '{"path":"a.ts"}'];
    const p = pipeline();
    unharmed(p, () => {
      const root = p.tracer.startSpan('invoke_agent bot', { attributes: { 'gen_ai.prompt.name': 'fanout' } }, ROOT_CONTEXT);
      p.started++;
      const ctx = trace.setSpan(ROOT_CONTEXT, root);
      // one step of 5 identical reads: fan-out, not a loop
      parallelStep(p, ctx, Array.from({ length: 5 }, () => '{"path":"c.ts"}'), [4, 0, 3, 1, 2]);
      expect(p.detections).toEqual([]);
      // the same 3-call step five times over: counted in steps (3 warns, 5 stops), per distinct call
      for (let step = 0; step < 5; step++) parallelStep(p, ctx, args, step % 2 ? [1, 2, 0] : [2, 0, 1]);
      root.end();
    });
    expect(p.detections.map((d) => [d.level, d.count])).toEqual([
      ['warning', 3],
      ['warning', 3],
      ['critical', 5],
      ['critical', 5],
    ]);
    expect(new Set(p.detections.map((d) => d.fingerprint)).size).toBe(2);
  });

  it('parallel steps under different parents of one trace are separate batches; state is gone when the root ends', () => {
    const p = pipeline();
    unharmed(p, () => {
      const root = p.tracer.startSpan('invoke_agent bot', { attributes: { 'gen_ai.prompt.name': 'fanout' } }, ROOT_CONTEXT);
      p.started++;
      const ctx = trace.setSpan(ROOT_CONTEXT, root);
      const a = p.tracer.startSpan('subagent a', {}, ctx);
      const b = p.tracer.startSpan('subagent b', {}, ctx);
      p.started += 2;
      // both sub-agents read the same file at the same time, twice: one read per sub-agent step
      for (let i = 0; i < 2; i++) {
        parallelStep(p, trace.setSpan(ROOT_CONTEXT, a), ['{"path":"x.ts"}'], [0]);
        parallelStep(p, trace.setSpan(ROOT_CONTEXT, b), ['{"path":"x.ts"}'], [0]);
      }
      a.end();
      b.end();
      root.end();
    });
    // four sequential identical reads in the trace (the sub-agents' steps do not overlap in time)
    expect(p.detections.map((d) => [d.level, d.count])).toEqual([['warning', 3]]);
  });
});
