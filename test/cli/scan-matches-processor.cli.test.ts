import { context, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { LoopDetectionSpanProcessor, type LoopDetection } from '../../src/index.js';

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => context.disable());

interface Call {
  tool: string;
  args: unknown;
  result?: unknown;
  error?: string;
}

let clock = Date.parse('2026-11-21T09:00:00Z');
const PRICES = { 'gpt-4o': { input: 2.5, output: 10 } };

/**
 * A real agent run on the real SDK: root span, tool spans; parallel steps start before any ends.
 * Times come from a clock that advances as a model would between steps (the SDK's own start
 * times are whole milliseconds, which cannot order calls made within one millisecond).
 */
function agent(tracer: Tracer, prompt: string, steps: Array<Call | Call[]>, sdkClock = false, says?: (step: number) => string): void {
  const at = (t: number): { startTime?: number } => (sdkClock ? {} : { startTime: t });
  tracer.startActiveSpan(`invoke_agent ${prompt}`, { attributes: { 'gen_ai.prompt.name': prompt }, ...at(clock) }, (root) => {
    for (const [n, step] of steps.entries()) {
      // the model call that asks for the step, reporting its usage (what loops cost)
      const model = tracer.startSpan('chat gpt-4o', {
        ...at(clock + 10),
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.usage.input_tokens': 1000 + 100 * n,
          'gen_ai.usage.output_tokens': 20 + n,
          // what the user said so far, the whole conversation on every model call
          ...(says ? { 'gen_ai.input.messages': JSON.stringify(Array.from({ length: n + 1 }, (_, k) => ({ role: 'user', parts: [{ type: 'text', content: says(k) }] }))) } : {}),
        },
      }, trace.setSpan(context.active(), root));
      model.end(sdkClock ? undefined : clock + 690);
      clock += 700; // the model thinks
      const calls = Array.isArray(step) ? step : [step];
      const spans = calls.map((c, i) =>
        tracer.startSpan(`execute_tool ${c.tool}`, {
          ...at(clock + i),
          attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': c.tool, 'gen_ai.tool.call.arguments': JSON.stringify(c.args) },
        }, trace.setSpan(context.active(), root)),
      );
      calls.forEach((c, i) => {
        const s = spans[i];
        if (!s) return;
        if (c.error) s.setStatus({ code: SpanStatusCode.ERROR, message: c.error });
        else s.setAttribute('gen_ai.tool.call.result', JSON.stringify(c.result));
      });
      clock += 40;
      for (const s of [...spans].reverse()) s.end(sdkClock ? undefined : clock++);
    }
    root.end(sdkClock ? undefined : clock + 5);
  });
}

