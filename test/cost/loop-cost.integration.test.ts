/**
 * What loops cost, live: the real AI SDK v6 (`ai.generateText.doGenerate` spans) driven by its
 * own mock model, which reports usage, through a
 * real SDK 2.x provider with loopwatch registered. Model call n reports 1000·n input tokens (half
 * of them from the prompt cache after the first) and 10·n output tokens, answered by
 * `mock-model-2026-01-01` (priced: USD 2 / 8 per million, cached input 0.5). AI SDK v7 with
 * `@ai-sdk/otel` (Node >= 22) is tested the same way in the matrix cell test/matrix/ai-sdk-v7.
 */
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { context as contextApi, trace as traceApi } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolLoopError, type LoopDetection, type TraceLoopSummary } from '../../src/index.js';
import { aiHarness, inRunSpan, loopEvents, type AiHarness } from '../processor/ai-sdk-harness.js';

const PRICES = { 'mock-model-2026-01-01': { input: 2, output: 8, cachedInput: 0.5 } };
const input = (n: number): number => 1000 * n;
const cached = (n: number): number => (n > 1 ? input(n) / 2 : 0);
const output = (n: number): number => 10 * n;
const usd = (n: number): number => ((input(n) - cached(n)) * 2 + cached(n) * 0.5 + output(n) * 8) / 1e6;
const sum = (from: number, to: number, f: (n: number) => number): number => Array.from({ length: to - from + 1 }, (_, k) => f(from + k)).reduce((a, b) => a + b, 0);

type Result = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
const step = (n: number): Result => ({
  content: [{ type: 'tool-call', toolCallId: `call_${n}`, toolName: 'lookup_order', input: JSON.stringify({ orderId: '1234' }) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: {
    inputTokens: { total: input(n), noCache: input(n) - cached(n), cacheRead: cached(n), cacheWrite: 0 },
    outputTokens: { total: output(n), text: output(n), reasoning: 0 },
  },
  response: { id: `r${n}`, modelId: 'mock-model-2026-01-01', timestamp: new Date() },
  warnings: [],
});

const lookupSpec = (executed: string[]) => ({
  description: 'Look an order up',
  inputSchema: z.object({ orderId: z.string() }),
  execute: async ({ orderId }: { orderId: string }) => (executed.push(orderId), { status: 'unknown order' }),
});
const lookupOrder = (executed: string[]) => ({ lookup_order: tool(lookupSpec(executed)) });

let h: AiHarness | undefined;
afterEach(async () => {
  await h?.shutdown();
  h = undefined;
});

/** The checks both AI SDK versions share: a loop stopped at call 5 of a run allowed 20 steps. */
function expectCosts(detections: LoopDetection[], summaries: TraceLoopSummary[], traceId: string): void {
  // warning at call 3: model calls 2 and 3 asked for the repetitions; critical at 5: calls 2..5
  const [warning, critical] = detections;
  expect(warning).toMatchObject({ level: 'warning', callIndex: 3, evidenceCalls: 3, tokens: { input: sum(2, 3, input), output: sum(2, 3, output) } });
  expect(warning?.costUsd).toBeCloseTo(sum(2, 3, usd), 9);
  expect(critical).toMatchObject({ level: 'critical', callIndex: 5, evidenceCalls: 5, tokens: { input: sum(2, 5, input), output: sum(2, 5, output) } });
  expect(critical?.costUsd).toBeCloseTo(sum(2, 5, usd), 9);
  // the run was stopped before model call 6: the loop's bill is calls 2..5, 4 and 5 after the warning
  expect(summaries).toHaveLength(1);
  const s = summaries[0];
  expect(s).toMatchObject({
    traceId,
    detections: 2,
    stopped: true,
    firstDetection: { level: 'warning', callIndex: 3 },
    loop: { modelCalls: 4, tokens: { input: sum(2, 5, input), output: sum(2, 5, output) } },
    afterDetection: { modelCalls: 2, tokens: { input: sum(4, 5, input), output: sum(4, 5, output) } },
  });
  expect(s?.loop?.costUsd).toBeCloseTo(sum(2, 5, usd), 9);
  expect(s?.afterDetection?.costUsd).toBeCloseTo(sum(4, 5, usd), 9);
}

describe('what a loop costs, with the real AI SDK', () => {
  it('v6: detections, loop.detected events and the trace summary carry the tokens and USD of the model calls between the repetitions', async () => {
    const summaries: TraceLoopSummary[] = [];
    const harness = (h = aiHarness({ prices: PRICES, onTraceEnd: (s) => void summaries.push(s) }));
    const executed: string[] = [];
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => step(++n) });
    const run = await inRunSpan(harness, 'support run', (signal) =>
      generateText({
        model,
        prompt: 'Where is order 1234?',
        tools: lookupOrder(executed),
        stopWhen: stepCountIs(20),
        abortSignal: signal,
        experimental_telemetry: { isEnabled: true, functionId: 'support-bot', metadata: { promptName: 'order-status-v2' }, tracer: harness.tracer },
      }),
    );
    expect(run.error).toBeInstanceOf(ToolLoopError);
    expect(n).toBe(5);
    expectCosts(harness.detections, summaries, run.traceId);
    expect(summaries[0]?.promptName).toBe('order-status-v2');

    const spans = harness.exporter.getFinishedSpans();
    const critical = spans.flatMap(loopEvents).find((e) => e['loop.level'] === 'critical');
    expect(critical).toMatchObject({ 'loop.tokens.input': sum(2, 5, input), 'loop.tokens.output': sum(2, 5, output) });
    expect(critical?.['loop.cost.usd']).toBeCloseTo(sum(2, 5, usd), 9);
    // the summary event on the run's root span, for the collector's sum connector
    const root = spans.find((s) => s.name === 'support run');
    const summary = root?.events.find((e) => e.name === 'loop.summary')?.attributes;
    expect(summary).toMatchObject({ 'loop.detections': 2, 'loop.stopped': true, 'gen_ai.prompt.name': 'order-status-v2', 'loop.model_calls': 4, 'loop.tokens.input': sum(2, 5, input), 'loop.after_detection.tokens.input': sum(4, 5, input) });
    expect(spans.filter((s) => s.name === 'ai.generateText.doGenerate').map((s) => s.attributes['ai.usage.inputTokens'])).toEqual([1, 2, 3, 4, 5].map(input));
  });

  it('without prices: tokens, no USD; without usage: neither', async () => {
    const withTokens = (h = aiHarness());
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => step(++n) });
    await inRunSpan(withTokens, 'run', (signal) =>
      generateText({ model, prompt: 'x', tools: lookupOrder([]), stopWhen: stepCountIs(20), abortSignal: signal, experimental_telemetry: { isEnabled: true, tracer: withTokens.tracer } }),
    );
    expect(withTokens.detections.map((d) => [d.tokens?.input, 'costUsd' in d])).toEqual([
      [sum(2, 3, input), false],
      [sum(2, 5, input), false],
    ]);
    await withTokens.shutdown();

    const summaries: TraceLoopSummary[] = [];
    const noUsage = (h = aiHarness({ prices: PRICES, onTraceEnd: (s) => void summaries.push(s) }));
    // the model call spans are there, but the telemetry records no usage (a provider that reports none)
    let m = 0;
    const bare = new MockLanguageModelV3({ doGenerate: async () => ({ ...step(++m), usage: { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } } }) });
    await inRunSpan(noUsage, 'run', (signal) =>
      generateText({ model: bare, prompt: 'x', tools: lookupOrder([]), stopWhen: stepCountIs(20), abortSignal: signal, experimental_telemetry: { isEnabled: true, tracer: noUsage.tracer } }),
    );
    expect(noUsage.detections.map((d) => [d.level, 'tokens' in d, 'costUsd' in d])).toEqual([
      ['warning', false, false],
      ['critical', false, false],
    ]);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).not.toHaveProperty('loop');
    const events = noUsage.exporter.getFinishedSpans().flatMap(loopEvents);
    expect(events.some((e) => 'loop.tokens.input' in e)).toBe(false);
  });
});