it.each([
  ['model-paced times', false],
  // The SDK's own clock: starts in whole milliseconds, instant tools, several calls per millisecond.
  ['the SDK clock with instant tools', true],
])('scan of the exported OTLP/JSON reports exactly what the live processor reported (%s)', async (_label, sdkClock) => {
  const exporter = new InMemorySpanExporter();
  const live: LoopDetection[] = [];
  // observe mode: the agents run to the end, so both sides see every call
  const loops = new LoopDetectionSpanProcessor({ mode: 'observe', prices: PRICES, onLoop: (d) => live.push(d) });
  const provider = new BasicTracerProvider({ spanProcessors: [loops, new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('agreement');
  const same: Call = { tool: 'search', args: { q: 'refund' }, result: { hits: ['policy'] } };
  agent(tracer, 'repeat', Array.from({ length: 7 }, () => same), sdkClock);
  agent(tracer, 'cycle', Array.from({ length: 10 }, (_, i) => ({ tool: i % 2 ? 'read' : 'grep', args: { i: i % 2 }, result: 'same' })), sdkClock);
  agent(tracer, 'errors', Array.from({ length: 6 }, (_, i) => ({ tool: 'fetch', args: { u: 'x' }, error: `503 try again in ${i}s` })), sdkClock);
  agent(tracer, 'paraphrase', ['a b', 'b a', 'a  b c', 'c b a', 'a c', 'b c a'].map((q) => ({ tool: 'search', args: { q }, result: 'No results found.' })), sdkClock);
  if (!sdkClock) agent(tracer, 'parallel', [[same, same, { tool: 'x', args: {}, result: 1 }], [same, same], [same], [same], [same]]);
  agent(tracer, 'honest', Array.from({ length: 6 }, (_, i) => ({ tool: 'page', args: { n: i }, result: { items: [i] } })), sdkClock);
  // a re-check before every call the user asked for in new words: no loop; the same words every time: a loop
  agent(tracer, 'user-rechecks', Array.from({ length: 6 }, () => same), sdkClock, (k) => `Please search the refund policy again (${k + 1}): it changed today.`);
  agent(tracer, 'user-same-words', Array.from({ length: 6 }, () => same), sdkClock, () => 'Search again.');
  await provider.forceFlush();

  const body = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans()));
  const dir = mkdtempSync(join(tmpdir(), 'loopwatch-agree-'));
  writeFileSync(join(dir, 'export.json'), body);
  writeFileSync(join(dir, 'prices.json'), JSON.stringify({ prices: PRICES }));
  const stdout = new PassThrough();
  const chunks: string[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c.toString()));
  const code = await main(['scan', '--json', '--config', join(dir, 'prices.json'), join(dir, 'export.json')], { stdout, stderr: new PassThrough(), stdin: Readable.from([]), env: {}, interactive: false });
  const scanned = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as LoopDetection);

  const key = (d: LoopDetection): string =>
    [d.traceId, d.spanId, d.kind, d.rule, d.level, d.callIndex, d.count, d.fingerprint, d.promptName, d.evidenceStartTime, d.evidenceCalls, JSON.stringify(d.tokens), d.costUsd].join(' ');
  expect(live.length).toBeGreaterThanOrEqual(8);
  // what the repetitions cost: model calls between the first and the completing call of the evidence
  expect(live.every((d) => d.tokens !== undefined && d.tokens.input >= 1000 && d.costUsd !== undefined)).toBe(true);
  const repeat = live.find((d) => d.promptName === 'repeat' && d.level === 'critical');
  expect(repeat?.tokens).toEqual({ input: 1100 + 1200 + 1300 + 1400, output: 21 + 22 + 23 + 24 });
  expect(new Set(live.map((d) => d.kind))).toEqual(new Set(['repeat', 'cycle', 'error_pattern', 'no_progress']));
  expect(live.filter((d) => d.promptName === 'user-rechecks')).toEqual([]);
  expect(live.find((d) => d.promptName === 'user-same-words' && d.level === 'critical')).toMatchObject({ rule: 'identical_calls', callIndex: 5 });
  expect(scanned.map(key).sort()).toEqual(live.map(key).sort());
  expect(code).toBe(1);
  await provider.shutdown();
});

it('a tool call that hangs while the agent goes on: scan batches the later calls as the processor did, and finds their loop', async () => {
  // A call that starts after another call of its batch has ended belongs to a later step, live
  // (the processor sees the end first) and in scan, which replays the same start and end events
  // from the times. Before the one call sequence, scan put every call that overlapped the hung one
  // into its batch, where repeats are not repetitions, and reported nothing.
  const exporter = new InMemorySpanExporter();
  const live: LoopDetection[] = [];
  const loops = new LoopDetectionSpanProcessor({ mode: 'observe', onLoop: (d) => live.push(d) });
  const provider = new BasicTracerProvider({ spanProcessors: [loops, new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('agreement');
  const t0 = clock;
  const tool = (name: string, start: number, args: unknown, result: unknown): ReturnType<Tracer['startSpan']> => {
    const span = tracer.startSpan(`execute_tool ${name}`, { startTime: start, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.call.arguments': JSON.stringify(args) } });
    span.setAttribute('gen_ai.tool.call.result', JSON.stringify(result));
    return span;
  };
  tracer.startActiveSpan('invoke_agent hung', { attributes: { 'gen_ai.prompt.name': 'hung' }, startTime: t0 }, (root) => {
    const hung = tool('export_report', t0 + 10, { id: 7 }, 'done');
    for (let i = 1; i <= 6; i++) tool('search', t0 + 100 * i, { q: 'refund' }, { hits: [] }).end(t0 + 100 * i + 20);
    hung.end(t0 + 5_000);
    root.end(t0 + 5_010);
  });
  clock += 6_000;
  await provider.forceFlush();

  const body = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans()));
  const dir = mkdtempSync(join(tmpdir(), 'loopwatch-agree-'));
  writeFileSync(join(dir, 'export.json'), body);
  const stdout = new PassThrough();
  const chunks: string[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c.toString()));
  await main(['scan', '--json', join(dir, 'export.json')], { stdout, stderr: new PassThrough(), stdin: Readable.from([]), env: {}, interactive: false });
  const scanned = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as LoopDetection);
  const key = (d: LoopDetection): string => [d.traceId, d.spanId, d.rule, d.level, d.callIndex, d.count, d.fingerprint, d.evidenceCalls].join(' ');
  expect(live.map((d) => [d.toolName, d.level])).toContainEqual(['search', 'critical']);
  expect(scanned.map(key).sort()).toEqual(live.map(key).sort());
  await provider.shutdown();
});