describe('the window of a detection, live', () => {
  /** A tracer whose spans are started and ended at given times (ms), in the order written. */
  function timedRun(onTraceEnd?: (s: TraceLoopSummary) => unknown) {
    const harness = (h = aiHarness({ mode: 'observe', ...(onTraceEnd ? { onTraceEnd } : {}) }));
    const t0 = Date.parse('2026-11-21T10:00:00Z');
    const root = harness.tracer.startSpan('invoke_agent support', { startTime: t0, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': 'support-v2' } });
    const ctx = traceApi.setSpan(contextApi.active(), root);
    const model = (start: number, end: number, inputTokens: number): void =>
      harness.tracer
        .startSpan('chat gpt-4o', { startTime: t0 + start, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': inputTokens, 'gen_ai.usage.output_tokens': 1 } }, ctx)
        .end(t0 + end);
    const call = (start: number, end: number): void =>
      harness.tracer
        .startSpan('execute_tool search', { startTime: t0 + start, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":"x"}', 'gen_ai.tool.call.result': '[]' } }, ctx)
        .end(t0 + end);
    return { harness, model, call, endRoot: (at: number) => root.end(t0 + at) };
  }

  it('counts the model calls that started after the end of the first call and ended before the end of the completing one, nothing else', () => {
    const summaries: TraceLoopSummary[] = [];
    const { harness, model, call, endRoot } = timedRun((s) => void summaries.push(s));
    model(0, 90, 1); //              asks for call 1: before the window
    call(100, 110); //               call 1, the first of the evidence
    model(50, 150, 10); //           a stream that started before call 1 ended: not in the window
    model(111, 190, 100); //         asks for call 2
    call(200, 210);
    model(211, 290, 1_000); //       asks for call 3, which completes the warning
    call(300, 310);
    model(311, 390, 10_000); //      after the warning
    call(400, 410);
    model(411, 490, 100_000);
    call(500, 510); //               call 5: critical
    model(511, 590, 1_000_000); //   after the critical detection: in the bill, in no window
    endRoot(600);
    expect(harness.detections.map((d) => [d.level, d.callIndex, d.tokens?.input])).toEqual([
      ['warning', 3, 1_100],
      ['critical', 5, 111_100],
    ]);
    expect(summaries[0]).toMatchObject({ stopped: false, loop: { modelCalls: 5, tokens: { input: 1_111_100 } }, afterDetection: { modelCalls: 3, tokens: { input: 1_110_000 } } });
  });

  it('a throwing or rejecting onTraceEnd is contained: the app and the export go on', async () => {
    const { harness, model, call, endRoot } = timedRun(() => {
      throw new Error('callback down');
    });
    for (let i = 0; i < 5; i++) {
      model(i * 100, i * 100 + 50, 10);
      call(i * 100 + 60, i * 100 + 70);
    }
    expect(() => endRoot(600)).not.toThrow();
    const rejecting = timedRun(() => Promise.reject(new Error('async down')));
    for (let i = 0; i < 5; i++) rejecting.call(i * 100 + 60, i * 100 + 70);
    expect(() => rejecting.endRoot(600)).not.toThrow();
    await rejecting.harness.provider.forceFlush();
    const root = rejecting.harness.exporter.getFinishedSpans().find((s) => s.name === 'invoke_agent support');
    expect(root?.events.map((e) => e.name)).toEqual(['loop.summary']);
    await harness.shutdown();
  });
});
